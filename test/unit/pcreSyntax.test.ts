import { describe, expect, it } from 'vitest';
import { pcreSyntaxError } from '../../src/policy/pcreSyntax.ts';

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
