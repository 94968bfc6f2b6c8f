import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { effectiveDefinition } from '../../src/policy/effective.ts';
import { mergeOperatorValue, vetoedKeys } from '../../src/policy/keys.ts';
import { buildPolicySet, explainLosers, NameTooLongError, resolve } from '../../src/policy/resolve.ts';
import type { ObjectKind } from '../../src/policy/types.ts';
import { policyIn, V40, V310 } from '../support/policies.ts';

const pol = policyIn('lab');

const lab = [
  pol('audit-retention', '^orders\\.audit$', 10, { 'dead-letter-exchange': 'audit.dlx' }, 'queues'),
  pol('audit-fallback', '^orders\\.', 1, { 'message-ttl': 3_600_000 }, 'queues'),
];

describe('resolution', () => {
  it('the highest-priority match wins alone; the loser contributes nothing', () => {
    const r = resolve(buildPolicySet(lab, [], V310), 'orders.audit', 'classic');
    expect(r.user.candidates.map((p) => p.name)).toEqual(['audit-retention']);
    const { alsoMatched } = explainLosers(r.user, r.user.candidates[0] ?? null);
    expect(alsoMatched).toEqual([{ policy: lab[1], reason: 'lower-priority' }]);
    expect(effectiveDefinition(r.user.candidates[0]?.definition, undefined, V310)).toEqual({
      'dead-letter-exchange': { value: 'audit.dlx', from: 'policy' },
    });
  });

  it('a stream under a message-ttl policy is governed by nothing: the key is vetoed', () => {
    const r = resolve(buildPolicySet(lab, [], V310), 'orders.events', 'stream');
    expect(r.user.candidates).toEqual([]);
    expect(r.user.matches).toEqual([{ policy: lab[1], refused: ['message-ttl'] }]);
    expect(explainLosers(r.user, null).alsoMatched).toEqual([
      { policy: lab[1], reason: 'refused-key', keys: ['message-ttl'] },
    ]);
  });

  it('a higher policy with only irrelevant keys shadows a useful one (no "useful key" rule)', () => {
    const set = buildPolicySet(
      [pol('ae', '.*', 30, { 'alternate-exchange': 'ae2' }), pol('len', '.*', 0, { 'max-length': 5 })],
      [],
      V310,
    );
    for (const kind of ['classic', 'quorum', 'stream'] as const) {
      expect(resolve(set, 'q', kind).user.candidates.map((p) => p.name)).toEqual(['ae']);
    }
  });

  it('equal top priorities are a tie with every candidate named', () => {
    const set = buildPolicySet(
      [
        pol('t-b', 'x', 5, { 'max-length': 1 }),
        pol('t-a', 'x', 5, { 'max-length': 2 }),
        pol('low', 'x', 1, { expires: 5 }),
      ],
      [],
      V310,
    );
    const r = resolve(set, 'x', 'classic');
    expect(r.user.candidates.map((p) => p.name).sort()).toEqual(['t-a', 't-b']);
    expect(
      explainLosers(r.user, r.user.candidates.find((p) => p.name === 't-b') ?? null).alsoMatched.map((m) => [
        m.policy.name,
        m.reason,
      ]),
    ).toEqual([
      ['t-a', 'same-priority'],
      ['low', 'lower-priority'],
    ]);
  });

  it('scope separates kinds', () => {
    const set = buildPolicySet(
      [
        pol('ex', '.*', 1, { 'alternate-exchange': 'a' }, 'exchanges'),
        pol('cq', '.*', 1, { 'max-length': 1 }, 'classic_queues'),
      ],
      [],
      V40,
    );
    expect(resolve(set, 'n', 'exchange').user.candidates.map((p) => p.name)).toEqual(['ex']);
    expect(resolve(set, 'n', 'classic').user.candidates.map((p) => p.name)).toEqual(['cq']);
    expect(resolve(set, 'n', 'quorum').user.candidates).toEqual([]);
  });

  it('an unreadable pattern that could outrank the winner leaves the answer undecided', () => {
    const set = buildPolicySet(
      [pol('look', '(?=o)', 9, { 'max-length': 1 }), pol('plain', 'o', 1, { 'max-length': 2 })],
      [],
      V310,
    );
    const r = resolve(set, 'orders', 'classic');
    expect(r.user.decided).toBe(false);
    expect(r.user.unreadable.map((u) => u.policy.name)).toEqual(['look']);
  });

  it('refuses a name over 255 bytes before any pattern runs', () => {
    const set = buildPolicySet(lab, [], V310);
    expect(() => resolve(set, 'é'.repeat(128), 'classic')).toThrow(NameTooLongError);
    expect(() => resolve(set, 'a'.repeat(255), 'classic')).not.toThrow();
  });

  it('the operator layer: limits both set take the stricter value', () => {
    expect(
      effectiveDefinition(
        { 'message-ttl': 3_600_000, 'max-length': 10 },
        { 'message-ttl': 60_000, 'max-length': 100 },
        V310,
      ),
    ).toEqual({ 'message-ttl': { value: 60_000, from: 'both' }, 'max-length': { value: 10, from: 'both' } });
    expect(mergeOperatorValue('delivery-limit', -1, 5, V40)).toBe(5);
    expect(mergeOperatorValue('delivery-limit', 3, 5, V310)).toBe(3);
    expect(mergeOperatorValue('overflow', 'drop-head', 'reject-publish', V40)).toBe('reject-publish');
  });

  it('veto lists follow the version', () => {
    expect(vetoedKeys('classic', V310).has('queue-leader-locator')).toBe(true);
    expect(vetoedKeys('classic', V40).has('queue-leader-locator')).toBe(false);
    expect(vetoedKeys('classic', V40).has('max-in-memory-length')).toBe(true);
    expect(vetoedKeys('classic', V310).has('max-in-memory-length')).toBe(false);
    expect(vetoedKeys('exchange', V40).size).toBe(0);
  });
});

