import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameView, PatternCache } from '../../src/policy/pattern/pattern.ts';
import { PolicyIndex, PrefixIndex, scan } from '../../src/policy/policyIndex.ts';
import type { ObjectKind, Policy } from '../../src/policy/types.ts';
import { V310 } from '../support/policies.ts';

/**
 * src/policy/policyIndex.ts: one layer's policies read once. The prefix filing is a shortcut:
 * what it hands a name is what a plain walk over every policy would find, in the broker's order.
 */

const pol = (name: string, pattern: string, priority: number, over: Partial<Policy> = {}): Policy => ({
  vhost: '/',
  name,
  pattern,
  applyTo: 'all',
  priority,
  definition: {},
  ...over,
});

describe('PolicyIndex', () => {
  it('hands a name every applicable policy that can match it, highest priority first', () => {
    const patterns = fc.constantFrom(
      '^orders',
      '^orders\\.audit',
      '^ord',
      '^billing',
      'audit',
      '.*',
      '^(?i)ORD',
      '^o',
    );
    const policies = fc.uniqueArray(
      fc.record({
        name: fc.string({ minLength: 1, maxLength: 4 }),
        pattern: patterns,
        priority: fc.integer({ min: 0, max: 3 }),
      }),
      { selector: (p) => p.name, maxLength: 8 },
    );
    const names = fc.constantFrom('orders.audit', 'orders', 'ord', 'billing.x', 'x.audit', 'o', '');
    fc.assert(
      fc.property(policies, names, (list, name) => {
        const index = new PolicyIndex(
          list.map((p) => pol(p.name, p.pattern, p.priority)),
          V310,
        );
        const found = index
          .candidatesFor('classic', name)
          .filter((e) => e.pattern.match(nameView(name)) === true);
        const walked = [...index.byName.values()]
          .filter((e) => e.pattern.match(nameView(name)) === true)
          .sort((a, b) => b.priority - a.priority || (a.name < b.name ? -1 : 1));
        expect(found.map((e) => e.name)).toEqual(walked.map((e) => e.name));
      }),
    );
  });

  it.each<[string, ObjectKind, boolean, boolean]>([
    ['a classic queue takes max-priority', 'classic', true, true],
    ['a quorum queue refuses max-priority: reached, never applicable', 'quorum', true, false],
    ['an exchange is not reached by apply-to queues', 'exchange', false, false],
  ])('%s', (_, kind, reached, applicable) => {
    const index = new PolicyIndex(
      [pol('prio', '^q', 1, { applyTo: 'queues', definition: { 'max-priority': 5 } })],
      V310,
    );
    expect(index.reachingFor(kind, 'q1').map((e) => e.name)).toEqual(reached ? ['prio'] : []);
    expect(index.candidatesFor(kind, 'q1').map((e) => e.name)).toEqual(applicable ? ['prio'] : []);
    expect(index.applicable('prio', kind)?.name).toBe(applicable ? 'prio' : undefined);
    const e = index.byName.get('prio');
    expect(e && index.refused(e, kind)).toEqual(kind === 'quorum' ? ['max-priority'] : []);
  });

  it('replacing: answers what a fresh index of the replaced list answers, one level or two', () => {
    const policy = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      pattern: fc.constantFrom('^orders', '^orders\\.audit', '^ord', 'audit', '.*', '^(?i)ORD', '^b'),
      priority: fc.integer({ min: 0, max: 3 }),
      applyTo: fc.constantFrom('all', 'queues', 'exchanges'),
      definition: fc.constantFrom({}, { 'max-priority': 5 }, { 'max-length': 1 }),
    });
    const list = fc.uniqueArray(policy, { selector: (p) => p.name, maxLength: 5 });
    const step = fc.record({
      names: fc.array(fc.constantFrom('a', 'b', 'c', 'x'), { maxLength: 2 }),
      add: fc.option(policy, { nil: null }),
    });
    const names = ['orders.audit', 'orders', 'ord', 'ORDERS', 'billing.audit', 'b', ''];
    const kinds = ['classic', 'quorum', 'stream', 'exchange', null] as const;
    const answers = (index: PolicyIndex) =>
      kinds.map((kind) => ({
        names: [...index.byName.keys()].sort(),
        applicable: [...index.byName.keys()].sort().map((n) => index.applicable(n, kind)?.name),
        lists: names.map((n) => [
          index.reachingFor(kind, n).map((e) => e.name),
          index.candidatesFor(kind, n).map((e) => e.name),
        ]),
      }));
    const replaced = (ps: readonly Policy[], s: { names: string[]; add: Policy | null }) => [
      ...ps.filter((p) => !s.names.includes(p.name)),
      ...(s.add ? [s.add] : []),
    ];
    fc.assert(
      fc.property(list, step, step, (raw, first, second) => {
        const ps = raw.map((p) => pol(p.name, p.pattern, p.priority, p));
        const s1 = {
          names: [...first.names, ...(first.add ? [first.add.name] : [])],
          add: first.add && pol(first.add.name, first.add.pattern, first.add.priority, first.add),
        };
        const s2 = {
          names: [...second.names, ...(second.add ? [second.add.name] : [])],
          add: second.add && pol(second.add.name, second.add.pattern, second.add.priority, second.add),
        };
        const cache = new PatternCache();
        const base = new PolicyIndex(ps, V310, cache);
        // Read before replacing too: the replaced index must not depend on what its base has filed.
        answers(base);
        const one = base.replacing(s1.names, s1.add, cache);
        const two = one.replacing(s2.names, s2.add, cache);
        expect(answers(two)).toEqual(answers(new PolicyIndex(replaced(replaced(ps, s1), s2), V310)));
        expect(answers(one)).toEqual(answers(new PolicyIndex(replaced(ps, s1), V310)));
      }),
    );
  });

  it("a name's list holds what it should: every policy without a literal prefix, and those whose prefix the name starts with", () => {
    const prefix = fc.array(fc.constantFrom('A', 'a', 'B', 'b', '.', '-', '\\.', 'é'), {
      minLength: 1,
      maxLength: 5,
    });
    const policies = fc.array(
      fc.record({
        head: fc.constantFrom('^', '^', '(?i)^', ''),
        prefix,
        tail: fc.constantFrom('', '.*', '$', '\\d', '+'),
        priority: fc.integer({ min: 0, max: 3 }),
      }),
      { maxLength: 10 },
    );
    const name = fc
      .array(fc.constantFrom('A', 'a', 'B', 'b', '.', '-', 'é', 'x'), { maxLength: 7 })
      .map((a) => a.join(''));
    fc.assert(
      fc.property(policies, fc.array(name, { maxLength: 6 }), (list, names) => {
        const cache = new PatternCache();
        const sorted = list
          .map((p, i) => ({
            policy: pol(`p${i}`, `${p.head}${p.prefix.join('')}${p.tail}`, p.priority),
            name: `p${i}`,
            priority: p.priority,
            pattern: cache.get(`${p.head}${p.prefix.join('')}${p.tail}`),
          }))
          .sort((a, b) => b.priority - a.priority || (a.name < b.name ? -1 : 1));
        const index = new PrefixIndex(sorted);
        for (const n of names) {
          const expected = sorted.filter((e) => {
            const lp = e.pattern.literalPrefix;
            return lp === undefined || lp.caseless || n.startsWith(lp.text);
          });
          expect([n, index.for(n).map((e) => e.name)]).toEqual([n, expected.map((e) => e.name)]);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('tells apart prefixes whose hashes are alike ("Aa" and "BB" hash alike)', () => {
    const index = new PolicyIndex([pol('aa', '^Aa', 1), pol('bb', '^BB', 2), pol('all', '.*', 0)], V310);
    expect(index.candidatesFor('classic', 'Aa.x').map((e) => e.name)).toEqual(['aa', 'all']);
    expect(index.candidatesFor('classic', 'BB.x').map((e) => e.name)).toEqual(['bb', 'all']);
    expect(index.candidatesFor('classic', 'Ab.x').map((e) => e.name)).toEqual(['all']);
  });

  it('knows no vetoes for a queue type it does not know', () => {
    const index = new PolicyIndex([pol('prio', '^q', 1, { definition: { 'max-priority': 5 } })], V310);
    expect(index.candidatesFor(null, 'q1').map((e) => e.name)).toEqual(['prio']);
  });
});

describe('scan', () => {
  const index = new PolicyIndex(
    [pol('low', '^orders', 0), pol('a', '^orders', 5), pol('b', '^ord', 5), pol('other', '^billing', 9)],
    V310,
  );

  it('stops below the first match: one winner, or a tie at its priority', () => {
    const list = index.candidatesFor('classic', 'orders.audit');
    expect(scan(list, nameView('orders.audit')).candidates.map((e) => e.name)).toEqual(['a', 'b']);
    expect(
      scan(list, nameView('orders.audit'), (e) => (e.name === 'b' ? false : undefined)).candidates.map(
        (e) => e.name,
      ),
    ).toEqual(['a']);
  });

  it('keeps what it cannot decide apart, and walks on past it', () => {
    const list = index.candidatesFor('classic', 'orders.audit');
    const s = scan(list, nameView('orders.audit'), (e) => (e.priority === 5 ? 'undecidable' : undefined));
    expect(s.undecided.map((e) => e.name)).toEqual(['a', 'b']);
    expect(s.candidates.map((e) => e.name)).toEqual(['low']);
  });
});
