import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWhich, splitWords } from '../../commands/parse.ts';
import { InputError } from '../../src/errors.ts';

describe('splitWords', () => {
  it.each([
    ['which orders.audit', ['which', 'orders.audit']],
    ['  which   "a b"  ', ['which', 'a b']],
    [
      'preview create p --definition \'{"max-length": 5}\'',
      ['preview', 'create', 'p', '--definition', '{"max-length": 5}'],
    ],
    ['which a\\ b', ['which', 'a b']],
    ['which “curly quoted”', ['which', 'curly quoted']],
    ['which ""', ['which', '']],
  ])('%j', (line, words) => {
    expect(splitWords(line)).toEqual(words);
  });

  it('refuses an unclosed quote', () => {
    expect(() => splitWords('which "orders')).toThrow(InputError);
  });

  it('words without quotes or escapes round-trip through a space join', () => {
    const word = fc.string({ minLength: 1 }).filter((w) => !/[\s"'\\\u2018\u2019\u201c\u201d]/.test(w));
    fc.assert(
      fc.property(fc.array(word), (words) => {
        expect(splitWords(words.join(' '))).toEqual(words);
      }),
    );
  });

  it('double-quoting any word keeps it whole', () => {
    const word = fc.string().filter((w) => !/["\\\u201c\u201d]/.test(w));
    fc.assert(
      fc.property(fc.array(word), (words) => {
        expect(splitWords(words.map((w) => `"${w}"`).join(' '))).toEqual(words);
      }),
    );
  });
});

describe('parseWhich', () => {
  it('reads the name and flags, with the vhost defaulting to /', () => {
    expect(parseWhich(['orders.audit'])).toMatchObject({ name: 'orders.audit', vhost: '/', kind: undefined });
    expect(parseWhich(['q', '--kind=stream', '--vhost', 'v1'])).toMatchObject({
      name: 'q',
      kind: 'stream',
      vhost: 'v1',
    });
  });

  it.each([
    [[], /needs the name/],
    [['a', 'b'], /one name/],
    [['a', '--kind', 'topic'], /--kind/],
    [['a', '--nope'], /Unknown flag --nope/],
    [['a', '--vhost'], /needs a value/],
    [['a', '--vhost', 'x', '--vhost', 'y'], /twice/],
    [['a', '--vhost', ''], /vhost/],
    [['é'.repeat(128)], /256 bytes/],
  ])('%j is refused with what to fix', (words, message) => {
    expect(() => parseWhich(words)).toThrow(message);
  });

  it('takes exactly 255 bytes', () => {
    expect(parseWhich(['a'.repeat(255)]).name).toHaveLength(255);
  });
});
