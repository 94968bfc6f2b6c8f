import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  actionOf,
  canonical,
  differences,
  fromCanonical,
  samePolicy,
  stateOf,
  writeActionOf,
} from '../../src/policy/compare.ts';
import type { Policy } from '../../src/policy/types.ts';

describe('recorded state', () => {
  const policy = fc.record({
    vhost: fc.constantFrom('/', 'a', 'b/c'),
    name: fc.string({ minLength: 1, maxLength: 6 }),
    pattern: fc.string({ maxLength: 8 }),
    applyTo: fc.constantFrom('all', 'queues', 'exchanges'),
    priority: fc.integer({ min: -5, max: 20 }),
    definition: fc.dictionary(
      fc.constantFrom('max-length', 'message-ttl', 'expires', 'dead-letter-exchange'),
      fc.oneof(fc.integer(), fc.string()),
    ),
  });

  it('canonical content ignores key order and round-trips', () => {
    fc.assert(
      fc.property(policy, (p) => {
        const reversed = { ...p, definition: Object.fromEntries(Object.entries(p.definition).reverse()) };
        expect(canonical(reversed)).toBe(canonical(p));
        expect(canonical(fromCanonical(p, canonical(p)))).toBe(canonical(p));
      }),
    );
  });

  it('differences lead from one state to the other, and are empty between equal states', () => {
    const layers = fc.record({
      user: fc.array(policy, { maxLength: 6 }),
      operator: fc.array(policy, { maxLength: 3 }),
    });
    fc.assert(
      fc.property(layers, layers, (a, b) => {
        const sa = stateOf(a);
        const sb = stateOf(b);
        expect(differences(sa, sa)).toEqual([]);
        const applied = new Map(sa);
        for (const t of differences(sa, sb)) {
          const key = JSON.stringify([t.layer, t.vhost, t.name]);
          expect(canonical(t.before)).toBe(sa.get(key) ?? '');
          if (t.after) applied.set(key, canonical(t.after as Policy));
          else applied.delete(key);
        }
        expect(applied).toEqual(sb);
      }),
    );
  });
});

describe('samePolicy', () => {
  const p: Policy = {
    vhost: '/',
    name: 'cap',
    pattern: '^orders',
    applyTo: 'queues',
    priority: 1,
    definition: { 'max-length': 10, 'message-ttl': 60_000 },
  };
  it.each<[string, Policy | null, Policy | null, boolean]>([
    ['the same policy', p, { ...p }, true],
    ['its keys in another order', p, { ...p, definition: { 'message-ttl': 60_000, 'max-length': 10 } }, true],
    ['another vhost and name, the same content', p, { ...p, vhost: 'v', name: 'other' }, true],
    ['another pattern', p, { ...p, pattern: '^orders\\.' }, false],
    ['another apply-to', p, { ...p, applyTo: 'all' }, false],
    ['another priority', p, { ...p, priority: 2 }, false],
    ['another value', p, { ...p, definition: { 'max-length': 11, 'message-ttl': 60_000 } }, false],
    ['a key fewer', p, { ...p, definition: { 'max-length': 10 } }, false],
    ['none and none', null, null, true],
    ['a policy and none', p, null, false],
  ])('%s', (_, a, b, same) => {
    expect(samePolicy(a, b)).toBe(same);
  });
});

describe('actionOf', () => {
  const p: Policy = { vhost: '/', name: 'p', pattern: '^a', applyTo: 'all', priority: 0, definition: {} };
  it('decides create, edit and delete from before and after, and refuses a step with neither', () => {
    expect(actionOf({ before: null, after: p })).toBe('create');
    expect(actionOf({ before: p, after: { ...p, priority: 1 } })).toBe('edit');
    expect(actionOf({ before: p, after: null })).toBe('delete');
    expect(() => actionOf({ before: null, after: null })).toThrow(/neither/);
  });
  it('writeActionOf: the same decision, and a step with neither reads as the delete it writes', () => {
    for (const t of [
      { before: null, after: p },
      { before: p, after: { ...p, priority: 1 } },
      { before: p, after: null },
    ])
      expect(writeActionOf(t)).toBe(actionOf(t));
    expect(writeActionOf({ before: null, after: null })).toBe('delete');
  });
});
