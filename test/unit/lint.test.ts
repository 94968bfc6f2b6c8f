/**
 * src/policy/lint/lint.ts: each kind fires on the smallest world that holds it and not on its clean
 * twin; a property test over random clean worlds (anchored or harmless patterns, distinct
 * priorities, keys every type takes, targets that exist, operator limits that bite, queues with
 * consumers) finds nothing; and the order, the 20 names and the count. The broker itself:
 * test/integration/lint.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lintCounts, whyOf } from '../../src/commands/lint/lint.ts';
import type { LiveQueue } from '../../src/policy/impact/impact.ts';
import { scopesMeet } from '../../src/policy/keys.ts';
import {
  atLeastAsSevere,
  type Finding,
  LISTED_OBJECTS,
  Linter,
  type LintObject,
} from '../../src/policy/lint/lint.ts';
import {
  anchoredForm,
  compilePattern,
  isAnchored,
  matchName,
  PatternCache,
} from '../../src/policy/pattern/pattern.ts';
import { buildPolicySet, resolve } from '../../src/policy/resolve.ts';
import type { ObjectKind, Policy } from '../../src/policy/types.ts';
import { liveQueue } from '../support/live.ts';
import { policyIn, V40, V310 } from '../support/policies.ts';

const pol = policyIn('v');
const opPol = policyIn('v');

interface World {
  user: Policy[];
  operator?: Policy[];
  objects: LintObject[];
  live?: Map<string, LiveQueue | null>;
  upstreams?: Set<string>;
}

const obj = (
  name: string,
  kind: ObjectKind | null = 'classic',
  args: Record<string, unknown> = {},
): LintObject => ({
  name,
  kind,
  arguments: args,
});

function run(w: World, version = V40): Finding[] {
  const cache = new PatternCache();
  const linter = new Linter(buildPolicySet(w.user, w.operator ?? [], version, cache), cache);
  for (const o of w.objects) linter.add(o);
  linter.settle();
  return linter.findings(
    w.live ?? new Map(),
    { upstreams: w.upstreams ?? new Set(), upstreamSets: new Set() },
    0,
  );
}

const kinds = (fs: Finding[]) => fs.map((f) => [f.kind, f.policy]);

describe('each kind, and its clean twin', () => {
  it('tie: two at one priority both match an object; at two priorities, or apart by apply-to, no tie', () => {
    const a = pol('a', '^t\\.', 5, { 'max-length': 1 }, 'queues');
    const b = pol('b', '^t\\.', 5, { 'max-length': 2 }, 'queues');
    const f = run({ user: [a, b], objects: [obj('t.1'), obj('t.2')] });
    expect(f).toMatchObject([
      { kind: 'tie', policy: 'a', policies: ['a', 'b'], objects: ['t.1', 't.2'], objectCount: 2 },
    ]);
    expect(run({ user: [a, { ...b, priority: 4 }], objects: [obj('t.1')] }).map((x) => x.kind)).toEqual([
      'shadowed',
    ]);
    const x = pol('x', '^t\\.', 5, { 'alternate-exchange': 'ae' }, 'exchanges');
    expect(
      run({ user: [a, x], objects: [obj('t.1'), obj('t.x', 'exchange'), obj('ae', 'exchange')] }),
    ).toEqual([]);
    const c = pol('c', '^t\\.', 5, { 'max-length': 1 }, 'classic_queues');
    const q = pol('q', '^t\\.', 5, { 'max-length': 1 }, 'quorum_queues');
    expect(run({ user: [c, q], objects: [obj('t.c'), obj('t.q', 'quorum')] })).toEqual([]);
  });

  it('shadowed: matches and governs none; governing one object is enough not to be', () => {
    const hi = pol('hi', '^s\\.', 9, { 'max-length': 1 });
    const lo = pol('lo', '^s\\.', 1, { 'max-length': 2 });
    expect(run({ user: [hi, lo], objects: [obj('s.1')] })).toMatchObject([
      { kind: 'shadowed', policy: 'lo', by: ['hi'] },
    ]);
    const wide = pol('lo', '^(s|w)\\.', 1, { 'max-length': 2 });
    expect(run({ user: [hi, wide], objects: [obj('s.1'), obj('w.1')] })).toEqual([]);
  });

  it('cannot-govern: a stream and message-ttl; max-age it takes', () => {
    const ttl = pol('ttl', '^s\\.', 1, { 'message-ttl': 1 }, 'queues');
    expect(run({ user: [ttl], objects: [obj('s.1', 'stream')] })).toMatchObject([
      { kind: 'cannot-govern', keys: ['message-ttl'], objects: ['s.1'] },
    ]);
    const age = pol('age', '^s\\.', 1, { 'max-age': '1D' }, 'queues');
    expect(run({ user: [age], objects: [obj('s.1', 'stream')] })).toEqual([]);
  });

  it('unanchored: a name that merely contains the pattern; names that start with it are no catch', () => {
    const cap = pol('cap', 'orders', 0, { 'max-length': 1 }, 'queues');
    expect(run({ user: [cap], objects: [obj('orders.a'), obj('retry.orders.dlq')] })).toMatchObject([
      { kind: 'unanchored', policy: 'cap', objects: ['retry.orders.dlq'], objectCount: 1 },
    ]);
    expect(run({ user: [cap], objects: [obj('orders.a'), obj('ordersb')] })).toEqual([]);
  });

  it('missing-target: the exchange or upstream named does not exist; one that exists is fine', () => {
    const dlx = pol('dlx', '^q\\.', 0, { 'dead-letter-exchange': 'gone' }, 'queues');
    expect(run({ user: [dlx], objects: [obj('q.1')] })).toMatchObject([
      { kind: 'missing-target', key: 'dead-letter-exchange', target: 'gone' },
    ]);
    expect(run({ user: [dlx], objects: [obj('q.1'), obj('gone', 'exchange')] })).toEqual([]);
    expect(
      run({ user: [{ ...dlx, definition: { 'dead-letter-exchange': '' } }], objects: [obj('q.1')] }),
    ).toEqual([]);
    const fed = pol('fed', '^q\\.', 0, { 'federation-upstream': 'up' }, 'queues');
    expect(run({ user: [fed], objects: [obj('q.1')] }).map((f) => f.kind)).toEqual(['missing-target']);
    expect(run({ user: [fed], objects: [obj('q.1')], upstreams: new Set(['up']) })).toEqual([]);
    // The queue's own argument names it: not the policy's doing.
    const own = obj('q.1', 'classic', { 'x-dead-letter-exchange': 'gone' });
    expect(run({ user: [pol('cap', '^q\\.', 0, { 'max-length': 1 })], objects: [own] })).toEqual([]);
  });

  it('expires-idle: messages and no consumer; empty, or with a consumer, not', () => {
    const ex = pol('ex', '^q\\.', 0, { expires: 60_000 }, 'queues');
    const live = new Map<string, LiveQueue | null>([
      ['q.full', liveQueue(4)],
      ['q.empty', liveQueue(0)],
      ['q.held', { ...liveQueue(3), consumers: 1 }],
      ['q.unknown', null],
    ]);
    const f = run({
      user: [ex],
      objects: ['q.full', 'q.empty', 'q.held', 'q.unknown'].map((n) => obj(n)),
      live,
    });
    expect(f).toMatchObject([
      {
        kind: 'expires-idle',
        policy: 'ex',
        objects: ['q.full'],
        messages: 4,
        expiresMs: 60_000,
        by: new Date(60_000).toISOString(),
      },
    ]);
  });

  it('operator-never-stricter: above every governed object own limit; one it bites is enough not to be', () => {
    const user = [pol('u', '^o\\.\\d$', 0, { 'max-length': 10 }, 'queues')];
    const high = opPol('ceil', '^o\\.', 0, { 'max-length': 1000 }, 'queues');
    expect(run({ user, operator: [high], objects: [obj('o.1'), obj('o.2')] })).toMatchObject([
      {
        kind: 'operator-never-stricter',
        policy: 'ceil',
        operator: true,
        key: 'max-length',
        limit: 1000,
        highestOwn: 10,
        objectCount: 2,
      },
    ]);
    expect(run({ user, operator: [high], objects: [obj('o.1'), obj('o.2x')] })).toEqual([]);
    expect(
      run({ user, operator: [{ ...high, definition: { 'max-length': 5 } }], objects: [obj('o.1')] }),
    ).toEqual([]);
  });

  it('a queue type this bot does not know claims nothing but a catch', () => {
    const a = pol('a', '^t\\.', 5, { 'max-length': 1 }, 'queues');
    const b = pol('b', '^t\\.', 5, { 'max-length': 2 }, 'queues');
    expect(run({ user: [a, b], objects: [obj('t.1', null)] })).toEqual([]);
  });
});

describe('under a tie: a finding that holds for every policy of the tie holds', () => {
  const a = pol('a', '^q\\.', 5, { 'max-length': 500 }, 'queues');
  const b = pol('b', '^q\\.', 5, { 'max-length': 1000 }, 'queues');
  const ceiling = opPol('ceiling', '^q\\.', 0, { 'max-length': 100_000 }, 'queues');

  it('operator-never-stricter: above either tied policy, so it never bites whichever the broker picks', () => {
    const f = run({ user: [a, b], operator: [ceiling], objects: [obj('q.1'), obj('q.2')] });
    expect(kinds(f)).toEqual([
      ['tie', 'a'],
      ['operator-never-stricter', 'ceiling'],
    ]);
    expect(f[1]).toMatchObject({ highestOwn: 1000, limit: 100_000, objectCount: 2 });
    // One tied policy above the operator's limit: it bites when that one is picked.
    const over = { ...b, definition: { 'max-length': 200_000 } };
    expect(kinds(run({ user: [a, over], operator: [ceiling], objects: [obj('q.1')] }))).toEqual([
      ['tie', 'a'],
    ]);
  });

  it('expires-idle: the operator policy deletes the queue under either; a missing target only one names is not claimed', () => {
    const expiring = opPol('reap', '^q\\.', 0, { expires: 60_000 }, 'queues');
    const dlx = { ...a, definition: { 'dead-letter-exchange': 'gone' } };
    const live = new Map<string, LiveQueue | null>([['q.1', liveQueue(3)]]);
    const f = run({ user: [dlx, b], operator: [expiring], objects: [obj('q.1')], live });
    expect(kinds(f)).toEqual([
      ['tie', 'a'],
      ['expires-idle', 'reap'],
    ]);
    // Both tied policies name the missing exchange: still each its own finding, about objects it
    // may not govern: not claimed either.
    const both = { ...b, definition: { 'dead-letter-exchange': 'gone' } };
    expect(kinds(run({ user: [dlx, both], objects: [obj('q.1')] }))).toEqual([['tie', 'a']]);
    // A user policy's own expires below the operator's: which one deletes it depends on the pick.
    const shorter = { ...b, definition: { expires: 1000 } };
    expect(kinds(run({ user: [a, shorter], operator: [expiring], objects: [obj('q.1')], live }))).toEqual([
      ['tie', 'a'],
    ]);
  });

  it('a random tie: its findings are those that hold with each of its policies alone', () => {
    const definition = fc
      .record(
        {
          'max-length': fc.constantFrom(5, 500, 200_000),
          'dead-letter-exchange': fc.constantFrom('ae', 'gone'),
          expires: fc.constantFrom(1000, 120_000),
        },
        { requiredKeys: [] },
      )
      .map((d) => d as Record<string, unknown>);
    const worldArb = fc.record({
      tied: fc.array(definition, { minLength: 2, maxLength: 3 }),
      operator: fc
        .record(
          { 'max-length': fc.constantFrom(50, 100_000), expires: fc.constantFrom(60_000, 600_000) },
          { requiredKeys: [] },
        )
        .map((d) => d as Record<string, unknown>),
      queues: fc.array(fc.tuple(fc.constantFrom<ObjectKind>('classic', 'quorum'), fc.nat(3)), {
        minLength: 1,
        maxLength: 3,
      }),
    });
    const TIE_KINDS = new Set(['operator-never-stricter', 'missing-target', 'expires-idle']);
    type TieWorld = {
      readonly operator: Record<string, unknown>;
      readonly queues: readonly (readonly [ObjectKind, number])[];
    };
    const found = (user: Policy[], w: TieWorld) => {
      const operator = Object.keys(w.operator).length ? [opPol('op', '^q\\.', 0, w.operator, 'queues')] : [];
      const live = new Map<string, LiveQueue | null>(w.queues.map(([, n], i) => [`q.${i}`, liveQueue(n)]));
      const objects = [...w.queues.map(([kind], i) => obj(`q.${i}`, kind)), obj('ae', 'exchange')];
      return run({ user, operator, objects, live }).filter((f) => TIE_KINDS.has(f.kind));
    };
    const id = (f: Finding) =>
      JSON.stringify([f.kind, f.policy, f.operator, f.objects, 'key' in f ? f.key : null]);
    fc.assert(
      fc.property(worldArb, (w) => {
        const tied = w.tied.map((d, i) => pol(`t${i}`, '^q\\.', 5, d, 'queues'));
        const alone = tied.map((p) => new Set(found([p], w).map(id)));
        const every = [...(alone[0] ?? [])].filter((x) => alone.every((s) => s.has(x)));
        expect(found(tied, w).map(id).sort()).toEqual(every.sort());
      }),
      { numRuns: 300 },
    );
  });
});

describe('the findings as a list', () => {
  it('most severe first, at most 20 names with the count, one sentence each', () => {
    const names = Array.from({ length: 25 }, (_, i) => `t.${String(i).padStart(2, '0')}`);
    const f = run({
      user: [
        pol('a', '^t\\.', 5, { 'max-length': 1 }, 'queues'),
        pol('b', '^t\\.', 5, { 'max-length': 2 }, 'queues'),
        pol('lo', '^t\\.', 1, { 'max-length': 2 }, 'queues'),
        pol('cap', 'x', 0, { 'max-length': 1 }, 'queues'),
      ],
      objects: [...names.map((n) => obj(n)), obj('ax')],
    });
    expect(kinds(f)).toEqual([
      ['tie', 'a'],
      ['unanchored', 'cap'],
      ['shadowed', 'lo'],
    ]);
    expect(f[0]?.objects).toHaveLength(LISTED_OBJECTS);
    expect(f[0]?.objectCount).toBe(25);
    expect(f.map(whyOf)).toEqual([
      'Policies "a" and "b" share priority 5 and both match 25 objects there now: which one the broker applies to them is not defined.',
      'Policy "cap"\'s pattern "x" has no ^, so it matches 1 name that merely contains it without starting with it.',
      'Policy "lo" matches 25 objects and governs none of them: "a", "b" win at a higher priority.',
    ]);
    expect(lintCounts(f)).toBe('1 error, 1 warning, 1 info');
    expect(lintCounts([])).toBe('no findings');
  });

  it('--fail-on: the severity given or worse', () => {
    expect(atLeastAsSevere('error', 'warning')).toBe(true);
    expect(atLeastAsSevere('warning', 'warning')).toBe(true);
    expect(atLeastAsSevere('info', 'warning')).toBe(false);
    expect(atLeastAsSevere('warning', 'error')).toBe(false);
  });

  it('names go through the as-written rendering', () => {
    const f = run({
      user: [pol('a\u202eb', 'x\ny', 0, { 'max-length': 1 }, 'queues')],
      objects: [obj('zx\ny')],
    });
    expect(f.map(whyOf)).toEqual([
      'Policy "a\\u202eb"\'s pattern "x\\ny" has no ^, so it matches 1 name that merely contains it without starting with it.',
    ]);
  });
});

/** A world with none of the surprises, by construction. */
const cleanWorld = fc
  .record({
    groups: fc.array(
      fc.record({
        kinds: fc.uniqueArray(fc.constantFrom<ObjectKind>('classic', 'quorum', 'stream', 'exchange'), {
          minLength: 1,
          maxLength: 3,
        }),
        objects: fc.integer({ min: 1, max: 3 }),
        own: fc.boolean(),
        unanchored: fc.boolean(),
        bytes: fc.integer({ min: 10, max: 10_000 }),
        target: fc.boolean(),
        ceiling: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
        expires: fc.boolean(),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    overlaps: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }),
    // Two policies of one pattern at one priority whose apply-tos never meet: no tie.
    twins: fc.array(fc.record({ perType: fc.boolean(), bytes: fc.integer({ min: 10, max: 10_000 }) }), {
      maxLength: 3,
    }),
    version: fc.constantFrom(V310, V40),
  })
  .map(({ groups, overlaps, twins, version }) => {
    const user: Policy[] = [];
    const operator: Policy[] = [];
    const objects: LintObject[] = [{ name: 'ae', kind: 'exchange', arguments: {} }];
    const live = new Map<string, LiveQueue | null>();
    // Distinct priorities, each group's own above any overlap that reaches it.
    let priority = 1000;
    const definition = (g: (typeof groups)[number]) => ({
      'max-length-bytes': g.bytes,
      ...(g.target ? { 'alternate-exchange': 'ae' } : {}),
      ...(g.expires && !g.kinds.includes('stream') && !g.kinds.includes('exchange')
        ? { expires: 60_000 }
        : {}),
    });
    groups.forEach((g, i) => {
      const prefix = g.own ? `g${i}` : `f${i}`;
      for (let k = 0; k < g.objects; k++) {
        const kind = g.kinds[k % g.kinds.length] as ObjectKind;
        const name = `${prefix}.${k}`;
        objects.push({ name, kind, arguments: {} });
        // Every queue has a consumer: expires deletes nothing now.
        if (kind !== 'exchange') live.set(name, { ...liveQueue(3), consumers: 1 });
      }
      if (!g.own) return;
      user.push(
        pol(`p${i}`, g.unanchored ? `${prefix}\\.` : `^${prefix}\\.`, priority--, definition(g), 'all'),
      );
      if (g.ceiling !== undefined && g.kinds.every((k) => k === 'classic' || k === 'quorum'))
        operator.push(opPol(`o${i}`, `^${prefix}\\.`, 0, { 'max-length-bytes': g.ceiling }, 'queues'));
    });
    // A policy across an owned group (where it loses) and a group of no policy (where it governs).
    const taken = new Set<number>();
    overlaps.forEach(([a, b], k) => {
      const owned = groups.findIndex((g, i) => g.own && i >= a % groups.length);
      const free = groups.findIndex((g, i) => !g.own && i >= b % groups.length);
      if (owned < 0 || free < 0 || taken.has(free)) return;
      taken.add(free);
      const g = groups[free] as (typeof groups)[number];
      user.push(pol(`x${k}`, `^(g${owned}|f${free})\\.`, -1 - k, { 'max-length-bytes': g.bytes }, 'all'));
    });
    twins.forEach((t, i) => {
      const pattern = `^t${i}\\.`;
      const perType = t.perType && version === V40;
      const [a, b] = perType
        ? (['classic_queues', 'quorum_queues'] as const)
        : (['queues', 'exchanges'] as const);
      const priority = 2000 + i;
      user.push(pol(`t${i}-a`, pattern, priority, { 'max-length-bytes': t.bytes }, a));
      user.push(
        pol(
          `t${i}-b`,
          pattern,
          priority,
          perType ? { 'max-length-bytes': t.bytes + 1 } : { 'alternate-exchange': 'ae' },
          b,
        ),
      );
      const second: ObjectKind = perType ? 'quorum' : 'exchange';
      objects.push({ name: `t${i}.a`, kind: 'classic', arguments: {} });
      objects.push({ name: `t${i}.b`, kind: second, arguments: {} });
      live.set(`t${i}.a`, { ...liveQueue(3), consumers: 1 });
      if (second === 'quorum') live.set(`t${i}.b`, { ...liveQueue(3), consumers: 1 });
    });
    return { user, operator, objects, live, version };
  });

describe('fork: the end state of a plan from what now has read', () => {
  it('forked after the objects no change reaches, then fed the rest, finds what a linter of the end state fed all finds', () => {
    const hi = pol('hi', '^s\\.', 9, { 'max-length': 1 });
    const lo = pol('lo', '^s\\.', 1, { 'max-length': 2 });
    const cap = pol('cap', 'x', 0, { 'max-length': 1 });
    const gone = pol('gone', '^g\\.', 3, { 'dead-letter-exchange': 'nope' });
    const now = [hi, lo, cap, gone];
    // The set: lo raised above hi (a tie at 9), gone deleted, a new unanchored one.
    const end = [hi, { ...lo, priority: 9 }, cap, pol('new', 'y', 0, { 'max-length': 3 })];
    const reached = (o: LintObject) => /^(s|g)\./.test(o.name) || o.name.includes('y');
    const objects = ['s.1', 's.2', 'ax', 'bx', 'g.1', 'zy', 'q.1'].map((n) => obj(n));
    const full = (policies: Policy[]) => {
      const cache = new PatternCache();
      const l = new Linter(buildPolicySet(policies, [], V40, cache), cache);
      for (const o of objects) l.add(o);
      l.settle();
      return l.findings(new Map(), {}, 0);
    };
    const cache = new PatternCache();
    const base = new Linter(buildPolicySet(now, [], V40, cache), cache);
    for (const o of objects.filter((o) => !reached(o))) base.add(o);
    const forked = base.fork(buildPolicySet(end, [], V40, cache));
    for (const o of objects.filter(reached)) {
      base.add(o);
      forked.add(o);
    }
    base.settle();
    forked.settle();
    const ids = (fs: Finding[]) => fs.map((f) => [f.kind, f.policy, f.objects, f.objectCount]);
    expect(ids(forked.findings(new Map(), {}, 0))).toEqual(ids(full(end)));
    expect(ids(base.findings(new Map(), {}, 0))).toEqual(ids(full(now)));
    expect(ids(forked.findings(new Map(), {}, 0))).toEqual([
      ['tie', 'hi', ['s.1', 's.2'], 2],
      ['unanchored', 'cap', ['ax', 'bx'], 2],
      ['unanchored', 'new', ['zy'], 1],
    ]);
  });
});

describe('no false findings', () => {
  it('a random clean world has none', () => {
    fc.assert(
      fc.property(cleanWorld, (w) => {
        expect(run(w, w.version)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('what the governing policies do, shared by pair, kind and arguments', () => {
  // The pass works out what the two governing policies do (targets, expires, operator limits)
  // once per pair, kind and arguments (keys in order, values by identity or JSON), and uses the
  // policies' values as they are for an object without arguments; `unshared` works it out for
  // each object alone, its arguments always read. Random worlds: the findings are the same.
  const value = fc.constantFrom<unknown>(1, '1', 3, 30, 'ae', 'nope', true, { a: 1 }, [1]);
  const argumentsArb = fc
    .array(
      fc.tuple(
        fc.constantFrom('x-max-length', 'x-message-ttl', 'x-dead-letter-exchange', 'x-queue-type'),
        value,
      ),
      { maxLength: 2 },
    )
    .map((entries) => Object.fromEntries(entries));
  const definition = fc
    .record(
      {
        'dead-letter-exchange': fc.constantFrom('ae', 'nope'),
        'alternate-exchange': fc.constantFrom('ae', 'nope'),
        expires: fc.constantFrom(1000, 60_000),
        'max-length': fc.integer({ min: 1, max: 20 }),
        'max-length-bytes': fc.integer({ min: 1, max: 20 }),
        'message-ttl': fc.constantFrom(1000, 5),
        'delivery-limit': fc.constantFrom(-1, 3),
      },
      { requiredKeys: [] },
    )
    .map((d) => d as Record<string, unknown>);
  const patternArb = fc.constantFrom('^a', '^ab', '.*', 'b', '^a\\.', '^b');
  const policyArb = fc.record({
    pattern: patternArb,
    priority: fc.integer({ min: 0, max: 2 }),
    applyTo: fc.constantFrom('all', 'queues', 'exchanges'),
    definition,
  });
  // Operator policies: the limits an object's own value may always be under.
  const limitArb = fc.record({
    pattern: patternArb,
    priority: fc.integer({ min: 0, max: 1 }),
    applyTo: fc.constant('queues'),
    definition: fc
      .record(
        {
          'max-length': fc.constantFrom(2, 10),
          'max-length-bytes': fc.constantFrom(2, 10),
          'message-ttl': fc.constantFrom(2, 10),
          'delivery-limit': fc.constantFrom(2, 10),
        },
        { requiredKeys: [] },
      )
      .map((d) => d as Record<string, unknown>),
  });
  const objectArb = fc.tuple(
    fc.constantFrom('a', 'ab', 'a.x', 'b'),
    fc.constantFrom<ObjectKind | null>('classic', 'quorum', 'stream', 'exchange', null),
    argumentsArb,
    fc.integer({ min: 0, max: 3 }),
    fc.boolean(),
  );

  it('arguments equal as text are not the same arguments: 1 and "1"', () => {
    const world = (second: unknown): World => ({
      user: [],
      operator: [opPol('cap', '^a', 0, { 'max-length': 2 }, 'queues')],
      objects: [
        obj('a1', 'classic', { 'x-max-length': 1 }),
        obj('a2', 'classic', { 'x-max-length': second }),
      ],
    });
    // A string is no limit the broker reads: the cap bites a2, so it is not never stricter.
    expect(kinds(run(world('1')))).toEqual([]);
    expect(kinds(run(world(1)))).toEqual([['operator-never-stricter', 'cap']]);
  });

  it('a list with more patterns to read than a mask holds is read in full for each object', () => {
    // Fourteen unanchored patterns in one list (none filed by a prefix): past MAX_CHECKS, every
    // object is resolved in full, nothing shared by mask; the findings are those of `unshared`.
    const user = Array.from({ length: 14 }, (_, i) =>
      pol(`p${i}`, `x${i}`, i % 3, { 'max-length': i + 1 }, 'queues'),
    );
    const objects = ['ax1', 'x1', 'bx12', 'x13.q', 'ax1', 'cx0x1', 'zz', 'ax9'].map((n, i) =>
      obj(`${n}-${i}`),
    );
    const findings = (unshared: boolean) => {
      const cache = new PatternCache();
      const linter = new Linter(buildPolicySet(user, [], V40, cache), cache, { unshared });
      for (const o of objects) linter.add(o);
      linter.settle();
      return linter.findings(new Map(), {}, 0);
    };
    const shared = findings(false);
    expect(shared).toEqual(findings(true));
    expect(shared.find((f) => f.kind === 'unanchored' && f.policy === 'p1')).toMatchObject({
      objects: ['ax1-0', 'ax1-4', 'bx12-2', 'cx0x1-5'],
    });
    // The list's last pattern (lowest priority, last by name) is read too.
    expect(shared.find((f) => f.kind === 'unanchored' && f.policy === 'p9')).toMatchObject({
      objects: ['ax9-7'],
    });
  });

  it('the findings are those of each object read alone', () => {
    fc.assert(
      fc.property(
        fc.array(policyArb, { maxLength: 5 }),
        fc.array(limitArb, { maxLength: 2 }),
        fc.array(objectArb, { minLength: 2, maxLength: 16 }),
        fc.constantFrom(V310, V40),
        (users, operators, objects, version) => {
          const user = users.map((p, i) => pol(`u${i}`, p.pattern, p.priority, p.definition, p.applyTo));
          const operator = operators.map((p, i) =>
            opPol(`o${i}`, p.pattern, p.priority, p.definition, 'queues'),
          );
          const live = new Map<string, LiveQueue | null>();
          const objs = objects.map(([n, kind, args, messages, consumer], i) => {
            const name = `${n}${i}`;
            if (kind !== 'exchange') live.set(name, { ...liveQueue(messages), consumers: consumer ? 1 : 0 });
            return obj(name, kind, args);
          });
          const findings = (unshared: boolean) => {
            const cache = new PatternCache();
            const linter = new Linter(buildPolicySet(user, operator, version, cache), cache, { unshared });
            for (const o of objs) linter.add(o);
            linter.settle();
            return linter.findings(live, { upstreams: new Set(), upstreamSets: new Set() }, 0);
          };
          expect(findings(false)).toEqual(findings(true));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("the pass's resolution: resolve.ts's rule, read per object", () => {
  // The pass resolves each object in reused scratch, per index list; resolve() is the rule as
  // `which` reads it. For random worlds (shared prefixes, unanchored and unreadable patterns,
  // refused keys, ties, apply-to, unknown types), what each policy is found to do from resolve()
  // object by object equals the pass's findings of the kinds that read the resolution.
  const word = fc.constantFrom('a', 'ab', 'a.b', 'b', 'x.y', 'a.', '');
  const patternOf = fc.oneof(
    word.map((w) => `^${w.replace(/\./g, '\\.')}`),
    word.map((w) => w.replace(/\./g, '\\.')),
    word.map((w) => `^${w}.*$`),
    fc.constantFrom('.*', '^.*', '', '^a|^b', '(?i)^A', '^(?=a)', '\\v', '^a\\d', '^a\\.$', '^a\\s'),
  );
  const definition = fc.constantFrom<Record<string, unknown>>(
    { 'max-length': 5 },
    { 'message-ttl': 1000 },
    { 'max-age': '1D' },
    { 'dead-letter-exchange': 'nowhere' },
    { 'max-length': 9, 'queue-mode': 'lazy' },
  );
  const policyArb = fc.record({
    pattern: patternOf,
    priority: fc.integer({ min: 0, max: 3 }),
    applyTo: fc.constantFrom('all', 'queues', 'exchanges', 'classic_queues', 'quorum_queues', 'streams'),
    definition,
  });
  const nameArb = fc.tuple(word, fc.constantFrom('', '1', '.z', 'b', 'a')).map(([w, t]) => `${w}${t}` || 'q');

  it('shadowed, tie, cannot-govern and unanchored as resolve() tells them', () => {
    fc.assert(
      fc.property(
        fc.array(policyArb, { maxLength: 8 }),
        fc.array(policyArb, { maxLength: 3 }),
        fc.uniqueArray(
          fc.tuple(
            nameArb,
            fc.constantFrom<ObjectKind | null>('classic', 'quorum', 'stream', 'exchange', null),
          ),
          { maxLength: 14, selector: ([n, k]) => `${n}:${k}` },
        ),
        fc.constantFrom(V310, V40),
        (users, operators, named, version) => {
          const user = users.map((p, i) => pol(`u${i}`, p.pattern, p.priority, p.definition, p.applyTo));
          const operator = operators
            .filter((p) => p.applyTo === 'queues' || p.applyTo === 'all')
            .map((p, i) => opPol(`o${i}`, p.pattern, p.priority, p.definition, 'queues'));
          const objects = named.map(([n, k]) => obj(n, k));
          const cache = new PatternCache();
          const set = buildPolicySet(user, operator, version, cache);
          const linter = new Linter(set, cache);
          for (const o of objects) linter.add(o);
          linter.settle();
          const found = linter.findings(new Map(), {}, 0);

          // The oracle: resolve() per object, tallied as the lint rules say.
          type T = {
            applicable: number;
            lost: string[];
            unsure: boolean;
            refused: string[];
            caught: string[];
          };
          const tallies = new Map<string, T>();
          const tally = (layer: string, name: string) => {
            const id = `${layer}:${name}`;
            let t = tallies.get(id);
            if (!t) {
              t = { applicable: 0, lost: [], unsure: false, refused: [], caught: [] };
              tallies.set(id, t);
            }
            return t;
          };
          const ties = new Map<string, string[]>();
          for (const o of objects) {
            const r = resolve(set, o.name, o.kind);
            for (const [layer, res] of [
              ['user', r.user],
              ['operator', r.operator],
            ] as const) {
              const known = o.kind !== null;
              const decided = known && res.decided;
              const [first] = res.candidates;
              const tied = res.candidates.filter(
                (p) => first !== undefined && scopesMeet(first.applyTo, p.applyTo),
              );
              if (decided && tied.length > 1) {
                const key = `${layer}:${tied
                  .map((p) => p.name)
                  .sort()
                  .join(',')}`;
                ties.set(key, [...(ties.get(key) ?? []), o.name]);
              }
              for (const m of res.matches) {
                const t = tally(layer, m.policy.name);
                if (!isAnchored(m.policy.pattern)) {
                  const anchored = matchName(compilePattern(anchoredForm(m.policy.pattern)), o.name);
                  if (anchored === false) t.caught.push(o.name);
                }
                if (m.refused.length > 0) {
                  if (known) t.refused.push(o.name);
                  continue;
                }
                t.applicable++;
                if (!decided) t.unsure = true;
                else if (!res.candidates.includes(m.policy)) t.lost.push(o.name);
              }
            }
          }
          const expected: string[] = [];
          for (const [id, t] of tallies) {
            const [layer, name] = id.split(':') as [string, string];
            const op = layer === 'operator';
            if (t.refused.length) expected.push(`cannot-govern ${op} ${name} ${[...t.refused].sort()}`);
            if (t.caught.length) expected.push(`unanchored ${op} ${name} ${[...t.caught].sort()}`);
            if (t.applicable > 0 && !t.unsure && t.lost.length === t.applicable)
              expected.push(`shadowed ${op} ${name} ${[...t.lost].sort()}`);
          }
          for (const [key, names] of ties) {
            const [layer, policies] = key.split(':') as [string, string];
            expected.push(`tie ${layer === 'operator'} ${policies.split(',')[0]} ${[...names].sort()}`);
          }
          const actual = found
            .filter((f) => ['cannot-govern', 'unanchored', 'shadowed', 'tie'].includes(f.kind))
            .map((f) => `${f.kind} ${f.operator} ${f.policy} ${f.objects}`);
          expect(actual.sort()).toEqual(expected.sort());
        },
      ),
      { numRuns: 300 },
    );
  });
});
