/**
 * The request's life is one table (src/workflow/moves.ts): docs/change-requests.md says the same
 * table, and no code of src/ moves a request's state but by a move of it. What the store makes of
 * each move on Redis: test/integration/request-moves.test.ts.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { leavesFrom, MOVES, type Move, type MoveName, moveNamed } from '../../src/workflow/moves.ts';
import { OPEN_STATES, REQUEST_STATES } from '../../src/workflow/types.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const DEADLINE_WORDS: Record<Move['deadline'], string> = {
  refuse: 'refused past it: the request expires instead',
  'only-past': 'only past it',
  none: 'not asked',
};

/** The rows of the docs' table: move name -> (from, to, deadline), as written. */
async function documented(): Promise<Record<string, Move>> {
  const text = await readFile(join(ROOT, 'docs/change-requests.md'), 'utf8');
  const section = text.slice(text.indexOf("## A request's life"), text.indexOf('## Time-boxed changes'));
  const rows: Record<string, Move> = {};
  for (const m of section.matchAll(/^\| `(\w+)` +\| ([^|]+?) +\| (\w+) +\| ([^|]+?) +\|$/gm)) {
    const [, name = '', from = '', to = '', deadline = ''] = m;
    const rule = Object.entries(DEADLINE_WORDS).find(([, words]) => words === deadline)?.[0];
    rows[name] = {
      from: from.split(', ') as Move['from'],
      to: to as Move['to'],
      deadline: rule as Move['deadline'],
    };
  }
  return rows;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (e.name.endsWith('.ts') || e.name.endsWith('.lua')) out.push(path);
  }
  return out;
}

/** The arrows of the drawing in moves.ts's header: "from --name--> to" edges, one per from-state and name. */
async function drawn(): Promise<string[]> {
  const text = await readFile(join(ROOT, 'src/workflow/moves.ts'), 'utf8');
  const edges: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('-->')) continue;
    for (const segment of line.replace(/^ \*\s+/, '').split(/ {2,}/)) {
      const parts = segment.split(/\s*--([\w, ]+?)-->\s*/);
      for (let i = 0; i + 2 < parts.length; i += 2) {
        for (const from of (parts[i] ?? '').split(', '))
          for (const name of (parts[i + 1] ?? '').split(', '))
            edges.push(`${from} --${name}--> ${parts[i + 2]}`);
      }
    }
  }
  return edges.sort();
}

describe('the moves of a change request', () => {
  it('are the table docs/change-requests.md shows, row for row', async () => {
    expect(await documented()).toEqual(MOVES);
  });

  it('are what the drawing in moves.ts shows, arrow for arrow', async () => {
    const table = Object.entries(MOVES).flatMap(([name, m]) =>
      m.from.map((f) => `${f} --${name}--> ${m.to}`),
    );
    expect(await drawn()).toEqual(table.sort());
  });

  it('leave from and go to request states only, and every state but pending is reached by one', () => {
    for (const m of Object.values(MOVES)) {
      expect(m.from.length).toBeGreaterThan(0);
      for (const s of [...m.from, m.to]) expect(REQUEST_STATES).toContain(s);
    }
    const reached = new Set<string>(Object.values(MOVES).map((m) => m.to));
    expect(REQUEST_STATES.filter((s) => !reached.has(s))).toEqual(['pending']);
  });

  it('a request is open (listed by requests, kept in the open set) exactly while a move may still leave its state', () => {
    const leftFrom = new Set<string>(Object.values(MOVES).flatMap((m) => m.from));
    expect(REQUEST_STATES.filter((s) => leftFrom.has(s))).toEqual(OPEN_STATES);
  });

  it('leavesFrom answers from the table, for every move and state', () => {
    for (const [name, m] of Object.entries(MOVES) as [MoveName, Move][])
      for (const state of REQUEST_STATES) expect(leavesFrom(name, state)).toBe(m.from.includes(state));
    expect(leavesFrom('refuse', 'approved') && leavesFrom('refuse', 'applying')).toBe(true);
    expect(leavesFrom('start', 'applying')).toBe(false);
  });

  it('are named: a name not in the table is no move', () => {
    expect(moveNamed('start')).toBe(MOVES.start);
    expect(moveNamed('teleport')).toBeUndefined();
    expect(moveNamed('toString')).toBeUndefined();
    expect(moveNamed('__proto__')).toBeUndefined();
  });

  it('are the only way src/ moves a state: no caller gives a (from, to), no script writes a state of its own', async () => {
    const found: string[] = [];
    const files = await sourceFiles('src');
    for (const file of files.filter((f) => f !== join('src', 'workflow', 'moves.ts'))) {
      const text = await readFile(join(ROOT, file), 'utf8');
      // A caller's own move, as they were before the table: `from: [...]` beside `to: '…'`.
      for (const m of text.matchAll(/\bfrom: \[[^\]]*\],\s*to: /g)) found.push(`${file}: ${m[0]}`);
      // A Lua script writing a literal request state: `'state', 'applied'` (the table's are generated in).
      for (const m of text.matchAll(/'state', '([a-z]+)'/g)) {
        if ((REQUEST_STATES as readonly string[]).includes(m[1] ?? '')) found.push(`${file}: ${m[0]}`);
      }
    }
    expect(found).toEqual([]);
  });
});
