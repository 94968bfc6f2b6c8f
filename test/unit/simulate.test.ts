import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { valueInUse } from '../../src/policy/arguments.ts';
import { literalPrefix } from '../../src/policy/pattern/pattern.ts';
import { buildPolicySet, resolve } from '../../src/policy/resolve.ts';
import {
  type InventoryObject,
  type PolicyChange,
  type SimulationInput,
  type SimulationResult,
  simulate as simulateOnly,
} from '../../src/policy/simulate/simulate.ts';
import type { ObjectKind, Policy } from '../../src/policy/types.ts';
import { summarize } from '../../src/preview/summary.ts';
import { policyIn, V40, V310 } from '../support/policies.ts';

const pol = policyIn('v');

/** The simulation with the summary a preview makes of it. */
const simulate = (input: SimulationInput, objects: Iterable<InventoryObject>) => {
  const r = simulateOnly(input, objects);
  return { ...r, summary: summarize(r, input.change, input.version) };
};

const obj = (
  name: string,
  kind: ObjectKind | null,
  policy: string | null | undefined,
  args: Record<string, unknown> = {},
  extra: Partial<InventoryObject> = {},
): InventoryObject => ({ name, kind, arguments: args, policy, ...extra });

function run(
  user: Policy[],
  change: PolicyChange,
  objects: InventoryObject[],
  operator: Policy[] = [],
  version = V310,
): ReturnType<typeof simulate> {
  return simulate({ version, user, operator, change }, objects);
}

const del = (p: Policy, layer: 'user' | 'operator' = 'user'): PolicyChange => ({
  action: 'delete',
  layer,
  before: p,
  after: null,
});
const create = (p: Policy, layer: 'user' | 'operator' = 'user'): PolicyChange => ({
  action: 'create',
  layer,
  before: null,
  after: p,
});
const edit = (before: Policy, after: Policy, layer: 'user' | 'operator' = 'user'): PolicyChange => ({
  action: 'edit',
  layer,
  before,
  after,
});

const byName = (r: SimulationResult, name: string) => r.objects.find((o) => o.name === name);

// The product text's lab: audit-retention (10) over audit-fallback (1).
const retention = pol(
  'audit-retention',
  '^orders\\.audit$',
  10,
  { 'dead-letter-exchange': 'audit.dlx' },
  'queues',
);
const fallback = pol('audit-fallback', '^orders\\.', 1, { 'message-ttl': 3_600_000 }, 'queues');
const cap = pol('orders-cap', 'orders', 0, { 'max-length': 100_000 }, 'queues');

