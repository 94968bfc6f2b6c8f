/**
 * Where a value comes from once the object's own arguments are counted (src/policy/provenance.ts).
 * The rows of the broker's precedence are proven by behaviour in
 * test/integration/arguments-provenance.test.ts; here, the bookkeeping around them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argumentRule } from '../../src/policy/arguments.ts';
import { argumentsApply, withArguments } from '../../src/policy/provenance.ts';
import { OBJECT_KINDS } from '../../src/policy/types.ts';
import { V40, V310 } from '../support/policies.ts';

describe('withArguments', () => {
  it.each([
    // kind, version, layers, arguments, key, expected
    [
      'classic',
      V310,
      { 'message-ttl': { value: 5000, from: 'policy' } },
      { 'x-message-ttl': 1000 },
      'message-ttl',
      { value: 1000, from: 'arguments' },
    ],
    [
      'classic',
      V310,
      { 'message-ttl': { value: 500, from: 'both' } },
      { 'x-message-ttl': 1000 },
      'message-ttl',
      { value: 500, from: 'both' },
    ],
    [
      'classic',
      V310,
      { 'dead-letter-exchange': { value: 'p', from: 'policy' } },
      { 'x-dead-letter-exchange': 'a' },
      'dead-letter-exchange',
      { value: 'a', from: 'arguments' },
    ],
    [
      'quorum',
      V310,
      { overflow: { value: 'drop-head', from: 'policy' } },
      { 'x-overflow': 'reject-publish' },
      'overflow',
      { value: 'drop-head', from: 'policy' },
    ],
    [
      'quorum',
      V310,
      { expires: { value: 600000, from: 'operator-policy' } },
      { 'x-expires': 1000 },
      'expires',
      { value: 600000, from: 'operator-policy' },
    ],
    [
      'quorum',
      V40,
      { expires: { value: 600000, from: 'policy' } },
      { 'x-expires': 1000 },
      'expires',
      { value: 1000, from: 'arguments' },
    ],
    [
      'classic',
      V310,
      {},
      { 'x-dead-letter-exchange': 'a' },
      'dead-letter-exchange',
      { value: 'a', from: 'arguments' },
    ],
    [
      'exchange',
      V310,
      { 'alternate-exchange': { value: 'p', from: 'policy' } },
      { 'alternate-exchange': 'a' },
      'alternate-exchange',
      { value: 'a', from: 'arguments' },
    ],
    [
      'classic',
      V310,
      { 'max-length': { value: 3, from: 'policy' } },
      { 'x-max-length': 3 },
      'max-length',
      { value: 3, from: 'policy' },
    ],
  ] as const)('%s %o: %o with %o -> %s', (kind, version, layers, args, key, expected) => {
    expect(withArguments(layers, args, kind, version)[key]).toEqual(expected);
  });

  it('leaves arguments that no policy key matches out (x-queue-type is not a value a policy sets)', () => {
    expect(withArguments({}, { 'x-queue-type': 'quorum', 'x-max-priority': 5 }, 'classic', V310)).toEqual({});
  });

  it('never invents a key, never drops one, and says "arguments" only for the argument\'s own value', () => {
    const key = fc.constantFrom(
      'message-ttl',
      'expires',
      'max-length',
      'dead-letter-exchange',
      'overflow',
      'delivery-limit',
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...OBJECT_KINDS),
        fc.constantFrom(V310, V40),
        fc.dictionary(
          key,
          fc.record({
            value: fc.integer({ min: -5, max: 100 }),
            from: fc.constantFrom('policy', 'operator-policy', 'both') as fc.Arbitrary<
              'policy' | 'operator-policy' | 'both'
            >,
          }),
        ),
        fc.dictionary(
          key.map((k) => `x-${k}`),
          fc.integer({ min: -5, max: 100 }),
        ),
        (kind, version, layers, args) => {
          const out = withArguments(layers, args, kind, version);
          for (const k of Object.keys(layers)) expect(out[k]).toBeDefined();
          for (const [k, v] of Object.entries(out)) {
            const arg = args[kind === 'exchange' ? k : `x-${k}`];
            if (v.from === 'arguments') expect(v.value).toBe(arg);
            else expect(v).toEqual(layers[k]);
            if (!(k in layers)) expect(argumentRule(k, kind, version)).toBeDefined();
          }
        },
      ),
    );
  });

  it('argumentsApply: where it says none applies, withArguments changes no value', () => {
    const key = fc.constantFrom(
      'message-ttl',
      'dead-letter-exchange',
      'delivery-limit',
      'queue-type',
      'max-priority',
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...OBJECT_KINDS),
        fc.constantFrom(V310, V40),
        fc.dictionary(
          key,
          fc.record({ value: fc.integer({ min: -5, max: 100 }), from: fc.constant('policy' as const) }),
        ),
        fc.dictionary(
          fc.oneof(
            key,
            key.map((k) => `x-${k}`),
          ),
          fc.integer({ min: -5, max: 100 }),
        ),
        (kind, version, layers, args) => {
          const out = withArguments(layers, args, kind, version);
          const values = (r: Record<string, { value: unknown }>) =>
            Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.value]));
          if (!argumentsApply(args, kind, version)) expect(values(out)).toEqual(values(layers));
        },
      ),
    );
  });
});
