import { describe, expect, it } from 'vitest';
import { pcreSyntaxError, type RegexEngine, regexEngine } from '../../src/policy/pattern/pcreSyntax.ts';

describe('pattern syntax as PCRE 8 reads it (cases checked against 3.10.8 and 4.0.5)', () => {
  const refused: [string, string][] = [
    ['(', 'missing )'],
    [')', 'unmatched parentheses'],
    ['a**', 'nothing to repeat'],
    ['*a', 'nothing to repeat'],
    ['a{2}{3}', 'nothing to repeat'],
    ['^*', 'nothing to repeat'],
    ['$*', 'nothing to repeat'],
    ['\\b*', 'nothing to repeat'],
    ['a|*', 'nothing to repeat'],
    ['[z-a]', 'range out of order in character class'],
    ['[a-\\d]', 'invalid range in character class'],
    ['[a-', 'missing terminating ] for character class'],
    ['\\', '\\ at end of pattern'],
    ['\\c', '\\c at end of pattern'],
    ['(?<=a+)c', 'lookbehind assertion is not fixed length'],
    ['(*FOO)a', '(*VERB) not recognized or malformed'],
    ['\\x{100}', 'character value in \\x{} or \\o{} is too large'],
    ['\\2(a)', 'reference to non-existent subpattern'],
    ['\\g{2}(a)', 'reference to non-existent subpattern'],
    ['\\k<x>', 'reference to non-existent subpattern'],
    ['(?(1)a|b)', 'reference to non-existent subpattern'],
    ['[[:foo:]]', 'unknown POSIX class name'],
    ['a{70000}', 'number too big in {} quantifier'],
    ['a{3,2}', 'numbers out of order in {} quantifier'],
    ['\\Ufoo', 'PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u'],
    ['(?Z)', 'unrecognized character after (? or (?-'],
    ['(?i', 'unrecognized character after (? or (?-'],
    ['(?#comment', 'missing ) after comment'],
    ['\\p{Foo}', 'unknown property name after \\P or \\p'],
  ];
  it.each(refused)('%s: %s', (pattern, message) => {
    expect(pcreSyntaxError(pattern)?.message).toBe(message);
  });

  const accepted = [
    '(?<=ab)c',
    '(?<=a{2})c',
    '(?<=ab|c)d',
    'a++',
    '(?>a)',
    '(*UTF8)é',
    '(*UTF8)\\x{100}',
    '(a)\\1',
    '(?P<n>a)',
    '(?<n>a)(?P=n)',
    '(?<n>a)\\k<n>',
    '\\k{n}(?<n>a)',
    '(?(<n>)a)(?<n>b)',
    '(?i)abc',
    '(?x) a # c',
    '[[:alpha:]]',
    '[]a]',
    '[^]a]',
    'a{,3}',
    '\\ca',
    '\\pL',
    '\\p{^Lu}',
    '\\p{Greek}',
    '\\Q(\\E',
    '(?=a)*',
    '\\z',
    '\\Z$',
    'a(?R)?b',
    '\\8',
    '(a)(b)\\10',
    '[\\d-z]',
    '\\N',
    '\\h',
    '\\R',
    'x{1001}',
    '(?U)a*',
    '^orders\\.(audit|billing)$',
  ];
  it.each(accepted)('%s is accepted', (pattern) => {
    expect(pcreSyntaxError(pattern)).toBeNull();
  });
});