describe('delete', () => {
  it('an object the deleted policy governed falls back to the next match and loses what only it set', () => {
    const r = run([retention, fallback], del(retention), [obj('orders.audit', 'classic', 'audit-retention')]);
    expect(r.objects).toHaveLength(1);
    const o = byName(r, 'orders.audit');
    expect(o?.before).toEqual({ policy: 'audit-retention' });
    expect(o?.after).toEqual({ policy: 'audit-fallback' });
    expect(o?.lost).toEqual({ 'dead-letter-exchange': 'audit.dlx' });
    expect(o?.gained).toEqual({ 'message-ttl': 3_600_000 });
    expect(o?.risks).toEqual(['dead-letter']);
    expect(r.summary.risks[0]).toMatchObject({
      risk: 'dead-letter',
      count: 1,
      keys: ['dead-letter-exchange'],
    });
    expect(r.summary.groups[0]).toMatchObject({ outcome: 'falls back to audit-fallback', count: 1 });
  });

  it('with no other match the object is governed by nothing', () => {
    const r = run([retention], del(retention), [obj('orders.audit', 'classic', 'audit-retention')]);
    expect(byName(r, 'orders.audit')?.after).toEqual({ policy: null });
    expect(r.summary.groups[0]?.outcome).toBe('governed by nothing');
  });

  it('touches only the objects the broker reports governed by it, even where its pattern matches others', () => {
    const r = run([retention, fallback], del(fallback), [
      obj('orders.audit', 'classic', 'audit-retention'),
      obj('orders.x', 'classic', 'audit-fallback'),
    ]);
    expect(r.objects.map((o) => o.name)).toEqual(['orders.x']);
    expect(byName(r, 'orders.x')?.risks).toEqual(['ttl']);
  });

  it('skips a lower policy whose key the object type vetoes (a stream never takes message-ttl)', () => {
    const age = pol('age', '^ev', 5, { 'max-age': '1D' });
    const ttl = pol('ttl', '^ev', 3, { 'message-ttl': 1000 });
    const len = pol('len', '^ev', 1, { 'max-length-bytes': 1000 });
    const r = run([age, ttl, len], del(age), [obj('events', 'stream', 'age')]);
    expect(byName(r, 'events')?.after).toEqual({ policy: 'len' });
    expect(byName(r, 'events')?.risks).toEqual(['retention']);
  });

  it('equal priorities below leave the winner undefined: a new tie, with what each candidate would give', () => {
    const top = pol('top', '^q', 9, { 'dead-letter-exchange': 'd' });
    const a = pol('t-a', '^q', 2, { 'max-length': 1 });
    const b = pol('t-b', 'q', 2, { 'dead-letter-exchange': 'd', 'max-length': 2 });
    const r = run([top, a, b], del(top), [obj('q1', 'classic', 'top')]);
    const o = byName(r, 'q1');
    expect(o?.after.policy).toBeNull();
    expect(o?.after.candidates?.sort()).toEqual(['t-a', 't-b']);
    expect(o?.newTie).toBe(true);
    expect(o?.ifCandidate?.['t-a']?.lost).toEqual({ 'dead-letter-exchange': 'd' });
    expect(o?.ifCandidate?.['t-b']?.lost).toEqual({});
    // Lost under one candidate only: possible, not certain.
    expect(o?.lost).toEqual({});
    expect(o?.risks).toEqual([]);
    expect(o?.possibleRisks).toEqual(['dead-letter']);
    expect(r.summary.newTies.count).toBe(1);
    expect(r.summary.risks[0]).toMatchObject({ risk: 'dead-letter', count: 0, possible: 1 });
  });

  it('the tie the deleted policy won reverts to the other candidate', () => {
    const a = pol('a', '^q', 2, { 'max-length': 1 });
    const b = pol('b', '^q', 2, { 'max-length': 2 });
    const r = run([a, b], del(a), [obj('q1', 'classic', 'a')]);
    expect(byName(r, 'q1')?.after).toEqual({ policy: 'b' });
    expect(byName(r, 'q1')?.changed).toEqual({ 'max-length': [1, 2] });
    expect(byName(r, 'q1')?.newTie).toBeUndefined();
  });
});

