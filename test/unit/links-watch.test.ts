/**
 * The links watch's bursts (src/watch/linksBurst.ts), pure: over any sequence of readings, a link
 * is told down once per spell of being down and back once when it ends; a spell is not broken by a
 * reading that could not see it (`unknown`); links that all run are never told. The second
 * reading (`confirmed`) keeps only what is down in both. The post (src/slack/views/linksWatch.ts),
 * the records as history shows them, and the metric (`rmq_links{env,state}`). The watch itself
 * (src/watch/links.ts) on a store in memory: a reading that fails tells nothing; a stop while it
 * waits to read again; a node change during a reading read after it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuditRecordSchema, isChange } from '../../src/audit/types.ts';
import { createMetrics } from '../../src/bot/metrics/metrics.ts';
import type { Environment } from '../../src/config/index.ts';
import { countLinks, type LinkRow, type LinkState, linkKey } from '../../src/links/index.ts';
import { createLogger } from '../../src/log/log.ts';
import { historyView } from '../../src/slack/views/history.ts';
import { linksWatchView } from '../../src/slack/views/linksWatch.ts';
import { historyText } from '../../src/terminal/history.ts';
import { LinksWatch, type LinksWent, linksEntries } from '../../src/watch/links.ts';
import { confirmed, type DownLink, linksMoved, stuckAcross } from '../../src/watch/linksBurst.ts';
import type { LinksStore } from '../../src/watch/linksStore.ts';
import { waitFor } from '../support/broker.ts';

type Seen = LinkState | 'absent';
const DOWN = new Set<Seen>(['missing', 'stopped', 'stuck']);

const KINDS = ['exchange', 'queue', 'shovel'] as const;
const identity = (i: number) => ({
  kind: KINDS[i % 3] ?? 'exchange',
  vhost: `v${i % 2}`,
  object: `o${i}`,
  upstream: i % 3 === 2 ? null : 'up',
});

function row(i: number, state: LinkState): LinkRow {
  return {
    ...identity(i),
    policy: i % 3 === 2 ? null : 'fed',
    expected: true,
    state,
    node: 'rabbit@a',
    reason: DOWN.has(state) ? 'missing, no reason reported' : null,
    status: null,
    next: DOWN.has(state) ? 'Re-apply policy "fed".' : null,
  };
}

const rowsOf = (states: readonly Seen[]): LinkRow[] =>
  states.flatMap((s, i) => (s === 'absent' ? [] : [row(i, s)]));

const at = (n: number) => new Date(Date.UTC(2026, 11, 5, 1, 0, n));

/** Readings: for each of up to 6 links, its state at each of up to 12 readings. */
const readings = fc
  .integer({ min: 1, max: 6 })
  .chain((links) =>
    fc.array(
      fc.array(
        fc.constantFrom<Seen>('running', 'starting', 'missing', 'stopped', 'stuck', 'unknown', 'absent'),
        { minLength: links, maxLength: links },
      ),
      { minLength: 1, maxLength: 12 },
    ),
  );

describe('stuckAcross: a link that tries again and again', () => {
  it('is stuck once it has not run for over a minute across readings, whatever each try reports; running or gone, forgotten', () => {
    const since = new Map<string, number>();
    const t0 = at(0).getTime();
    const states = (rows: LinkRow[]) => rows.map((r) => r.state);
    // Each try: starting (a new timestamp, so classify never says stuck), then a moment of error.
    expect(states(stuckAcross([row(0, 'starting')], since, t0))).toEqual(['starting']);
    expect(states(stuckAcross([row(0, 'stopped')], since, t0 + 59_000))).toEqual(['stopped']);
    expect(states(stuckAcross([row(0, 'starting')], since, t0 + 60_000))).toEqual(['starting']);
    const [stuck] = stuckAcross([row(0, 'starting')], since, t0 + 61_000);
    expect(stuck).toMatchObject({
      state: 'stuck',
      reason: `starting again at each try, not running since ${at(0).toISOString()}`,
    });
    expect(stuck?.next).toMatch(/^Check reachability, credentials and TLS/);
    // It runs: forgotten; starting again later starts a new minute.
    expect(states(stuckAcross([row(0, 'running')], since, t0 + 62_000))).toEqual(['running']);
    expect(states(stuckAcross([row(0, 'starting')], since, t0 + 63_000))).toEqual(['starting']);
    // No row names it: forgotten too.
    stuckAcross([], since, t0 + 64_000);
    expect(states(stuckAcross([row(0, 'starting')], since, t0 + 200_000))).toEqual(['starting']);
    // Not knowing (unknown) neither starts nor ends the minute.
    expect(states(stuckAcross([row(0, 'unknown')], since, t0 + 230_000))).toEqual(['unknown']);
    expect(states(stuckAcross([row(0, 'starting')], since, t0 + 261_000))).toEqual(['stuck']);
  });
});