describe('the two engines: PCRE 8 (OTP 25, 27: 3.10.8, 4.0.5) and PCRE2 (OTP 29: 4.3.6), each case checked on those brokers', () => {
  // [pattern, PCRE 8's refusal or null, PCRE2's refusal or null]
  const cases: [string, string | null, string | null][] = [
    [
      '(?<n>a)(?<n>b)',
      'two named subpatterns have the same name',
      'two named subpatterns have the same name',
    ],
    [
      '(?<n>a)|(?<n>b)',
      'two named subpatterns have the same name',
      'two named subpatterns have the same name',
    ],
    [
      "(?<n>a)(?'n'b)",
      'two named subpatterns have the same name',
      'two named subpatterns have the same name',
    ],
    [
      '(?J:(?<n>a))(?<n>b)',
      'two named subpatterns have the same name',
      'two named subpatterns have the same name',
    ],
    [
      '(?J)(?<n>a)(?-J)(?<n>b)',
      'two named subpatterns have the same name',
      'two named subpatterns have the same name',
    ],
    [
      '(?|(?<n>a)|(?<n>b))(?<n>c)',
      'two named subpatterns have the same name',
      'two named subpatterns have the same name',
    ],
    [
      '(?|(?<n>a)|(?<m>b))',
      'different names for subpatterns of the same number are not allowed',
      'different names for subpatterns of the same number are not allowed',
    ],
    ['(?J)(?<n>a)(?<n>b)', null, null],
    ['(?<n>a)(?J)(?<n>b)', null, null],
    ['(?<n>a)((?J)(?<n>b))', null, null],
    ['(?|(?<n>a)|(?<n>b))', null, null],
    ['(?|(a)(?<x>c)|(?<y>b)(d))', null, null],
    ['(?R)', 'recursive call could loop indefinitely', null],
    ['a|(?R)', 'recursive call could loop indefinitely', null],
    ['(a|(?R))', 'recursive call could loop indefinitely', null],
    ['^(?R)', 'recursive call could loop indefinitely', null],
    ['a*(?R)', 'recursive call could loop indefinitely', null],
    ['(a)?(?R)', 'recursive call could loop indefinitely', null],
    ['(?:a|b|)(?R)', 'recursive call could loop indefinitely', null],
    ['(?=a)(?R)', 'recursive call could loop indefinitely', null],
    ['((?1))', 'recursive call could loop indefinitely', null],
    ['(?<n>\\g<n>)', 'recursive call could loop indefinitely', null],
    ['(?1)((?R))', 'recursive call could loop indefinitely', null],
    ['a(?:((?R)(?1)))', 'recursive call could loop indefinitely', null],
    ['\\g<0>', 'recursive call could loop indefinitely', null],
    ['a(?R)', null, null],
    ['a+(?R)', null, null],
    ['(a|b)(?R)', null, null],
    ['(a(?1)?b)', null, null],
    ['(?1)?(a)(?R)', null, null],
    ['(?(R)a|(?R)b)', null, null],
    ['(a)(?(1)b|(?R))', null, null],
    ['\\d(?R)', null, null],
    ['(?+1)(a)', null, null],
    ['(?-1)', 'reference to non-existent subpattern', 'reference to non-existent subpattern'],
    ['(?<=a{1,3})c', 'lookbehind assertion is not fixed length', null],
    ['(?<=\\d{2,4})x', 'lookbehind assertion is not fixed length', null],
    ['(?<=a+)c', 'lookbehind assertion is not fixed length', 'length of lookbehind assertion is not limited'],
    ['(?<=\\g<1>)(a)', null, null],
    ['(?^)a', 'unrecognized character after (? or (?-', null],
  ];
  it.each(cases)('%s: PCRE 8 %s, PCRE2 %s', (pattern, pcre, pcre2) => {
    expect(pcreSyntaxError(pattern, 'pcre')?.message ?? null).toBe(pcre);
    expect(pcreSyntaxError(pattern, 'pcre2')?.message ?? null).toBe(pcre2);
    // Without the engine, only what both refuse.
    expect(pcreSyntaxError(pattern) !== null).toBe(pcre !== null && pcre2 !== null);
  });

  it("the engine is the broker's Erlang's", () => {
    const engine = (erlang?: number): RegexEngine | undefined =>
      regexEngine({ major: 4, minor: 0, patch: 5, ...(erlang === undefined ? {} : { erlang }) });
    expect([engine(25), engine(27), engine(28), engine(29), engine()]).toEqual([
      'pcre',
      'pcre',
      'pcre2',
      'pcre2',
      undefined,
    ]);
  });
});