describe('create and edit', () => {
  it('a higher-priority policy takes over what its pattern and scope reach, and nothing else', () => {
    const p = pol('wide', '^orders\\.', 20, { 'max-length': 5 }, 'queues');
    const r = run([retention, fallback], create(p), [
      obj('orders.audit', 'classic', 'audit-retention'),
      obj('orders.in', 'exchange', null),
      obj('billing.x', 'classic', null),
    ]);
    expect(r.objects.map((o) => o.name)).toEqual(['orders.audit']);
    expect(byName(r, 'orders.audit')).toMatchObject({
      after: { policy: 'wide' },
      lost: { 'dead-letter-exchange': 'audit.dlx' },
      gained: { 'max-length': 5 },
    });
    expect(r.summary.groups[0]?.outcome).toBe('taken over by wide');
  });

  it('a lower-priority policy changes nothing; the same priority makes a tie with the one in force', () => {
    const low = pol('low', '^orders\\.', 0, { 'max-length': 5 }, 'queues');
    expect(run([fallback], create(low), [obj('orders.x', 'classic', 'audit-fallback')]).objects).toEqual([]);
    const same = pol('same', '^orders\\.', 1, { 'max-length': 5 }, 'queues');
    const r = run([fallback], create(same), [obj('orders.x', 'classic', 'audit-fallback')]);
    expect(byName(r, 'orders.x')?.after.candidates?.sort()).toEqual(['audit-fallback', 'same']);
    expect(byName(r, 'orders.x')?.newTie).toBe(true);
  });

  it('a policy with a key the type vetoes takes over nothing of that type', () => {
    const dl = pol('dl', '.*', 50, { 'delivery-limit': 3 });
    const r = run([fallback], create(dl), [
      obj('orders.c', 'classic', 'audit-fallback'),
      obj('orders.q', 'quorum', 'audit-fallback'),
      obj('orders.s', 'stream', null),
    ]);
    expect(r.objects.map((o) => o.name)).toEqual(['orders.q']);
  });

  it('an edit that narrows the pattern hands the objects it leaves to the next match', () => {
    const narrowed = { ...fallback, pattern: '^orders\\.processing$' };
    const r = run([fallback, cap], edit(fallback, narrowed), [
      obj('orders.processing', 'quorum', 'audit-fallback'),
      obj('orders.other', 'classic', 'audit-fallback'),
    ]);
    expect(r.objects.map((o) => [o.name, o.after.policy])).toEqual([['orders.other', 'orders-cap']]);
    expect(byName(r, 'orders.other')?.risks).toEqual(['ttl']);
  });

  it('an edit of the definition in place changes the values of what it governs', () => {
    const r = run([fallback], edit(fallback, { ...fallback, definition: { 'message-ttl': 60_000 } }), [
      obj('orders.x', 'classic', 'audit-fallback'),
      obj('billing.y', 'classic', null),
    ]);
    expect(r.objects).toHaveLength(1);
    expect(byName(r, 'orders.x')).toMatchObject({
      before: { policy: 'audit-fallback' },
      after: { policy: 'audit-fallback' },
      changed: { 'message-ttl': [3_600_000, 60_000] },
    });
    expect(r.summary.groups[0]?.outcome).toBe('stays with audit-fallback');
  });

  it('an edit adding a vetoed key drops the objects of that type to the next match', () => {
    const r = run(
      [fallback, cap],
      edit(fallback, { ...fallback, definition: { 'message-ttl': 1, 'delivery-limit': 2 } }),
      [obj('orders.c', 'classic', 'audit-fallback'), obj('orders.q', 'quorum', 'audit-fallback')],
    );
    expect(byName(r, 'orders.c')?.after.policy).toBe('orders-cap');
    expect(byName(r, 'orders.q')).toMatchObject({
      after: { policy: 'audit-fallback' },
      gained: { 'delivery-limit': 2 },
    });
  });

  it('lowering the priority below another match lets that one win', () => {
    const r = run([retention, fallback], edit(retention, { ...retention, priority: 0 }), [
      obj('orders.audit', 'classic', 'audit-retention'),
    ]);
    expect(byName(r, 'orders.audit')?.after.policy).toBe('audit-fallback');
  });

  it("names an unanchored pattern's catch: names it reaches that do not start with it", () => {
    const r = run([], create(pol('o', 'orders', 0, { 'max-length': 1 })), [
      obj('orders.audit', 'classic', null),
      obj('retry.orders.dlq', 'classic', null),
      obj('billing', 'classic', null),
    ]);
    expect(r.summary.unanchoredCatch).toEqual({ pattern: 'orders', count: 1, names: ['retry.orders.dlq'] });
    expect(byName(r, 'retry.orders.dlq')?.unanchoredCatch).toBe(true);
    expect(byName(r, 'orders.audit')?.unanchoredCatch).toBeUndefined();
  });
});

