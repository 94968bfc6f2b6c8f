/**
 * The broker's name filter against its policy matching (src/rabbit/listings.ts `queuesFound`):
 * the bot asks the broker for the queues a pattern finds, and trusts that list to hold exactly
 * the queues a policy with that pattern governs. On each broker, in a fresh vhost of queues whose
 * names differ by case, accents and punctuation, one policy at a time: the queues the broker then
 * reports that policy on (read from the queue records, current at once) must be the queues the
 * narrowed listing returns, no more and no fewer. Patterns: the engine differential's, and the
 * ones where a case-insensitive filter would differ (negative lookaround, negated classes, an
 * inline `(?i)`, alternatives).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { narrowedTo } from '../../src/rabbit/inventory.ts';
import { PAGE_MAX } from '../../src/rabbit/listings.ts';
import { found } from '../../src/rabbit/narrowed.ts';
import { brokersUp, inVhostOn } from '../support/brokers.ts';

const SEED = Number(process.env.FOUND_SEED ?? Date.now() % 2 ** 31);
const { up } = await brokersUp();

const PIECES = [
  'a',
  'A',
  'b',
  'ab',
  'ord',
  'ORD',
  'Ord',
  '.',
  '-',
  'x',
  'é',
  'É',
  'Ä',
  'ä',
  'q',
  '1',
  '_',
  ' ',
];
const NAMES = fc.sample(
  fc.uniqueArray(
    fc
      .array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 5 })
      .map((p) => p.join(''))
      // "." and ".." cannot be addressed over HTTP; "amq." is reserved; a name is trimmed of nothing.
      .filter((n) => n !== '.' && n !== '..' && !n.startsWith('amq.') && n.trim() === n),
    { minLength: 150, maxLength: 150 },
  ),
  { seed: SEED, numRuns: 1 },
)[0] as string[];

const PATTERNS = [
  '.*',
  '^a',
  '^A',
  'a$',
  '^ord\\.',
  '(?i)^ORD',
  'é',
  'É',
  '^.{3,}$',
  '[xq]',
  '^[^a]',
  '[^aé]$',
  'ab|ba',
  'x|A',
  '^(a|b)\\1',
  '^a(?=b)',
  '^ord(?!x)',
  '^(?!a)',
  '(?<=a)b',
  '(?<!x)q$',
  '^(?!.*é)a',
  '\\bab\\b',
  '^[[:upper:]]',
  '\\d',
  'a b',
  '^$',
];

describe.each(up)('the name filter finds what policies match ($label)', (broker) => {
  it('finds, for every pattern, exactly the queues a policy with it governs', async () => {
    await inVhostOn(broker, 'found', async (vhost, client) => {
      for (let i = 0; i < NAMES.length; i += 16)
        await Promise.all(NAMES.slice(i, i + 16).map((n) => client.putQueue(vhost, n, { kind: 'classic' })));
      const mismatches: string[] = [];
      for (const pattern of PATTERNS) {
        await client.putPolicy('user', {
          vhost,
          name: 'probe',
          pattern,
          applyTo: 'queues',
          priority: 0,
          definition: { 'max-length': 1000 },
        });
        const governed = new Set<string>();
        for await (const q of client.streamQueues(vhost, { stats: false }))
          if (q.policy === 'probe') governed.add(q.name);
        const records = await client.findQueues(vhost, pattern);
        const stats = await client.findQueueStats(vhost, pattern);
        const sorted = (xs: Iterable<string>) => [...xs].sort();
        const want = sorted(governed);
        for (const [what, got] of [
          ['records', records],
          ['stats', stats],
        ] as const) {
          const names = got && sorted(got.map((q) => q.name));
          if (JSON.stringify(names) !== JSON.stringify(want))
            mismatches.push(
              `${pattern} (${what}): broker governs ${JSON.stringify(want)}, found ${JSON.stringify(names)}`,
            );
        }
        await client.deletePolicy('user', vhost, 'probe');
      }
      expect(mismatches, `seed ${SEED}`).toEqual([]);
    });
  });
});

describe('narrowed listings past one page', () => {
  const [machine] = up;
  it.runIf(machine)(
    `when the filter finds more than one page (${PAGE_MAX}) of queues: the pages, then the union`,
    async () => {
      if (!machine) return;
      await inVhostOn(machine, 'found-many', async (vhost, client) => {
        const names = Array.from({ length: PAGE_MAX + 1 }, (_, i) => `many.${i}`);
        for (let i = 0; i < names.length; i += 32)
          await Promise.all(
            names.slice(i, i + 32).map((n) => client.putQueue(vhost, n, { kind: 'classic' })),
          );
        await client.putQueue(vhost, 'other', { kind: 'classic' });
        // Two pages of the filter, every queue it finds once (the whole listing past PAGED_AT_MOST).
        const paged = (await client.findQueues(vhost, '^many\\.'))?.map((q) => q.name);
        expect(paged?.sort()).toEqual([...names].sort());
        expect((await client.findQueues(vhost, '^many\\.1\\d\\d$'))?.length).toBe(100);
        // Through the narrowed source: what the two find, joined in one filter, once each.
        const narrowed = narrowedTo(client, ['^many\\.', '^other$']);
        const listed: string[] = [];
        for await (const q of narrowed.streamQueues(vhost, { stats: false })) listed.push(q.name);
        expect(listed.sort()).toEqual([...names, 'other'].sort());
        // Two patterns the broker can narrow: their union, each queue once.
        const union: string[] = [];
        for await (const q of found(
          ['^many\\.1\\d$', '^many\\.1[0-4]$', '^other$'],
          (p) => client.findQueueStats(vhost, p),
          () => client.streamQueueStats(vhost),
        ))
          union.push(q.name);
        expect(union.sort()).toEqual([...Array.from({ length: 10 }, (_, i) => `many.1${i}`), 'other'].sort());
      });
    },
  );
});
