import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchingBracket, splitSlackText } from '../../src/commands/split.ts';
import { InputError } from '../../src/core/errors.ts';

/** The refusal for a text that reads two ways, or undefined when it was split. */
function refusal(text: string): InputError | undefined {
  try {
    splitSlackText(text);
    return undefined;
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
}

describe('splitSlackText: as typed in Slack', () => {
  it.each([
    ['which orders.audit', ['which', 'orders.audit']],
    ['  which   "a b"  ', ['which', 'a b']],
    // The issue's two cases: the backslash and the JSON arrive as typed.
    ['--pattern ^orders\\.audit$', ['--pattern', '^orders\\.audit$']],
    ['--definition {"max-length": 7}', ['--definition', '{"max-length": 7}']],
    [
      '--definition {"a": "} ] {", "b": [1, {"c": 2}]} x',
      ['--definition', '{"a": "} ] {", "b": [1, {"c": 2}]}', 'x'],
    ],
    ['--definition [1, 2]', ['--definition', '[1, 2]']],
    // Phones' curly quotes: kept inside a JSON run (the definition folds them and says so) …
    ['--definition {“max-length”: 7}', ['--definition', '{“max-length”: 7}']],
    // … and grouping like straight ones elsewhere.
    ['which “curly quoted”', ['which', 'curly quoted']],
    ['which ‘curly single’', ['which', 'curly single']],
    // Quoting works as before.
    [
      'preview create p --definition \'{"max-length": 5}\'',
      ['preview', 'create', 'p', '--definition', '{"max-length": 5}'],
    ],
    ['--pattern "^a\\\\.b"', ['--pattern', '^a\\.b']],
    ["--pattern '^a\\.b'", ['--pattern', '^a\\.b']],
    ['which ""', ['which', '']],
    // A backslash escapes only a quote or a space.
    ['which a\\ b', ['which', 'a b']],
    ['which a\\"b', ['which', 'a"b']],
    ['which a\\', ['which', 'a\\']],
    ['--pattern ^a\\d+\\w$', ['--pattern', '^a\\d+\\w$']],
    // A bracket not at a word's start, or not closed, is a plain character.
    ['--pattern x[ab]c', ['--pattern', 'x[ab]c']],
    ['--pattern [ab]c', ['--pattern', '[ab]c']],
    ['--pattern [abc', ['--pattern', '[abc']],
    ['--pattern ^[a-z]+$ --vhost v', ['--pattern', '^[a-z]+$', '--vhost', 'v']],
  ])('%s', (line, words) => {
    expect(splitSlackText(line)).toEqual(words);
  });

  it('refuses an unclosed quote, saying where', () => {
    expect(refusal('which "orders')?.message).toMatch(/" quote is not closed \(at character 7\)/);
  });

  it('refuses a bracket run that is not JSON and splits otherwise, showing both readings', () => {
    const e = refusal('which --pattern [a b] --vhost v');
    expect(e?.message).toMatch(/read two ways/);
    expect(e?.hint).toContain('read as:  ‹[a b]›');
    expect(e?.hint).toContain('or as:    ‹[a› ‹b]›');
  });

  it('refuses a backslash before a space after another backslash, showing both readings', () => {
    const e = refusal('which C:\\\\ --vhost v');
    expect(e?.hint).toContain('read as:  ‹C:\\ --vhost›');
    expect(e?.hint).toContain('or as:    ‹C:\\\\› ‹--vhost›');
    // Where one reading leaves a quote open, the other is the only one: taken.
    expect(splitSlackText('which a\\\\"b"')).toEqual(['which', 'a\\\\b']);
  });
});

/** Characters with no meaning to the splitter. */
const plainChar = fc.constantFrom(...'abcXYZ019._-^$*+?()|:/@#%'.split(''));
const plainWord = fc.string({ unit: plainChar, minLength: 1, maxLength: 12 });

describe('splitSlackText: properties', () => {
  it('plain words round-trip through a space join', () => {
    fc.assert(
      fc.property(fc.array(plainWord, { maxLength: 8 }), (words) => {
        expect(splitSlackText(words.join(' '))).toEqual(words);
      }),
    );
  });

  it('a backslash not before a quote or space is kept as typed (patterns arrive as typed)', () => {
    const piece = fc.oneof(plainChar, fc.constant('\\'));
    const pattern = fc.string({ unit: piece, minLength: 1, maxLength: 16 }).filter((w) => !w.endsWith('\\'));
    fc.assert(
      fc.property(fc.array(pattern, { minLength: 1, maxLength: 5 }), (words) => {
        expect(splitSlackText(words.join(' '))).toEqual(words);
      }),
    );
  });

  it('any JSON object or array starting a word arrives as one word, exactly as typed', () => {
    const container = fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.array(fc.jsonValue()));
    fc.assert(
      fc.property(
        plainWord,
        container,
        fc.constantFrom(0, 1, 2),
        plainWord,
        (before, value, indent, after) => {
          const json = JSON.stringify(value, null, indent);
          expect(splitSlackText(`${before} ${json} ${after}`)).toEqual([before, json, after]);
        },
      ),
    );
  });

  it('any word double-quoted (with \\ and " escaped) arrives whole', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 5 }), (words) => {
        const quoted = words.map((w) => `"${w.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
        expect(splitSlackText(quoted.join(' '))).toEqual(words);
      }),
    );
  });

  it('never picks a reading silently: any text is split, or refused with an InputError', () => {
    const noisy = fc.string({ unit: fc.constantFrom(...'ab {}[]"\'\\“”‘’ :,'.split('')), maxLength: 24 });
    fc.assert(
      fc.property(noisy, (text) => {
        try {
          const words = splitSlackText(text);
          // A split reading is stable: the words, quoted, read back the same.
          const quoted = words.map(
            (w) => `"${w.replace(/[\\"“”]/g, (c) => (c === '\\' || c === '"' ? `\\${c}` : c))}"`,
          );
          const plain = words.every((w) => !/[“”]/.test(w));
          if (plain) expect(splitSlackText(quoted.join(' '))).toEqual(words);
        } catch (e) {
          expect(e).toBeInstanceOf(InputError);
        }
      }),
    );
  });

  it('matchingBracket finds the end of any JSON container, ignoring brackets in strings', () => {
    fc.assert(
      fc.property(fc.oneof(fc.object(), fc.array(fc.jsonValue())), (value) => {
        const json = JSON.stringify(value);
        expect(matchingBracket(`${json} tail]}`, 0)).toBe(json.length - 1);
      }),
    );
  });
});
