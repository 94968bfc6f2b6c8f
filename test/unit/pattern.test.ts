import fc from 'fast-check';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import {
  anchoredForm,
  compilePattern,
  isAnchored,
  latin1View,
  matchesEveryName,
  matchName,
  nameView,
  requiredLiterals,
  shiftedView,
} from '../../src/policy/pattern/pattern.ts';

/** Patterns of a few tokens (literals, classes, quantifiers, `$`, alternation) and names of a few characters. */
const tokenPattern = fc
  .tuple(
    fc.constantFrom('', '^', '(?i)^', '\\A'),
    fc.array(
      fc.constantFrom('a', 'B', '\\.', '.', '*', '?', '$', '|', '(x|a)', '\\d', '\\s', 'é', '\\é', '-'),
      { maxLength: 5 },
    ),
  )
  .map(([head, t]) => head + t.join(''));
const tokenName = fc
  .array(fc.constantFrom('a', 'A', 'b', 'B', '.', '-', 'é', 'x', '\n', '\v', ' ', '1'), { maxLength: 6 })
  .map((a) => a.join(''));

describe('pattern reading', () => {
  it.each([
    ['orders', 'retry.orders.dlq', true],
    ['^orders', 'retry.orders.dlq', false],
    ['^orders\\.audit$', 'orders.audit', true],
    ['^orders\\.audit$', 'orders.audit.x', false],
    ['^orders\\.', 'orders.processing', true],
    ['(?i)^ORDERS', 'orders.x', true],
    ['^ORDERS', 'orders.x', false],
    // Byte semantics: `.` is one byte, and é is two.
    ['^caf.$', 'café', false],
    ['^caf..$', 'café', true],
    ['', 'anything', true],
    // (?i) folds ASCII only, as PCRE's default tables do: é (C3 A9) and É (C3 89) differ.
    ['(?i)é', 'É', false],
    ['(?i)^É', 'É', true],
    ['(?i)^ä', 'xä', false],
    ['a|b', 'xbx', true],
  ])('%j searched in %j -> %s', (pattern, name, expected) => {
    expect(matchName(compilePattern(pattern), name)).toBe(expected);
  });

  it.each([
    ['(?|x)', /linear-time/],
    ['(a)?\\1', /may not take part/],
    ['[[:alpha:]](?=x)', /POSIX class/],
    ['a++', /linear-time/],
    ['(?>a)', /linear-time/],
    ['(*UTF8)a', /linear-time/],
    ['\\Z', /linear-time/],
    ['a\\vb', /vertical whitespace/],
    ['(', /linear-time/],
    ['x'.repeat(1025), /longer than 1024/],
  ])('%j is unreadable, never guessed', (pattern, why) => {
    const c = compilePattern(pattern);
    expect(c.readable).toBe(false);
    if (!c.readable) expect(c.why).toMatch(why);
    expect(matchName(c, 'x')).toBe('undecidable');
  });

  it.each([
    ['\\s', 'a\vb'],
    ['a$', 'a\n'],
    ['(?i)\\xc3', 'É'],
  ])('%j on %j is undecidable: PCRE and RE2 differ there', (pattern, name) => {
    expect(matchName(compilePattern(pattern), name)).toBe('undecidable');
  });

  it.each([
    ['^orders', true],
    ['(?i)^orders', true],
    ['\\Aorders', true],
    ['orders', false],
    ['.*orders', false],
  ])('%j anchored: %s', (pattern, anchored) => {
    expect(isAnchored(pattern)).toBe(anchored);
  });

  it('the literal fast path answers exactly as the regex engine', () => {
    const chunk = fc.constantFrom('a', 'b', '.', '-', '_', 'é', '/', ' ');
    const text = fc.array(chunk, { maxLength: 6 }).map((a) => a.join(''));
    fc.assert(
      fc.property(fc.boolean(), text, fc.boolean(), text, (start, lit, end, name) => {
        const escaped = lit.replace(/[.]/g, '\\.');
        const pattern = `${start ? '^' : ''}${escaped}${end ? '$' : ''}`;
        const byRe2 = RE2JS.compile(latin1View(pattern)).test(latin1View(name));
        expect(matchName(compilePattern(pattern), name)).toBe(byRe2);
      }),
    );
  });

  it('the anchored-prefix prefilter answers exactly as the regex engine', () => {
    const lit = fc
      .array(fc.constantFrom('a', 'B', 'b', '\\.', '-', 'é', '_'), { minLength: 1, maxLength: 4 })
      .map((a) => a.join(''));
    const rest = fc.constantFrom(
      '',
      '*',
      '+',
      '?',
      '{2}',
      '.*',
      '(x|y)',
      '[a-z]+',
      '$',
      '\\d',
      '(?:b)?',
      '|zz',
    );
    const name = fc
      .array(fc.constantFrom('a', 'A', 'b', 'B', '.', '-', 'é', 'É', '_', 'x', 'y', '1', 'zz'), {
        maxLength: 7,
      })
      .map((a) => a.join(''));
    fc.assert(
      fc.property(fc.boolean(), lit, rest, name, (caseless, l, r, n) => {
        const pattern = `${caseless ? '(?i)' : ''}^${l}${r}`;
        const byRe2 = RE2JS.compile(shiftedView(pattern)).test(shiftedView(n));
        expect(matchName(compilePattern(pattern), n)).toBe(byRe2);
      }),
      { numRuns: 2000 },
    );
  });

  it('mayMatch says false only where match says false', () => {
    const pattern = tokenPattern;
    const name = tokenName;
    let told = 0;
    fc.assert(
      fc.property(pattern, name, (p, n) => {
        const c = compilePattern(p);
        if (c.mayMatch(n)) return;
        told++;
        expect(matchName(c, n)).toBe(false);
      }),
      { numRuns: 3000 },
    );
    // The property is about something: some names are told apart without their views.
    expect(told).toBeGreaterThan(0);
    expect(compilePattern('^svc7\\.').mayMatch('svc8.orders')).toBe(false);
    expect(compilePattern('^abc$').mayMatch('x\n')).toBe(true);
  });

  it('startsWithOnly and matchesEveryName: what match answers, read without it (lint reads them per list)', () => {
    const pattern = fc.oneof(
      tokenPattern,
      fc.constantFrom('.*', '^.*', '', '^', '.*$', '^.*a', '^a\\v', '^a(?i)b'),
    );
    const name = tokenName;
    let told = 0;
    fc.assert(
      fc.property(pattern, name, (p, n) => {
        const c = compilePattern(p);
        if (c.startsWithOnly !== undefined) {
          told++;
          expect([p, n, matchName(c, n)]).toEqual([p, n, n.startsWith(c.startsWithOnly)]);
        }
        if (matchesEveryName(p)) {
          expect([p, n, matchName(c, n)]).toEqual([p, n, true]);
          expect([p, n, matchName(compilePattern(anchoredForm(p)), n)]).toEqual([p, n, true]);
        }
      }),
      { numRuns: 3000 },
    );
    expect(told).toBeGreaterThan(0);
    expect(compilePattern('^svc7\\.').startsWithOnly).toBe('svc7.');
    for (const p of ['^a$', '^a\\s', '(?i)^a', 'a', '^a.'])
      expect([p, compilePattern(p).startsWithOnly]).toEqual([p, undefined]);
    expect(['.*', '^.*', ''].every(matchesEveryName)).toBe(true);
    expect(['.*$', '^', 'a'].some(matchesEveryName)).toBe(false);
  });

  it('never hangs: a catastrophic-backtracking pattern answers at once', () => {
    const c = compilePattern('^(a+)+$');
    const started = performance.now();
    expect(matchName(c, `${'a'.repeat(250)}!`)).toBe(false);
    // Not a timing assertion on the product: a guard that the engine is the linear one.
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('requiredLiterals: the texts every match holds, checked before the engine', () => {
  it('examples', () => {
    expect(requiredLiterals('^svc\\d+\\.events\\.')).toEqual(['svc', '.events.']);
    expect(requiredLiterals('ab?cd')).toEqual(['cd']);
    expect(requiredLiterals('x+?yz')).toEqual(['yz']);
    for (const p of ['.*', '(?i)^ab', 'a{2}b', '\\vab', 'a|bc', '[ab]cd', '^a$b'])
      expect(requiredLiterals(p)).toBeUndefined();
  });

  it('a random pattern of that shape finds what the engine alone finds, for random names', () => {
    const atom = fc.constantFrom('a', 'b', 'c', '.', '\\.', '\\d', '\\w', '1', '-', 'ab', 'bc');
    const quantifier = fc.constantFrom('', '', '', '*', '+', '?', '+?');
    const patternArb = fc
      .tuple(fc.boolean(), fc.array(fc.tuple(atom, quantifier), { minLength: 1, maxLength: 6 }), fc.boolean())
      .map(
        ([start, atoms, end]) =>
          `${start ? '^' : ''}${atoms.map(([a, q]) => a + q).join('')}${end ? '$' : ''}`,
      );
    const nameArb = fc.stringMatching(/^[abc1.\-x]{0,10}$/);
    fc.assert(
      fc.property(patternArb, fc.array(nameArb, { maxLength: 10 }), (pattern, names) => {
        const compiled = compilePattern(pattern);
        const engine = RE2JS.compile(pattern);
        for (const n of names)
          expect([pattern, n, compiled.match(nameView(n))]).toEqual([pattern, n, engine.test(n)]);
      }),
      { numRuns: 500 },
    );
  });
});