describe('the operator layer', () => {
  const ceiling = pol('ceiling', '^orders\\.', 0, { 'message-ttl': 600_000, 'max-length': 50_000 }, 'queues');

  it('a value the operator policy keeps in force is not lost', () => {
    const r = run([fallback, cap], del(fallback), [obj('orders.p', 'quorum', 'audit-fallback')], [ceiling]);
    const o = byName(r, 'orders.p');
    expect(o?.lost).toEqual({});
    expect(o?.keptByOperator).toEqual(['message-ttl']);
    expect(o?.heldBy['message-ttl']).toBe('operator-policy');
    expect(o?.risks).toEqual([]);
    expect(o?.unchangedLayer).toEqual({ layer: 'operator', policy: 'ceiling', source: 'engine' });
  });

  it('effective values are the stricter of the two layers', () => {
    const r = run(
      [],
      create(pol('big', '^orders\\.', 1, { 'max-length': 100 })),
      [obj('orders.p', 'classic', null)],
      [ceiling],
    );
    // before: the operator's 50,000; after: min(100, 50,000)
    expect(byName(r, 'orders.p')?.changed).toEqual({ 'max-length': [50_000, 100] });
    expect(byName(r, 'orders.p')?.heldBy['max-length']).toBe('both');
  });

  it('operator-policy changes are read by the engine (the cheap listing does not report them)', () => {
    const low = pol('low', '^orders', -1, { 'max-length': 10 }, 'queues');
    const r = run(
      [fallback],
      del(ceiling, 'operator'),
      [obj('orders.p', 'classic', 'audit-fallback')],
      [ceiling, low],
    );
    const o = byName(r, 'orders.p');
    expect(o?.before).toEqual({ policy: 'ceiling' });
    expect(o?.after).toEqual({ policy: 'low' });
    expect(o?.changed).toEqual({ 'message-ttl': [600_000, 3_600_000], 'max-length': [50_000, 10] });
    expect(o?.unchangedLayer).toEqual({ layer: 'user', policy: 'audit-fallback', source: 'broker' });
  });

  it('an operator policy mixing type-specific keys is vetoed for the other types', () => {
    const mixed = pol('mixed', '.*', 5, { 'max-length': 10, 'delivery-limit': 2 });
    const r = run(
      [],
      create(mixed, 'operator'),
      [obj('c', 'classic', null), obj('q', 'quorum', null)],
      [ceiling],
    );
    expect(r.objects.map((o) => o.name)).toEqual(['q']);
  });

  it('4.0 delivery-limit: a negative (unlimited) operator value loses to a limited user value', () => {
    const dl = pol('dl', '^q', 1, { 'delivery-limit': 5 });
    const op = pol('op', '^q', 1, { 'delivery-limit': -1 });
    const r = run([], create(dl), [obj('q1', 'quorum', null)], [op], V40);
    expect(byName(r, 'q1')?.changed).toEqual({ 'delivery-limit': [-1, 5] });
  });
});

