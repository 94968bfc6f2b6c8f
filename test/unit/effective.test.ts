import { describe, expect, it } from 'vitest';
import {
  commonDiff,
  diffEffective,
  type Effective,
  effectiveDefinition,
  isEmptyDiff,
} from '../../src/policy/effective.ts';
import { V310 } from '../support/policies.ts';

/** src/policy/effective.ts: what an object gets from its two policies, and how two states differ. */

describe('effectiveDefinition', () => {
  it.each<[string, Record<string, unknown> | undefined, Record<string, unknown> | undefined, Effective]>([
    ['no policy', undefined, undefined, {}],
    [
      'the user policy alone',
      { 'message-ttl': 1000 },
      undefined,
      { 'message-ttl': { value: 1000, from: 'policy' } },
    ],
    [
      'the operator policy alone',
      undefined,
      { 'max-length': 5 },
      { 'max-length': { value: 5, from: 'operator-policy' } },
    ],
    [
      'a limit both set: the stricter value, from both',
      { 'max-length': 100, 'message-ttl': 1000 },
      { 'max-length': 10 },
      { 'max-length': { value: 10, from: 'both' }, 'message-ttl': { value: 1000, from: 'policy' } },
    ],
    [
      'the stricter value is the user one',
      { 'max-length': 3 },
      { 'max-length': 10 },
      { 'max-length': { value: 3, from: 'both' } },
    ],
  ])('%s', (_, user, operator, expected) => {
    expect(effectiveDefinition(user, operator, V310)).toEqual(expected);
  });
});

const eff = (d: Record<string, unknown>): Effective =>
  Object.fromEntries(Object.entries(d).map(([k, value]) => [k, { value, from: 'policy' as const }]));

describe('diffEffective', () => {
  it('names what is lost, gained and changed, and nothing that stays', () => {
    const before = eff({ 'message-ttl': 1000, 'max-length': 10, 'dead-letter-exchange': 'dlx' });
    const after = eff({ 'message-ttl': 1000, 'max-length': 20, expires: 60_000 });
    expect(diffEffective(before, after)).toEqual({
      lost: { 'dead-letter-exchange': 'dlx' },
      gained: { expires: 60_000 },
      changed: { 'max-length': [10, 20] },
    });
  });

  it('compares values as JSON: an equal list is no change, and a source alone is none', () => {
    const before: Effective = { k: { value: ['a', 'b'], from: 'policy' } };
    const after: Effective = { k: { value: ['a', 'b'], from: 'both' } };
    expect(isEmptyDiff(diffEffective(before, after))).toBe(true);
    expect(isEmptyDiff(diffEffective(before, eff({ k: ['b', 'a'] })))).toBe(false);
  });
});

describe('commonDiff', () => {
  it('keeps what every diff says alike, and is empty for no diffs', () => {
    const a = { lost: { x: 1, y: 2 }, gained: { g: 'dlx' }, changed: { m: [1, 2] as [unknown, unknown] } };
    const b = { lost: { x: 1, y: 3 }, gained: { g: 'dlx' }, changed: { m: [1, 3] as [unknown, unknown] } };
    expect(commonDiff([a, b])).toEqual({ lost: { x: 1 }, gained: { g: 'dlx' }, changed: {} });
    expect(commonDiff([a])).toEqual(a);
    expect(isEmptyDiff(commonDiff([]))).toBe(true);
  });
});
