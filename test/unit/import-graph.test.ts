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
 * The shape of the code, as docs/architecture.md's folder table says it: arrows point one way, from the
 * front doors down to the rules, and no modules import each other in a loop.
 *
 *   front doors (src/bot*.ts, src/cli.ts, src/cliRedis.ts, src/main.ts, src/slack/, src/terminal/)
 *     -> commands (commands/)
 *       -> services (src/preview/, src/audit/, src/workflow/, src/watch/)
 *         -> clients and engines (src/rabbit/, src/patterns/, src/definitions/)
 *           -> rules (src/policy/)
 *             -> the process's own pieces (the other modules of src/ itself, src/text/)
 *
 * A module may import its own layer or a lower one. Within a layer: the policy rules import
 * nothing but policy rules; the workflow and the watcher do not import each other (the
 * composition root hands each what it needs of the other); the preview service calls no other
 * service. Type-only imports count: they tie two modules as surely as a value import.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const LAYERS: readonly { readonly name: string; readonly holds: (m: string) => boolean }[] = [
  {
    name: 'the process’s own pieces',
    holds: (m) => /^src\/[^/]+\.ts$/.test(m) || m.startsWith('src/text/'),
  },
  { name: 'rules', holds: (m) => m.startsWith('src/policy/') },
  { name: 'clients and engines', holds: (m) => /^src\/(rabbit|patterns|definitions)\//.test(m) },
  { name: 'services', holds: (m) => /^src\/(preview|audit|workflow|watch|plan)\//.test(m) },
  { name: 'commands', holds: (m) => m.startsWith('commands/') },
  {
    name: 'front doors',
    holds: (m) =>
      /^src\/(bot|botClients|botChangeRequests|cli|cliRedis|main)\.ts$/.test(m) ||
      /^src\/(slack|terminal)\//.test(m),
  },
];

/** The highest layer that holds the module (a front door at the top of src/ is a front door). */
function layerOf(module: string): number {
  for (let i = LAYERS.length - 1; i >= 0; i--) if (LAYERS[i]?.holds(module)) return i;
  return -1;
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

describe('the import graph of src/ and commands/', () => {
  const graph = readImportGraph(ROOT, ['src', 'commands']);

  it('is read whole: every module, with the imports it has', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/workflow/applyOne.ts')).toContain('src/preview/preview.ts');
    expect(graph.get('src/cli.ts')).toContain('commands/preview.ts'); // an import()
    expect(graph.get('src/preview/preview.ts')).toContain('src/policy/problem.ts'); // a type import
  });

  it('puts every module in a layer', () => {
    expect([...graph.keys()].filter((m) => layerOf(m) < 0)).toEqual([]);
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
    ['src/policy/b.ts', ['src/policy/c.ts', 'src/errors.ts']],
    ['src/policy/c.ts', ['src/policy/a.ts']],
    ['src/errors.ts', []],
    ['src/workflow/w.ts', ['src/watch/x.ts', 'src/policy/a.ts']],
    ['src/watch/x.ts', ['commands/which.ts']],
    ['commands/which.ts', ['commands/which.ts']],
  ]);

  it('finds each cycle, a module that imports itself included', () => {
    expect(cycles(graph)).toEqual([
      'commands/which.ts -> commands/which.ts',
      'src/policy/a.ts -> src/policy/b.ts -> src/policy/c.ts -> src/policy/a.ts',
    ]);
  });

  it('finds an arrow pointing up and an arrow a rule forbids', () => {
    expect(arrowsUp(graph)).toEqual(['src/watch/x.ts (services) -> commands/which.ts (commands)']);
    expect(forbiddenArrows(graph, RULES)).toEqual([
      'src/policy/b.ts -> src/errors.ts (the policy rules import only policy rules)',
      'src/workflow/w.ts -> src/watch/x.ts (the workflow and the watcher do not import each other)',
    ]);
  });
});
