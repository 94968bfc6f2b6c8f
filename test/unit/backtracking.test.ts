/**
 * Lookaround and backreferences: translated for a backtracking engine (pure), run off the main
 * thread with a budget (src/patterns/reader.ts). The translation is proven against RE2 on the
 * patterns both engines read, and against the real brokers in the engine differential.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BacktrackingReader } from '../../src/patterns/reader.ts';
import { resolveRead } from '../../src/patterns/resolveRead.ts';
import { toBacktracking } from '../../src/policy/pattern/backtracking.ts';
import {
  compilePattern,
  matchName,
  nameView,
  pendingVerdicts,
  shiftedView,
} from '../../src/policy/pattern/pattern.ts';
import { buildPolicySet } from '../../src/policy/resolve.ts';
import { policyIn, V310 } from '../support/policies.ts';

const reader = new BacktrackingReader({ budgetMs: 500 });
afterAll(() => reader.close());

/** The pattern's verdict for each name, by the backtracking engine. */
async function read(pattern: string, names: string[]): Promise<(boolean | 'undecidable')[]> {
  const c = compilePattern(pattern);
  const views = names.map((n) => nameView(n, { collectPending: true }));
  for (const v of views) c.match(v);
  await reader.decide(pendingVerdicts(views));
  return names.map((n) => matchName(c, n));
}

describe('the backtracking translation', () => {
  it.each([
    ['^(?!amq\\.)', ['amq.direct', 'orders', 'amq', 'xamq.'], [false, true, true, true]],
    ['^(?=look)l', ['lookq', 'lo', 'xlook'], [true, false, false]],
    ['(?<=a)b', ['ab', 'b', 'cb'], [true, false, false]],
    ['(?<!a)b$', ['ab', 'b', 'cb'], [false, true, true]],
    ['^(a|b)\\1', ['aa', 'ab', 'bb'], [true, false, true]],
    ['(?i)^ORD(?!ers)', ['ord.x', 'orders', 'ORDx'], [true, false, true]],
    ['^é(?=x)', ['éx', 'éy', 'ex'], [true, false, false]],
    ['^\\xc3(?=\\xa9)', ['é', 'Ã'], [true, false]],
    ['^a.(?=b)', ['a\rb', 'a\nb'], [true, false]],
    ['^a(?=b)b$', ['ab', 'ab\n', 'abc'], [true, true, false]],
    ['^a(?=\\s)', ['a b', 'a\vb'], [true, 'undecidable']],
  ])('%j on %j', async (pattern, names, expected) => {
    expect(compilePattern(pattern).readable).toBe(true);
    expect(await read(pattern, names)).toEqual(expected);
  });

  it('waits for a verdict: undecidable and collected until the engine answered', () => {
    const c = compilePattern('^(?!amq\\.)');
    const view = nameView('orders', { collectPending: true });
    expect(c.match(view)).toBe('undecidable');
    expect(view.pending?.has(c)).toBe(true);
  });

  it('agrees with RE2 on the patterns both read (property)', async () => {
    const atoms = ['a', 'b', '.', '[ab]', '[^a]', '\\d', '\\w', 'é', '\\.', '(a|b)', '(?:ab)'];
    const quant = ['', '*', '+', '?', '{2}', '{1,2}', '*?'];
    const arbPattern = fc
      .tuple(
        fc.boolean(),
        fc.array(fc.tuple(fc.constantFrom(...atoms), fc.constantFrom(...quant)), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.boolean(),
      )
      .map(
        ([start, parts, end]) =>
          `${start ? '^' : ''}${parts.map(([a, q]) => a + q).join('')}${end ? '$' : ''}`,
      );
    const arbName = fc
      .array(fc.constantFrom('a', 'b', '1', '.', 'é', '_', '-'), { maxLength: 6 })
      .map((p) => p.join(''));
    await fc.assert(
      fc.asyncProperty(
        arbPattern,
        fc.array(arbName, { minLength: 1, maxLength: 8 }),
        async (pattern, names) => {
          const bt = toBacktracking(shiftedView(pattern));
          if (!('source' in bt)) throw new Error(`${pattern}: ${bt.why}`);
          const re = new RegExp(bt.source, bt.flags);
          for (const name of names) {
            expect(re.test(shiftedView(name)), `${pattern} on ${name}`).toBe(
              matchName(compilePattern(pattern), name),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the budget', () => {
  it('a catastrophic pattern costs one budget, then is unreadable for every name', async () => {
    const slow = new BacktrackingReader({ budgetMs: 100, batch: 10 });
    try {
      const c = compilePattern('^(?=(a+)+$)');
      const names = Array.from({ length: 50 }, (_, i) => `${'a'.repeat(40 + i)}!`);
      const views = names.map((n) => nameView(n, { collectPending: true }));
      for (const v of views) c.match(v);
      await slow.decide(pendingVerdicts(views));
      expect(slow.stats.budgetsSpent).toBe(1);
      expect(c.readable).toBe(false);
      expect(c.why).toMatch(/ran out of its 100 ms budget/);
      expect(matchName(c, names[0] ?? '')).toBe('undecidable');
      // The reader still answers the next pattern.
      const ok = compilePattern('^(?!amq\\.)');
      const v = nameView('orders', { collectPending: true });
      ok.match(v);
      await slow.decide(pendingVerdicts([v]));
      expect(matchName(ok, 'orders')).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('resolution reads a lookaround policy, and leaves a catastrophic one unread', async () => {
    const pol = policyIn('v');
    const set = buildPolicySet(
      [
        pol('not-amq', '^(?!amq\\.)', 1, { 'max-length': 1 }),
        pol('slow', '^(?=(a+)+$)', 5, { 'max-length': 2 }),
      ],
      [],
      V310,
    );
    const slow = new BacktrackingReader({ budgetMs: 100 });
    try {
      const r = await resolveRead(set, `${'a'.repeat(40)}!`, 'classic', slow);
      expect(r.user.matches.map((m) => m.policy.name)).toEqual(['not-amq']);
      expect(r.user.unreadable.map((u) => u.policy.name)).toEqual(['slow']);
      expect(r.user.decided).toBe(false);
    } finally {
      await slow.close();
    }
  });
});
