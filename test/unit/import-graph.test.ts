import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  cycles,
  type ForbiddenArrow,
  forbiddenArrows,
  type ImportGraph,
  readImportGraph,
} from '../support/importGraph.ts';

/**
 * The shape of the code, as docs/architecture.md's folder table says it, stated by folder: arrows
 * point one way, from the front doors down to the ground, no modules import each other in a loop,
 * and no folder is entered except through its entrance.
 *
 *   front doors (src/bot/, src/terminal/, src/slack/)
 *     -> commands (src/commands/)
 *       -> services (src/preview/, src/audit/, src/workflow/, src/watch/, src/plan/)
 *         -> clients and engines (src/rabbit/, src/patterns/, src/definitions/)
 *           -> rules (src/policy/, src/links/)
 *             -> the ground (src/core/, src/log/, src/config/, src/redis/, src/text/)
 *
 * A module may import its own layer or a lower one. Within a layer: the policy rules import
 * nothing but policy rules; the workflow and the watcher do not import each other (the
 * composition root hands each what it needs of the other); the preview service calls no other
 * service. Type-only imports count: they tie two modules as surely as a value import.
 *
 * Entrances: a module imports a module of another folder of src/ only through an `index.ts` of
 * that folder (its own, or a sub-folder's: the terminal's bundle loads a command, or the Redis
 * half of the workflow, only when asked for, and an index brings all it names into the bundle's
 * start). Inside a folder, modules import each other directly. No module lies loose in src/.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const LAYERS: readonly { readonly name: string; readonly folders: readonly string[] }[] = [
  { name: 'the ground', folders: ['core', 'log', 'config', 'redis', 'text'] },
  { name: 'rules', folders: ['policy', 'links'] },
  { name: 'clients and engines', folders: ['rabbit', 'patterns', 'definitions'] },
  { name: 'services', folders: ['preview', 'audit', 'workflow', 'watch', 'plan'] },
  { name: 'commands', folders: ['commands'] },
  { name: 'front doors', folders: ['bot', 'terminal', 'slack'] },
];

/** The folder of src/ a module lies in (`src/workflow/apply/queue.ts` -> `workflow`), or '' if loose. */
function folderOf(module: string): string {
  return /^src\/([^/]+)\//.exec(module)?.[1] ?? '';
}

function layerOf(module: string): number {
  return LAYERS.findIndex((l) => l.folders.includes(folderOf(module)));
}

const under = (folder: string) => (m: string) => m.startsWith(folder);

/** The rules within a layer. */
const RULES: readonly ForbiddenArrow[] = [
  {
    why: 'the policy rules import only policy rules',
    from: under('src/policy/'),
    to: (m) => !m.startsWith('src/policy/'),
  },
  {
    why: 'the workflow and the watcher do not import each other',
    from: under('src/workflow/'),
    to: under('src/watch/'),
  },
  {
    why: 'the workflow and the watcher do not import each other',
    from: under('src/watch/'),
    to: under('src/workflow/'),
  },
  {
    why: 'the preview service calls no other service',
    from: under('src/preview/'),
    to: (m) => /^src\/(audit|workflow|watch)\//.test(m),
  },
];

/** Every import of a module in a higher layer than the importer's. */
function arrowsUp(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets)
      if (layerOf(to) > layerOf(from))
        out.push(`${from} (${LAYERS[layerOf(from)]?.name}) -> ${to} (${LAYERS[layerOf(to)]?.name})`);
  return out.sort();
}

/** Every import of another folder's module that is not one of its entrances (an `index.ts`). */
function entrancesMissed(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets)
      if (folderOf(to) !== folderOf(from) && !to.endsWith('/index.ts'))
        out.push(`${from} -> ${to} (enter src/${folderOf(to)}/ through an index.ts)`);
  return out.sort();
}

describe('the import graph of src/', () => {
  const graph = readImportGraph(ROOT, ['src']);

  it('is read whole: every module, with the imports it has', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/workflow/apply/applyOne.ts')).toContain('src/preview/index.ts');
    expect(graph.get('src/terminal/cli.ts')).toContain('src/commands/preview/index.ts'); // an import()
    expect(graph.get('src/preview/preview.ts')).toContain('src/policy/validate/index.ts'); // a type import
  });

  it('puts every module in a folder, and every folder in a layer', () => {
    expect([...graph.keys()].filter((m) => layerOf(m) < 0)).toEqual([]);
  });

  it('enters every folder through its entrance', () => {
    expect(entrancesMissed(graph)).toEqual([]);
  });

  it('has no cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('has no arrow pointing up', () => {
    expect(arrowsUp(graph)).toEqual([]);
  });

  it('keeps the rules within a layer', () => {
    expect(forbiddenArrows(graph, RULES)).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const graph: ImportGraph = new Map([
    ['src/policy/a.ts', ['src/policy/b.ts']],
    ['src/policy/b.ts', ['src/policy/c.ts', 'src/core/errors.ts']],
    ['src/policy/c.ts', ['src/policy/a.ts']],
    ['src/core/errors.ts', []],
    ['src/workflow/w.ts', ['src/watch/x.ts', 'src/policy/a.ts']],
    ['src/watch/x.ts', ['src/commands/which/which.ts']],
    ['src/commands/which/which.ts', ['src/commands/which/which.ts']],
    ['src/bot/y.ts', ['src/workflow/index.ts', 'src/workflow/apply/index.ts', 'src/workflow/apply/queue.ts']],
    ['src/workflow/index.ts', ['src/workflow/apply/queue.ts']],
    ['src/loose.ts', []],
  ]);

  it('finds each cycle, a module that imports itself included', () => {
    expect(cycles(graph)).toEqual([
      'src/commands/which/which.ts -> src/commands/which/which.ts',
      'src/policy/a.ts -> src/policy/b.ts -> src/policy/c.ts -> src/policy/a.ts',
    ]);
  });

  it('finds a folder entered past its entrance, and a module lying loose', () => {
    expect(entrancesMissed(graph)).toEqual([
      'src/bot/y.ts -> src/workflow/apply/queue.ts (enter src/workflow/ through an index.ts)',
      'src/policy/b.ts -> src/core/errors.ts (enter src/core/ through an index.ts)',
      'src/watch/x.ts -> src/commands/which/which.ts (enter src/commands/ through an index.ts)',
      'src/workflow/w.ts -> src/policy/a.ts (enter src/policy/ through an index.ts)',
      'src/workflow/w.ts -> src/watch/x.ts (enter src/watch/ through an index.ts)',
    ]);
    expect([...graph.keys()].filter((m) => layerOf(m) < 0)).toEqual(['src/loose.ts']);
  });

  it('finds an arrow pointing up and an arrow a rule forbids', () => {
    expect(arrowsUp(graph)).toEqual(['src/watch/x.ts (services) -> src/commands/which/which.ts (commands)']);
    expect(forbiddenArrows(graph, RULES)).toEqual([
      'src/policy/b.ts -> src/core/errors.ts (the policy rules import only policy rules)',
      'src/workflow/w.ts -> src/watch/x.ts (the workflow and the watcher do not import each other)',
    ]);
  });
});