describe('what the engine cannot decide is unpredictable, never guessed', () => {
  const lookahead = pol('ahead', '^orders(?=\\.)', 3, { 'max-length': 9 });

  it('a proposed pattern this bot cannot read', () => {
    const r = run([fallback], create(lookahead), [
      obj('orders.x', 'classic', 'audit-fallback'),
      obj('billing', 'classic', null),
    ]);
    expect(r.objects).toEqual([]);
    expect(r.unpredictable.map((u) => u.name)).toEqual(['orders.x']);
    expect(r.unpredictable[0]?.why).toMatch(/cannot read the proposed pattern/);
  });

  it('an unreadable policy that could take over after the winner goes', () => {
    const top = pol('top', '^orders', 5, { 'max-length': 1 });
    const r = run([top, lookahead, fallback], del(top), [obj('orders.x', 'classic', 'top')]);
    expect(r.unpredictable).toMatchObject([{ name: 'orders.x' }]);
    expect(r.unpredictable[0]?.why).toMatch(/ahead/);
  });

  it('an unreadable policy above the reported winner is known not to match: the broker would have chosen it', () => {
    const high = { ...lookahead, priority: 50 };
    const r = run([high, fallback, cap], del(fallback), [obj('orders.x', 'classic', 'audit-fallback')]);
    expect(r.unpredictable).toEqual([]);
    expect(byName(r, 'orders.x')?.after.policy).toBe('orders-cap');
  });

  it('deleting an unreadable policy: the broker says whom it governed', () => {
    const r = run([lookahead, cap], del(lookahead), [
      obj('orders.x', 'classic', 'ahead'),
      obj('orders', 'classic', 'orders-cap'),
    ]);
    expect(r.objects.map((o) => [o.name, o.after.policy])).toEqual([['orders.x', 'orders-cap']]);
  });

  it('an operator policy this bot cannot read may have been in force before: the before is left open', () => {
    const behind = pol('behind', '(?<=\\.)billing$', 5, { 'max-length': 1 }, 'queues');
    const wide = pol('wide', '.*', 5, { 'max-length': 2 });
    const r = run(
      [],
      edit(behind, { ...behind, pattern: '^audit\\.' }, 'operator'),
      [obj('events.billing', 'quorum', null)],
      [behind, wide],
    );
    expect(byName(r, 'events.billing')).toMatchObject({
      before: { policy: null, candidates: ['wide', 'behind'] },
      after: { policy: 'wide' },
    });
    expect(byName(r, 'events.billing')?.notes?.[0]).toMatch(/cannot read/);
  });

  it('a reported policy that is not among the policies (changed a moment ago)', () => {
    const r = run([fallback], del(fallback), [obj('orders.x', 'classic', 'gone')]);
    expect(r.objects).toEqual([]);
    const r2 = run([fallback], create(pol('n', '^orders', 9, { 'max-length': 1 })), [
      obj('orders.x', 'classic', 'gone'),
    ]);
    expect(r2.unpredictable[0]?.why).toMatch(/not among the vhost's policies/);
  });

  it('a report the engine contradicts (the old version should have won) is not built upon', () => {
    const r = run([fallback], edit(fallback, { ...fallback, definition: { 'message-ttl': 1 } }), [
      obj('orders.y', 'classic', null),
    ]);
    expect(r.objects).toEqual([]);
    expect(r.unpredictable[0]?.why).toMatch(/reports no policy/);
  });

  it('a queue of a type this bot does not know', () => {
    const r = run([], create(pol('n', '^mq', 1, { 'max-length': 1 }, 'queues')), [
      obj('mqtt-1', null, null, {}, { type: 'mqtt_qos0' }),
    ]);
    expect(r.unpredictable).toMatchObject([{ name: 'mqtt-1', kind: 'mqtt_qos0' }]);
  });
});

describe("the object's own arguments (reference section 6)", () => {
  it('a classic queue keeps its own dead-letter argument: not a loss', () => {
    const r = run([retention], del(retention), [
      obj('orders.audit', 'classic', 'audit-retention', { 'x-dead-letter-exchange': 'own' }),
    ]);
    const o = byName(r, 'orders.audit');
    expect(o?.lost).toEqual({ 'dead-letter-exchange': 'audit.dlx' });
    expect(o?.risks).toEqual([]);
    expect(o?.arguments?.['dead-letter-exchange']).toEqual({
      argument: 'x-dead-letter-exchange',
      argumentValue: 'own',
      rule: 'argument',
      before: 'own',
      after: 'own',
      holds: 'argument',
    });
  });

  it('numeric limits: the smaller of argument and policy holds', () => {
    const r = run([fallback], del(fallback), [
      obj('orders.x', 'classic', 'audit-fallback', { 'x-message-ttl': 5000 }),
    ]);
    expect(byName(r, 'orders.x')?.arguments?.['message-ttl']).toMatchObject({
      before: 5000,
      after: 5000,
      rule: 'smaller',
      holds: 'argument',
    });
    const r2 = run([], create(pol('t', '^orders', 1, { 'message-ttl': 100 })), [
      obj('orders.x', 'classic', null, { 'x-message-ttl': 5000 }),
    ]);
    expect(byName(r2, 'orders.x')?.arguments?.['message-ttl']).toMatchObject({
      before: 5000,
      after: 100,
      holds: 'policy',
    });
  });

  it('quorum queues: the policy wins over the argument for overflow (and expires on 3.x)', () => {
    expect(valueInUse('policy', 'overflow', 'drop-head', 'reject-publish', V310)).toEqual({
      value: 'reject-publish',
      from: 'policy',
    });
    const r = run([], create(pol('e', '^q', 1, { expires: 1000 })), [
      obj('q1', 'quorum', null, { 'x-expires': 50 }),
    ]);
    expect(byName(r, 'q1')?.arguments?.expires).toMatchObject({ rule: 'policy', after: 1000 });
    const r4 = run(
      [],
      create(pol('e', '^q', 1, { expires: 1000 })),
      [obj('q1', 'quorum', null, { 'x-expires': 50 })],
      [],
      V40,
    );
    expect(byName(r4, 'q1')?.arguments?.expires).toMatchObject({ rule: 'smaller', after: 50 });
  });

  it('4.0 delivery-limit argument: a limited value beats an unlimited one', () => {
    expect(valueInUse('smaller', 'delivery-limit', -1, 5, V40)).toEqual({ value: 5, from: 'policy' });
    expect(valueInUse('smaller', 'delivery-limit', 3, 5, V40)).toEqual({ value: 3, from: 'argument' });
  });

  it("an exchange's own alternate-exchange argument wins; losing the policy's is then no loss", () => {
    const ae = pol('ae', '^orders', 1, { 'alternate-exchange': 'unrouted' }, 'exchanges');
    const r = run([ae], del(ae), [
      obj('orders.in', 'exchange', 'ae'),
      obj('orders.out', 'exchange', 'ae', { 'alternate-exchange': 'mine' }),
    ]);
    expect(byName(r, 'orders.in')?.risks).toEqual(['alternate-exchange']);
    expect(byName(r, 'orders.out')?.risks).toEqual([]);
  });
});

describe('versions', () => {
  it('queue-leader-locator vetoes classic queues on 3.x and not on 4.x', () => {
    const loc = pol('loc', '^c', 9, { 'queue-leader-locator': 'balanced' });
    expect(run([], create(loc), [obj('c1', 'classic', null)], [], V310).objects).toEqual([]);
    expect(run([], create(loc), [obj('c1', 'classic', null)], [], V40).objects.map((o) => o.name)).toEqual([
      'c1',
    ]);
  });
});

describe('summary', () => {
  it('puts what hurts first: dead-letter before TTL before limits, then ties, then the rest', () => {
    const a = pol('a', '^a', 5, { 'max-length': 1 });
    const b = pol('b', '^b', 5, { 'dead-letter-exchange': 'd' });
    const c = pol('c', '^c', 5, { 'message-ttl': 1 });
    const d = pol('d', '^d', 5, { 'queue-mode': 'lazy' });
    const all = pol('all', '.', 5, { 'max-length': 1 });
    const objects = [
      obj('a1', 'classic', 'a'),
      obj('b1', 'classic', 'b'),
      obj('c1', 'classic', 'c'),
      obj('d1', 'classic', 'd'),
    ];
    const results = [a, b, c, d].map((p) =>
      run(
        [a, b, c, d, all],
        del(p),
        objects.filter((o) => o.policy === p.name),
      ),
    );
    const merged = results.flatMap((r) => r.objects);
    expect(merged.map((o) => o.risks)).toEqual([[], ['dead-letter'], ['ttl'], []]);
    const r = run([a, b, c, d], { action: 'delete', layer: 'user', before: a, after: null }, objects);
    expect(r.summary.risks.map((x) => x.risk)).toEqual(['limit']);
    const many = simulate(
      { version: V310, user: [a, b, c], operator: [], change: edit(a, { ...a, pattern: '^zzz' }) },
      [obj('a1', 'classic', 'a')],
    );
    expect(many.summary.risks[0]?.risk).toBe('limit');
  });

  it('lists nothing when the winner and its values stay the same', () => {
    const r = run([fallback, cap], edit(cap, { ...cap, priority: -1 }), [
      obj('orders.x', 'classic', 'audit-fallback'),
    ]);
    expect(r.objects).toEqual([]);
    expect(r.summary.scanned).toEqual({ queues: 1, exchanges: 0 });
  });
});

describe('the literal-prefix index', () => {
  it.each([
    ['^orders\\.audit$', 'orders.audit'],
    ['^orders\\.', 'orders.'],
    ['^orders', 'orders'],
    ['^ab?', 'a'],
    ['^ab*c', 'a'],
    ['^ab{2}', 'a'],
    ['^a-b_c/d', 'a-b_c/d'],
    ['^a.b', 'a'],
    ['^svc\\d+\\.', 'svc'],
    ['^(a|b)', undefined],
    ['^a|b', undefined],
    ['orders', undefined],
    ['(?i)^orders', '(?i)orders'],
    ['^\\Qa.b\\E', undefined],
    ['^é', undefined],
    ['^[ab]c', undefined],
  ])('%s -> %s', (pattern, prefix) => {
    const p = literalPrefix(pattern);
    expect(p && (p.caseless ? `(?i)${p.text}` : p.text)).toBe(prefix);
  });
});

describe('the fast path equals a full re-resolution (property)', () => {
  const names = ['a', 'ab', 'abc', 'b', 'ba', 'c'];
  const patterns = [
    '^a',
    '^ab',
    'b',
    '^b',
    'c$',
    '.',
    '^abc$',
    'a|c',
    '^ab?',
    '^a*b',
    '^ab|c',
    '^(a|b)c',
    '^a\\.?b',
    '^b{1}a',
  ];
  const defs: Record<string, unknown>[] = [
    { 'max-length': 1 },
    { 'message-ttl': 5 },
    { 'delivery-limit': 2 },
    { 'max-age': '1D' },
    { 'alternate-exchange': 'x' },
  ];
  const policyArb = (i: number) =>
    fc
      .record({
        pattern: fc.constantFrom(...patterns),
        priority: fc.integer({ min: 0, max: 3 }),
        definition: fc.constantFrom(...defs),
        applyTo: fc.constantFrom('all', 'queues', 'exchanges'),
      })
      .map((p) => pol(`p${i}`, p.pattern, p.priority, p.definition, p.applyTo));

  it("every object reports a policy among the engine's after-candidates, listed or not", () => {
    fc.assert(
      fc.property(
        fc.tuple(...Array.from({ length: 6 }, (_, i) => policyArb(i))),
        fc.integer({ min: 0, max: 2 }),
        policyArb(99),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 1000 }),
        (policies, which, proposed, target, tieSeed) => {
          const before = policies;
          const victim = before[target] as Policy;
          const change: PolicyChange =
            which === 0
              ? del(victim)
              : which === 1
                ? create(proposed)
                : edit(victim, { ...proposed, name: victim.name });
          const after = [
            ...before.filter((p) => p.name !== change.before?.name),
            ...(change.after ? [change.after] : []),
          ];
          const kinds: ObjectKind[] = ['classic', 'quorum', 'stream', 'exchange'];
          const beforeSet = buildPolicySet(before, [], V310);
          const afterSet = buildPolicySet(after, [], V310);
          const objects: InventoryObject[] = [];
          for (const n of names) {
            for (const kind of kinds) {
              const c = resolve(beforeSet, n, kind).user.candidates;
              // The broker picks one of a tie; any of them will do.
              const reported = c.length ? (c[tieSeed % c.length] as Policy).name : null;
              objects.push(obj(n, kind, reported));
            }
          }
          const r = simulate({ version: V310, user: before, operator: [], change }, objects);
          expect(r.unpredictable).toEqual([]);
          for (const o of objects) {
            const expected = resolve(afterSet, o.name, o.kind as ObjectKind)
              .user.candidates.map((p) => p.name)
              .sort();
            const listed = r.objects.find((x) => x.name === o.name && x.kind === o.kind);
            const predicted = listed
              ? (listed.after.candidates ?? (listed.after.policy ? [listed.after.policy] : []))
              : o.policy
                ? [o.policy]
                : [];
            if (listed) expect([...predicted].sort()).toEqual(expected);
            else if (expected.length === 0) expect(predicted).toEqual([]);
            else expect(expected).toContain(predicted[0]);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
