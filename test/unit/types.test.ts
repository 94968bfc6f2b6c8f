import { describe, expect, it } from 'vitest';
import {
  atLeast,
  type BrokerVersion,
  formatVersion,
  MAX_NAME_BYTES,
  parseVersion,
  utf8Length,
} from '../../src/policy/types.ts';

/** src/policy/types.ts: the broker's version as it reports it, and names measured as it measures them. */

describe('parseVersion', () => {
  it.each<[string, BrokerVersion | null]>([
    ['3.10.8', { major: 3, minor: 10, patch: 8 }],
    ['4.0', { major: 4, minor: 0, patch: 0 }],
    ['4.3.6+1.g0123abc', { major: 4, minor: 3, patch: 6 }],
    ['4.1.0-rc.1', { major: 4, minor: 1, patch: 0 }],
    ['four', null],
    ['', null],
  ])('%s', (text, version) => {
    expect(parseVersion(text)).toEqual(version);
    if (version) expect(parseVersion(formatVersion(version))).toEqual(version);
  });
});

describe('atLeast', () => {
  const v = { major: 3, minor: 12, patch: 7 };
  it.each<[number, number, number, boolean]>([
    [3, 12, 7, true],
    [3, 12, 8, false],
    [3, 11, 99, true],
    [3, 13, 0, false],
    [2, 99, 99, true],
    [4, 0, 0, false],
  ])('3.12.7 >= %i.%i.%i: %s', (major, minor, patch, expected) => {
    expect(atLeast(v, major, minor, patch)).toBe(expected);
  });
});

describe('utf8Length', () => {
  it('counts bytes as the broker does, not UTF-16 units', () => {
    expect(utf8Length('orders')).toBe(6);
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('€')).toBe(3);
    expect(utf8Length('🐇')).toBe(4);
    expect(utf8Length('é'.repeat(128))).toBeGreaterThan(MAX_NAME_BYTES);
  });
});