describe('linksMoved over a sequence of readings', () => {
  it('tells each link down once per spell down and back once when the spell ends', () => {
    fc.assert(
      fc.property(readings, (seq) => {
        let recorded: ReadonlyMap<string, DownLink> = new Map();
        const told = new Map<string, string[]>();
        const expected = new Map<string, string[]>();
        const isDown = new Map<string, boolean>();
        seq.forEach((states, n) => {
          const moved = linksMoved(recorded, rowsOf(states), at(n));
          for (const l of moved.down) told.set(linkKey(l), [...(told.get(linkKey(l)) ?? []), `down@${n}`]);
          for (const l of moved.back) told.set(linkKey(l), [...(told.get(linkKey(l)) ?? []), `back@${n}`]);
          // The model: down when a down state is read; back when running or absent; starting and unknown keep.
          states.forEach((s, i) => {
            const k = linkKey(identity(i));
            const was = isDown.get(k) ?? false;
            const now = DOWN.has(s) ? true : s === 'running' || s === 'absent' ? false : was;
            if (now !== was) expected.set(k, [...(expected.get(k) ?? []), `${now ? 'down' : 'back'}@${n}`]);
            isDown.set(k, now);
          });
          // What is recorded is exactly what is down, each with the reading its spell began at.
          expect(new Set(moved.next.keys())).toEqual(
            new Set([...isDown].filter(([, d]) => d).map(([k]) => k)),
          );
          for (const [k, l] of moved.next) {
            const began = (expected.get(k) ?? []).filter((e) => e.startsWith('down@')).at(-1);
            expect(l.since).toBe(at(Number(began?.slice(5))).toISOString());
          }
          recorded = moved.next;
        });
        expect(told).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('tells nothing while every link runs, whatever node it moves to', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom<Seen>('running', 'starting'), { minLength: 3, maxLength: 3 }), {
          minLength: 1,
          maxLength: 8,
        }),
        (seq) => {
          let recorded: ReadonlyMap<string, DownLink> = new Map();
          for (const [n, states] of seq.entries()) {
            const moved = linksMoved(recorded, rowsOf(states), at(n));
            expect([moved.down, moved.back, moved.next.size]).toEqual([[], [], 0]);
            recorded = moved.next;
          }
        },
      ),
    );
  });

  it('counts a link reported twice as running when one report runs (moved to another node)', () => {
    const twice = [row(0, 'stopped'), { ...row(0, 'running'), node: 'rabbit@b' }];
    expect(linksMoved(new Map(), twice, at(0)).down).toEqual([]);
  });

  it('a link starting is neither down nor back: it is back once it runs', () => {
    const first = linksMoved(new Map(), [row(0, 'missing')], at(0));
    const starting = linksMoved(first.next, [row(0, 'starting')], at(1));
    expect([starting.down, starting.back, [...starting.next.keys()]]).toEqual([
      [],
      [],
      [...first.next.keys()],
    ]);
    expect(linksMoved(starting.next, [row(0, 'running')], at(2)).back.map((l) => l.state)).toEqual([
      'running',
    ]);
  });

  it('leaves unexpected links and links no policy asks for out', () => {
    const rows = [{ ...row(0, 'unexpected'), expected: false }];
    expect(linksMoved(new Map(), rows, at(0)).next.size).toBe(0);
  });

  it('tells a link whose policy went as back, gone', () => {
    const first = linksMoved(new Map(), [row(0, 'missing')], at(0));
    const second = linksMoved(first.next, [], at(1));
    expect(second.back.map((l) => [l.object, l.state, l.since])).toEqual([
      ['o0', 'gone', at(0).toISOString()],
    ]);
  });
});

