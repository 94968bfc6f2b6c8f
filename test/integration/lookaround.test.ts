/**
 * Lookaround patterns on the real broker: read by the backtracking engine off the main thread,
 * and a catastrophic one (`^(?=(a+)+$)` against long names) costs one budget and leaves the bot
 * answering, for `which` and for `preview`.
 */
import { describe, expect, it } from 'vitest';
import { type WhichResult, which } from '../../src/commands/which/which.ts';
import { BacktrackingReader } from '../../src/patterns/reader.ts';
import { PatternCache } from '../../src/policy/pattern/pattern.ts';
import { preview } from '../../src/preview/preview.ts';
import { waitFor, withVhost } from '../support/broker.ts';

const LONG = (n: number) => `${'a'.repeat(40 + n)}!`;

describe('lookaround on the real broker', () => {
  it('a catastrophic pattern costs one budget; the bot answers every question meanwhile and after', async () => {
    await withVhost(
      async (vhost, client) => {
        await client.putPolicy('user', {
          vhost,
          name: 'slow',
          pattern: '^(?=(a+)+$)',
          applyTo: 'queues',
          priority: 0,
          definition: { 'max-length': 5 },
        });
        await client.putPolicy('user', {
          vhost,
          name: 'not-amq',
          pattern: '^(?!amq\\.)',
          applyTo: 'queues',
          priority: 1,
          definition: { 'max-length': 1 },
        });
        const names = [0, 1, 2, 3].map(LONG);
        for (const name of [...names, 'orders']) await client.putQueue(vhost, name, { kind: 'classic' });

        const reader = new BacktrackingReader({ budgetMs: 200 });
        const patterns = new PatternCache(); // what the bot keeps between questions
        try {
          const ask = (name: string) =>
            waitFor(
              async () => {
                const r = await which({ name, vhost }, client, { patterns, reader });
                return r.answer === 'reported' ? r : undefined;
              },
              { deadlineMs: 30_000, intervalMs: 500, what: `the broker to report ${name}` },
            );
          // Asked together: the catastrophic one and a plain one.
          const [first, orders] = await Promise.all([ask(names[0] ?? ''), ask('orders')]);
          const rest: WhichResult[] = [];
          for (const name of names.slice(1)) rest.push(await ask(name));

          // The broker: not-amq governs all; `slow`, below it, is read or, once out of budget, not.
          for (const r of [first, orders, ...rest]) {
            expect(r.inForce?.name).toBe('not-amq');
            expect(r.disagreements).toEqual([]);
          }
          expect(first.unreadable).toEqual([
            {
              name: 'slow',
              pattern: '^(?=(a+)+$)',
              why: expect.stringMatching(/ran out of its 200 ms budget/),
            },
          ]);
          for (const r of rest) expect(r.unreadable.map((u) => u.name)).toEqual(['slow']);
          // One budget for the pattern, however many names were asked about.
          expect(reader.stats.budgetsSpent).toBe(1);

          // A preview over the same vhost: again one budget (a fresh cache), every object answered.
          const fresh = new BacktrackingReader({ budgetMs: 200 });
          try {
            const input = { action: 'delete', name: 'not-amq', vhost, layer: 'user', fields: {} } as const;
            const r = await preview(input, client, { reader: fresh });
            expect(r.status).toBe('answered');
            if (r.status !== 'answered') return;
            expect(fresh.stats.budgetsSpent).toBe(1);
            // Every object answered for: the long names unpredictable (their fallback is not read).
            const unpredictable = r.unpredictable.map((u) => u.name);
            expect(unpredictable).toEqual(expect.arrayContaining(names));
            expect([...r.objects.map((o) => o.name), ...unpredictable].sort()).toEqual(
              [...names, 'orders'].sort(),
            );
          } finally {
            await fresh.close();
          }
        } finally {
          await reader.close();
        }
      },
      { prefix: 'look' },
    );
  }, 120_000);
});
