import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/**
 * The import graph of the project's own modules, read with TypeScript's own pre-processor
 * (static imports, `export … from`, `import()`, type-only imports too: a type import ties two
 * modules as surely as a value import), and the checks the layering test makes on it. Paths are
 * relative to the repository root, with `/`.
 */

export type ImportGraph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(root, path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every module under `dirs` and the modules of the same tree it imports (packages left out). */
export function readImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of dirs.flatMap((d) => sourceFiles(root, d))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) =>
        relative(root, normalize(join(root, dirname(file), spec)))
          .split('\\')
          .join('/'),
      );
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every cycle, each as the path that closes it (`a -> b -> a`); one per strongly connected set. */
export function cycles(graph: ImportGraph): string[] {
  // Tarjan's strongly connected components; a component of two or more modules (or one that
  // imports itself) is a cycle, shown as one loop through it.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.map((component) => loopThrough(graph, new Set(component)));
}

/** One loop inside a strongly connected set, from its first module (sorted) back to it. */
function loopThrough(graph: ImportGraph, members: ReadonlySet<string>): string {
  const start = [...members].sort()[0] as string;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(previous.get(path[0] as string) as string);
        return [...path, start].join(' -> ');
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return start;
}

/** A rule about arrows: modules `from` matches may not import modules `to` matches. */
export interface ForbiddenArrow {
  readonly why: string;
  readonly from: (module: string) => boolean;
  readonly to: (module: string) => boolean;
}

/** Every import that breaks one of `rules`, as `from -> to (why)`. */
export function forbiddenArrows(graph: ImportGraph, rules: readonly ForbiddenArrow[]): string[] {
  const out: string[] = [];
  for (const [from, targets] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    for (const to of targets) {
      for (const rule of rules)
        if (rule.from(from) && rule.to(to)) out.push(`${from} -> ${to} (${rule.why})`);
    }
  }
  return out;
}