describe('confirmed: the second reading', () => {
  it('keeps only what is down in both readings', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Seen>('running', 'missing', 'stopped', 'absent'), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.array(fc.constantFrom<Seen>('running', 'missing', 'stopped', 'absent'), {
          minLength: 1,
          maxLength: 6,
        }),
        (a, b) => {
          const recorded = new Map<string, DownLink>();
          const both = confirmed(
            linksMoved(recorded, rowsOf(a), at(0)),
            linksMoved(recorded, rowsOf(b), at(1)),
            recorded,
          );
          const downIn = (s: readonly Seen[]) =>
            new Set(s.flatMap((x, i) => (DOWN.has(x) ? [linkKey(identity(i))] : [])));
          const [da, db] = [downIn(a), downIn(b)];
          expect(new Set(both.down.map(linkKey))).toEqual(new Set([...da].filter((k) => db.has(k))));
          expect(new Set(both.next.keys())).toEqual(new Set(both.down.map(linkKey)));
        },
      ),
    );
  });

  it('a link missing for an instant (moving to another node) is not down', () => {
    const recorded = new Map<string, DownLink>();
    const both = confirmed(
      linksMoved(recorded, [row(0, 'missing')], at(0)),
      linksMoved(recorded, [row(0, 'starting')], at(1)),
      recorded,
    );
    expect([both.down, both.next.size]).toEqual([[], 0]);
  });
});

describe('the post and the records of a burst', () => {
  const burst = (went: 'down' | 'back') => {
    const moved = linksMoved(
      new Map(),
      [row(0, 'missing'), row(1, 'stopped'), { ...row(3, 'missing'), object: 'x*`<@U1>`' }],
      at(0),
    );
    const links = went === 'down' ? moved.down : linksMoved(moved.next, [], at(1)).back;
    return linksEntries({
      env: 'prod',
      went,
      source: 'nodes',
      nodes: { down: ['rabbit@a'], up: [] },
      links,
      stillDown: went === 'down' ? 3 : 0,
      at: at(2),
    });
  };

  it('records one entry per vhost, each link with its next step', () => {
    const entries = burst('down');
    expect(entries.map((e) => [e.action, e.vhost, e.went, e.detectedBy, e.links.length])).toEqual([
      ['links', 'v0', 'down', 'nodes', 1],
      ['links', 'v1', 'down', 'nodes', 2],
    ]);
    expect(entries[0]?.links[0]?.next).toBe('Re-apply policy "fed".');
  });

  it('posts one message: how many, which node went, each link with its next step, escaped', () => {
    const view = linksWatchView(burst('down'));
    const text = JSON.stringify(view.blocks);
    expect(view.text).toBe('3 links that should run are down in 2 vhosts (prod)');
    expect(text).toContain('node `rabbit@a` went down');
    expect(text).toContain('Re-apply policy');
    expect(text).not.toContain('<@U1>');
    // Each policy whose re-creation is the step, once per vhost: a button that files it.
    const buttons = (view.blocks as { type: string; elements?: { action_id: string; value: string }[] }[])
      .filter((b) => b.type === 'actions')
      .flatMap((b) => b.elements ?? []);
    expect(buttons.map((b) => [b.action_id, JSON.parse(b.value)])).toEqual([
      ['rmq_links_recreate', { env: 'prod', vhost: 'v0', policy: 'fed' }],
      ['rmq_links_recreate', { env: 'prod', vhost: 'v1', policy: 'fed' }],
    ]);
    const back = linksWatchView(burst('back'));
    expect(back.text).toBe('3 links back in 2 vhosts (prod)');
    expect(back.blocks.some((b) => b.type === 'actions')).toBe(false);
  });

  it('are audit records of their own (no policy), read back and shown by history on both surfaces', () => {
    const records = burst('down').map((e) => AuditRecordSchema.parse({ ...e, prev: '', hash: 'h' }));
    expect(records.map((r) => [r.action, isChange(r)])).toEqual([
      ['links', false],
      ['links', false],
    ]);
    const text = historyText({ entries: records, unreadable: 0 });
    expect(text).toContain('links down in prod/"v1"');
    expect(text).toContain('missing exchange "o0" <- upstream "up" on "rabbit@a"');
    expect(text).toContain('rabbit@a');
    const slack = JSON.stringify(historyView({ entries: records, unreadable: 0 }).blocks);
    expect(slack).toContain('*links down* in `prod` / `v0`');
    expect(slack).not.toContain('<@U1>');
  });
});