describe('resolution properties', () => {
  const KEYS = [
    'message-ttl',
    'max-length',
    'delivery-limit',
    'max-age',
    'alternate-exchange',
    'dead-letter-exchange',
  ];
  const arbPolicy = fc.record({
    name: fc.string({ minLength: 1, maxLength: 4 }),
    pattern: fc.constantFrom('^a', 'a', 'b$', '^ab$', '.*', '(?i)A'),
    priority: fc.integer({ min: 0, max: 3 }),
    applyTo: fc.constantFrom('all', 'queues', 'exchanges', 'classic_queues', 'quorum_queues', 'streams'),
    keys: fc.subarray(KEYS, { minLength: 1 }),
  });
  const arbPolicies = fc
    .uniqueArray(arbPolicy, { selector: (p) => p.name, maxLength: 8 })
    .map((list) =>
      list.map((p) =>
        pol(
          p.name,
          p.pattern,
          p.priority,
          Object.fromEntries(p.keys.map((k) => [k, k === 'max-age' ? '1D' : 1])),
          p.applyTo,
        ),
      ),
    );
  const arbKind = fc.constantFrom<ObjectKind>('classic', 'quorum', 'stream', 'exchange');
  const arbName = fc.constantFrom('a', 'ab', 'b', 'ba', 'x', 'A');

  it('candidates are exactly the applicable matches of the highest priority', () => {
    fc.assert(
      fc.property(arbPolicies, arbKind, arbName, (policies, kind, name) => {
        const r = resolve(buildPolicySet(policies, [], V40), name, kind);
        const applicable = r.user.matches.filter((m) => m.refused.length === 0);
        const top = Math.max(...applicable.map((m) => m.policy.priority));
        expect(new Set(r.user.candidates.map((p) => p.name))).toEqual(
          new Set(applicable.filter((m) => m.policy.priority === top).map((m) => m.policy.name)),
        );
      }),
    );
  });

  it('deleting the winner hands the object to the next match, never back to a default', () => {
    fc.assert(
      fc.property(arbPolicies, arbKind, arbName, (policies, kind, name) => {
        const before = resolve(buildPolicySet(policies, [], V40), name, kind).user;
        const [winner] = before.candidates;
        if (!winner || before.candidates.length > 1) return;
        const after = resolve(
          buildPolicySet(
            policies.filter((p) => p.name !== winner.name),
            [],
            V40,
          ),
          name,
          kind,
        ).user;
        const rest = before.matches.filter((m) => m.refused.length === 0 && m.policy.name !== winner.name);
        const top = Math.max(...rest.map((m) => m.policy.priority));
        expect(after.candidates.map((p) => p.name).sort()).toEqual(
          rest
            .filter((m) => m.policy.priority === top)
            .map((m) => m.policy.name)
            .sort(),
        );
      }),
    );
  });

  it('a policy with a vetoed key never governs that type', () => {
    fc.assert(
      fc.property(arbPolicies, arbKind, arbName, (policies, kind, name) => {
        const r = resolve(buildPolicySet(policies, [], V40), name, kind);
        const vetoes = vetoedKeys(kind, V40);
        for (const p of r.user.candidates)
          expect(Object.keys(p.definition).some((k) => vetoes.has(k))).toBe(false);
      }),
    );
  });

  it('the operator merge never loosens a limit the user policy sets', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.constantFrom('message-ttl', 'max-length', 'expires', 'max-length-bytes'),
        (u, o, key) => {
          const v = mergeOperatorValue(key, u, o, V310) as number;
          expect(v).toBeLessThanOrEqual(u);
          expect(v).toBeLessThanOrEqual(o);
          expect([u, o]).toContain(v);
        },
      ),
    );
  });
});
