/**
 * src/plan/findings.ts: a plan's new findings read from the objects its changes reach (and those
 * of the vhost a dirty tally needs) are exactly the findings of two whole passes, now and in the
 * end state, the end's not among now's: for random worlds (shared prefixes, unanchored and
 * unreadable patterns, ties, refused keys, targets, `expires` with live numbers, operator limits
 * over the queues' own) and random sets of changes (create, edit, delete, in either layer), found
 * alike, wording included. And the few tallies that need the rest of the vhost do read it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FindingsInput, newFindings, wholeNewFindings } from '../../src/plan/findings.ts';
import type { Transition } from '../../src/policy/compare.ts';
import type { LiveQueue } from '../../src/policy/impact/impact.ts';
import { PatternCache } from '../../src/policy/pattern/pattern.ts';
import { buildPolicySet } from '../../src/policy/resolve.ts';
import type { InventoryObject } from '../../src/policy/simulate/simulate.ts';
import { touchIndex } from '../../src/policy/simulate/touch.ts';
import type { BrokerVersion, ObjectKind, Policy, PolicyLayer } from '../../src/policy/types.ts';
import { liveQueue } from '../support/live.ts';
import { policyIn, V40, V310 } from '../support/policies.ts';

const pol = policyIn('v');

/** The layer's policies once the changes are written. */
function written(now: readonly Policy[], changes: readonly Transition[], layer: PolicyLayer): Policy[] {
  const mine = changes.filter((t) => t.layer === layer);
  const replaced = new Set(mine.map((t) => t.name));
  return [...now.filter((p) => !replaced.has(p.name)), ...mine.flatMap((t) => (t.after ? [t.after] : []))];
}

interface World {
  readonly user: Policy[];
  readonly operator: Policy[];
  readonly changes: Transition[];
  readonly objects: InventoryObject[];
  readonly live: Map<string, LiveQueue | null>;
  readonly version: BrokerVersion;
}

/** The input plan.ts hands findings.ts: the objects split by whether a change may reach them, in order. */
function inputOf(w: World): FindingsInput {
  const cache = new PatternCache();
  const touched = touchIndex(w.changes, w.version, cache);
  const exchanges = new Set(w.objects.filter((o) => o.kind === 'exchange').map((o) => o.name));
  return {
    now: buildPolicySet(w.user, w.operator, w.version, cache),
    end: buildPolicySet(
      written(w.user, w.changes, 'user'),
      written(w.operator, w.changes, 'operator'),
      w.version,
      cache,
    ),
    touched: w.objects.filter((o) => touched(o).length > 0),
    untouched: w.objects.filter((o) => touched(o).length === 0),
    live: w.live,
    world: { exchanges, upstreams: new Set(['up']), upstreamSets: new Set() },
    at: 0,
    cache,
  };
}

const word = fc.constantFrom('a', 'ab', 'a.b', 'b', 'x.y', 'a.', '');
const patternOf = fc.oneof(
  word.map((w) => `^${w.replace(/\./g, '\\.')}`),
  word.map((w) => w.replace(/\./g, '\\.')),
  word.map((w) => `^${w}.*$`),
  fc.constantFrom('.*', '^a|^b', '(?i)^A', '^(?=a)', '^a\\d'),
);
const definition = fc.constantFrom<Record<string, unknown>>(
  { 'max-length': 5 },
  { 'max-length': 50 },
  { 'message-ttl': 1000 },
  { 'max-age': '1D' },
  { 'dead-letter-exchange': 'nowhere' },
  { 'dead-letter-exchange': 'dlx' },
  { expires: 60_000 },
  { expires: 60_000, 'max-length': 9 },
  { 'federation-upstream': 'gone' },
  { 'alternate-exchange': 'nowhere' },
);
const operatorDefinition = fc.constantFrom<Record<string, unknown>>(
  { 'max-length': 20 },
  { 'max-length': 1000 },
  { expires: 60_000 },
  { 'message-ttl': 5000 },
);
const policyArb = fc.record({
  pattern: patternOf,
  priority: fc.integer({ min: 0, max: 3 }),
  applyTo: fc.constantFrom('all', 'queues', 'exchanges', 'classic_queues', 'quorum_queues', 'streams'),
  definition,
});
const operatorArb = fc.record({
  pattern: patternOf,
  priority: fc.integer({ min: 0, max: 2 }),
  definition: operatorDefinition,
});
const nameArb = fc
  .tuple(word, fc.constantFrom('', '1', '.z', 'b', 'a', 'dlx'))
  .map(([w, t]) => `${w}${t}` || 'q');
const objectArb = fc.record({
  name: nameArb,
  kind: fc.constantFrom<ObjectKind | null>('classic', 'classic', 'quorum', 'stream', 'exchange', null),
  own: fc.option(fc.constantFrom(3, 30, 3000), { nil: undefined }),
  messages: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  consumers: fc.boolean(),
});