describe('rmq_links{env,state}', () => {
  it('exports every state of a reading, missing included', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const rows = [row(0, 'running'), row(1, 'missing'), row(2, 'missing'), row(3, 'stopped')];
    metrics.linksCounted('prod', countLinks(rows));
    const text = await metrics.registry.metrics();
    expect(text).toContain('rmq_links{env="prod",state="missing"} 2');
    expect(text).toContain('rmq_links{env="prod",state="running"} 1');
    expect(text).toContain('rmq_links{env="prod",state="expected"} 4');
    metrics.linksCounted('prod', countLinks([row(0, 'running')]));
    expect(await metrics.registry.metrics()).toContain('rmq_links{env="prod",state="missing"} 0');
  });
});

describe('LinksWatch', () => {
  /** The store's contract in memory (the Lua script's compare-and-set on the version). */
  function memoryStore() {
    let version = 0;
    let down: ReadonlyMap<string, DownLink> = new Map();
    return {
      read: async () => ({ version: String(version), down }),
      move: async (v: string, next: ReadonlyMap<string, DownLink>) => {
        if (v !== String(version)) return false;
        down = next;
        version++;
        return true;
      },
      readAt: async () => undefined,
    } as unknown as LinksStore;
  }
  const env = { name: 'prod' } as Environment;

  it('a reading that fails tells nothing, keeps what was recorded and says why in its health', async () => {
    const store = memoryStore();
    const went: LinksWent[] = [];
    let fail = false;
    const w = new LinksWatch({
      env,
      read: async () => {
        if (fail) throw Object.assign(new Error('the broker is away'), { code: 'unreachable' });
        return [row(0, 'missing')];
      },
      nodes: async () => [],
      store,
      logger: createLogger('silent'),
      intervalMs: 3_600_000,
      settleMs: 1,
      went: async (b) => void went.push(b),
    });
    await w.read('interval');
    fail = true;
    await w.read('interval');
    expect(went.map((b) => b.went)).toEqual(['down']);
    expect((await store.read()).down.size).toBe(1);
    expect(w.health().lastRead).toMatchObject({ ok: false, error: 'unreachable' });
  });

  it('stopped while it waits to read again: tells nothing and ends', async () => {
    const went: LinksWent[] = [];
    let reads = 0;
    const w = new LinksWatch({
      env,
      read: async () => {
        reads++;
        return [row(0, 'stopped')];
      },
      nodes: async () => [],
      store: memoryStore(),
      logger: createLogger('silent'),
      intervalMs: 3_600_000,
      settleMs: 3_600_000,
      went: async (b) => void went.push(b),
    });
    const reading = w.read('interval');
    await waitFor(() => reads === 1, { what: 'the first reading' });
    await w.stop();
    await reading;
    expect([reads, went]).toEqual([1, []]);
  });

  it('a node change seen during a reading is read once that reading ends, naming the node', async () => {
    const went: LinksWent[] = [];
    let release: (() => void) | undefined;
    let block = false;
    let states: LinkState[] = ['running'];
    let nodes = [{ name: 'rabbit@a', running: true }];
    let nodeReads = 0;
    const w = new LinksWatch({
      env,
      read: async () => {
        const rows = states.map((s, i) => row(i, s));
        if (block) await new Promise<void>((r) => (release = r));
        return rows;
      },
      nodes: async () => {
        nodeReads++;
        return nodes;
      },
      store: memoryStore(),
      logger: createLogger('silent'),
      intervalMs: 3_600_000,
      nodesEveryMs: 10,
      settleMs: 1,
      went: async (b) => void went.push(b),
    });
    try {
      await w.start();
      block = true;
      const reading = w.read('interval');
      await waitFor(() => release !== undefined, { what: 'a reading under way' });
      block = false;
      nodes = [{ name: 'rabbit@a', running: false }];
      states = ['missing'];
      const seen = nodeReads;
      await waitFor(() => nodeReads > seen + 1, { what: 'the node change read' });
      expect(went).toEqual([]);
      release?.();
      await reading;
      const [burst] = await waitFor(() => went.length > 0 && went, {
        what: 'the reading after the node change',
      });
      expect([burst?.went, burst?.source, burst?.nodes]).toEqual([
        'down',
        'nodes',
        { down: ['rabbit@a'], up: [] },
      ]);
    } finally {
      await w.stop();
    }
  });
});
