import { describe, expect, it } from 'vitest';
import type { PolicyLayer } from '../../src/policy/types.ts';
import type { Problem } from '../../src/policy/validate/problem.ts';
import {
  checkDefinition,
  checkScope,
  describeValue,
  inexactNumber,
} from '../../src/policy/validate/validateDefinition.ts';
import { V40, V310 } from '../support/policies.ts';

/**
 * src/policy/validate/validateDefinition.ts on its own: a definition's keys and values for the broker's
 * version (validate.test.ts covers the whole validation that calls it).
 */

function problems(definition: Record<string, unknown>, layer: PolicyLayer = 'user', version = V310) {
  const refused: Problem[] = [];
  const warned: Problem[] = [];
  checkDefinition(
    definition,
    layer,
    version,
    undefined,
    (p) => refused.push(p),
    (p) => warned.push(p),
  );
  return { refused: refused.map((p) => p.code), warned: warned.map((p) => p.code) };
}

describe('checkDefinition', () => {
  it.each<[string, Record<string, unknown>, PolicyLayer, 'v310' | 'v40', string[], string[]]>([
    ['a known key with a good value', { 'max-length': 10 }, 'user', 'v310', [], []],
    ['a misspelt key', { 'max-lenght': 10 }, 'user', 'v310', ['unknown-key'], []],
    ['a number where text belongs', { 'dead-letter-exchange': 5 }, 'user', 'v310', ['bad-value'], []],
    ['a negative limit', { 'max-length': -1 }, 'user', 'v310', ['negative-limit'], []],
    ['a number beyond 2^53', { 'max-length': 2 ** 60 }, 'user', 'v310', ['number-inexact'], []],
    ['mirroring on 4.0', { 'ha-mode': 'all' }, 'user', 'v40', ['mirroring-removed'], []],
    ['mirroring on 3.10', { 'ha-mode': 'all' }, 'user', 'v310', [], ['mirroring-deprecated']],
    [
      'a key an operator policy may not set',
      { 'dead-letter-exchange': 'dlx' },
      'operator',
      'v310',
      ['operator-key'],
      [],
    ],
  ])('%s', (_, definition, layer, version, refused, warned) => {
    const found = problems(definition, layer, version === 'v40' ? V40 : V310);
    expect(found.refused).toEqual(refused);
    expect(found.warned).toEqual(warned);
  });
});

describe('checkScope', () => {
  const scope = (definition: Record<string, unknown>, applyTo: string) => {
    const warned: Problem[] = [];
    checkScope(definition, applyTo, V310, (p) => warned.push(p));
    return warned.map((p) => p.code);
  };

  it('warns when every type the apply-to reaches refuses a key, and only then', () => {
    expect(scope({ 'max-age': '1D' }, 'classic_queues')).toEqual(['vetoed-everywhere']);
    expect(scope({ 'max-age': '1D' }, 'queues')).toEqual([]);
    expect(scope({ 'max-length': 10 }, 'classic_queues')).toEqual([]);
  });
});

describe('describeValue and inexactNumber', () => {
  it.each<[unknown, string]>([
    ['dlx', '"dlx"'],
    [null, 'null'],
    [[1], 'a list'],
    [{ a: 1 }, 'an object'],
    [5, '5'],
    [true, 'true'],
  ])('%j reads as %s', (v, words) => {
    expect(describeValue(v)).toBe(words);
  });

  it('finds the first number JSON cannot carry exactly, nested ones included', () => {
    expect(inexactNumber(Number.MAX_SAFE_INTEGER)).toBeUndefined();
    expect(inexactNumber(Number.MAX_SAFE_INTEGER + 2)).toBe(Number.MAX_SAFE_INTEGER + 2);
    expect(inexactNumber({ a: [1, { b: Infinity }] })).toBe(Infinity);
    expect(inexactNumber(['x', 1.5])).toBeUndefined();
  });
});
