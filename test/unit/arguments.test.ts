import { describe, expect, it } from 'vitest';
import { type ArgumentRule, argumentName, argumentRule, valueInUse } from '../../src/policy/arguments.ts';
import type { ObjectKind } from '../../src/policy/types.ts';
import { V40, V310 } from '../support/policies.ts';

/**
 * src/policy/arguments.ts: how the broker combines an object's own argument with a policy's
 * value for the same key (the rows are proven on the brokers by test/integration/arguments.test.ts).
 */

describe('argumentRule', () => {
  it.each<[string, ObjectKind, 'v310' | 'v40', ArgumentRule | undefined]>([
    ['message-ttl', 'classic', 'v310', 'smaller'],
    ['dead-letter-exchange', 'classic', 'v310', 'argument'],
    ['dead-letter-exchange', 'quorum', 'v40', 'argument'],
    ['expires', 'quorum', 'v310', 'policy'],
    ['expires', 'quorum', 'v40', 'smaller'],
    ['overflow', 'quorum', 'v40', 'policy'],
    ['max-in-memory-length', 'quorum', 'v310', 'smaller'],
    ['max-in-memory-length', 'quorum', 'v40', undefined],
    ['consumer-timeout', 'stream', 'v40', 'smaller'],
    ['max-age', 'stream', 'v310', 'policy'],
    ['message-ttl', 'stream', 'v310', undefined],
    ['alternate-exchange', 'exchange', 'v310', 'argument'],
    ['consumer-timeout', 'exchange', 'v40', undefined],
  ])('%s on a %s (%s): %s', (key, kind, version, rule) => {
    expect(argumentRule(key, kind, version === 'v40' ? V40 : V310)).toBe(rule);
  });
});

describe('argumentName', () => {
  it('is x-<key> on a queue and the key itself on an exchange', () => {
    expect(argumentName('message-ttl', 'quorum')).toBe('x-message-ttl');
    expect(argumentName('alternate-exchange', 'exchange')).toBe('alternate-exchange');
  });
});

describe('valueInUse', () => {
  it.each<[string, ArgumentRule, unknown, unknown, { value: unknown; from: string }]>([
    ['neither set', 'smaller', undefined, undefined, { value: undefined, from: 'none' }],
    ['the policy alone', 'argument', undefined, 5, { value: 5, from: 'policy' }],
    ['the argument alone', 'policy', 7, undefined, { value: 7, from: 'argument' }],
    ['argument rule: the argument holds', 'argument', 'dlx-a', 'dlx-p', { value: 'dlx-a', from: 'argument' }],
    ['policy rule: the policy holds', 'policy', 7, 5, { value: 5, from: 'policy' }],
    ['smaller: the argument is smaller', 'smaller', 3, 10, { value: 3, from: 'argument' }],
    ['smaller: the policy is smaller', 'smaller', 30, 10, { value: 10, from: 'policy' }],
    ['smaller: equal values come from both', 'smaller', 10, 10, { value: 10, from: 'both' }],
    ['smaller, not numbers: the argument holds', 'smaller', 'a', 10, { value: 'a', from: 'argument' }],
  ])('%s', (_, rule, argument, policy, expected) => {
    expect(valueInUse(rule, 'max-length', argument, policy, V310)).toEqual(expected);
  });
});