/** One change of a layer's policies: an edit or a delete of the i-th, or a create. */
const changeArb = fc.record({
  layer: fc.constantFrom<PolicyLayer>('user', 'user', 'operator'),
  at: fc.nat(),
  what: fc.constantFrom('edit', 'edit', 'delete', 'create'),
  user: policyArb,
  operator: operatorArb,
});

const worldArb = fc
  .record({
    users: fc.array(policyArb, { maxLength: 7 }),
    operators: fc.array(operatorArb, { maxLength: 3 }),
    objects: fc.uniqueArray(objectArb, { maxLength: 16, selector: (o) => `${o.name}:${o.kind}` }),
    changes: fc.array(changeArb, { minLength: 1, maxLength: 4 }),
    version: fc.constantFrom(V310, V40),
  })
  .map(({ users, operators, objects, changes, version }): World => {
    const user = users.map((p, i) => pol(`u${i}`, p.pattern, p.priority, p.definition, p.applyTo));
    const operator = operators.map((p, i) => pol(`o${i}`, p.pattern, p.priority, p.definition, 'queues'));
    const set: Transition[] = [];
    const named = new Set<string>();
    changes.forEach((c, n) => {
      const layer = c.layer === 'user' ? user : operator;
      const existing = c.what === 'create' || layer.length === 0 ? undefined : layer[c.at % layer.length];
      const name = existing?.name ?? `${c.layer === 'user' ? 'u' : 'o'}new${n}`;
      // Each policy at most once in a set.
      if (named.has(`${c.layer}:${name}`)) return;
      named.add(`${c.layer}:${name}`);
      const fields =
        c.layer === 'user'
          ? pol(name, c.user.pattern, c.user.priority, c.user.definition, c.user.applyTo)
          : pol(name, c.operator.pattern, c.operator.priority, c.operator.definition, 'queues');
      set.push({
        layer: c.layer,
        vhost: 'v',
        name,
        before: existing ?? null,
        after: existing && c.what === 'delete' ? null : fields,
      });
    });
    const live = new Map<string, LiveQueue | null>();
    const inventory: InventoryObject[] = objects.map((o) => {
      if (o.kind !== 'exchange' && o.messages !== undefined)
        live.set(o.name, { ...liveQueue(o.messages), consumers: o.consumers ? 1 : 0 });
      const args: Record<string, unknown> =
        o.kind === 'quorum' || o.kind === 'stream' ? { 'x-queue-type': o.kind } : {};
      if (o.own !== undefined && o.kind !== 'exchange' && o.kind !== 'stream') args['x-max-length'] = o.own;
      return { name: o.name, kind: o.kind, arguments: args, policy: undefined };
    });
    return { user, operator, changes: set, objects: inventory, live, version };
  });

describe('a plan’s new findings from the objects its changes reach', () => {
  it('are exactly those of two whole passes, now and in the end state', async () => {
    await fc.assert(
      fc.asyncProperty(worldArb, async (w) => {
        const input = inputOf(w);
        expect(await newFindings(input)).toEqual(await wholeNewFindings(input));
      }),
      { numRuns: 400 },
    );
  });

  it('read the rest of the vhost for a tally that needs it: a policy no change reaches, shadowed by a new one on one object', async () => {
    // `wide` governs s.1 (reached by the new policy) and w.1, w.2 (reached by no change): once
    // `narrow` takes s.1, wide governs w.1 and w.2 still, so it is not shadowed; only w.1 and w.2
    // can say so. A second policy `only` governs s.2 alone: taken over, it is shadowed.
    const wide = pol('wide', '^(s|w)\\.', 1, { 'max-length': 5 }, 'queues');
    const only = pol('only', '^s\\.2$', 2, { 'max-length': 6 }, 'queues');
    const narrow = pol('narrow', '^s\\.', 5, { 'max-length': 7 }, 'queues');
    const objects = ['w.1', 's.1', 'w.2', 's.2'].map(
      (name): InventoryObject => ({ name, kind: 'classic', arguments: {}, policy: undefined }),
    );
    const input = inputOf({
      user: [wide, only],
      operator: [],
      changes: [{ layer: 'user', vhost: 'v', name: 'narrow', before: null, after: narrow }],
      objects,
      live: new Map(),
      version: V40,
    });
    expect(input.untouched.map((o) => o.name)).toEqual(['w.1', 'w.2']);
    const found = await newFindings(input);
    // Read from s.1 and s.2 alone, `wide` would be shadowed too.
    expect(found.map((f) => [f.kind, f.policy, f.objects])).toEqual([['shadowed', 'only', ['s.2']]]);
    expect(found).toEqual(await wholeNewFindings(input));
  });
});
