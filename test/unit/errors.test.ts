import { describe, expect, it } from 'vitest';
import { ConfigError, codeOf, InputError } from '../../src/core/errors.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';

describe('codeOf', () => {
  it.each([
    ['our input error', new InputError('x'), 'bad-input'],
    ['our config error', new ConfigError('x'), 'bad-config'],
    ['the client error', new RabbitError({ code: 'forbidden', method: 'GET', path: '/' }), 'forbidden'],
    [
      'a library error with a string code',
      Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
      'ECONNREFUSED',
    ],
    ['a numeric code', Object.assign(new Error('x'), { code: 1000 }), undefined],
    ['an error without a code', new Error('x'), undefined],
    ['null', null, undefined],
    ['a string', 'boom', undefined],
  ])('%s', (_what, err, expected) => {
    expect(codeOf(err)).toBe(expected);
  });
});
