/**
 * The inventory's live reading keeps the numbers of the queues its caller says it needs
 * (`keepLive`), and every queue's while the caller does not know yet: the preview decides which
 * once it has the policies, and the listing may have begun before then.
 */
import { describe, expect, it } from 'vitest';
import { type InventorySource, openInventory } from '../../src/rabbit/inventory.ts';
import { nameFilterOf } from '../../src/rabbit/listings.ts';
import type {
  DurabilityQueue,
  QueueListing,
  QueueRecordLive,
  QueueStats,
} from '../../src/rabbit/responses.ts';
import { listing, liveQueue } from '../support/live.ts';

function source(names: readonly string[]): InventorySource {
  const queue = (name: string) =>
    ({ name, vhost: 'v', kind: 'classic', arguments: {}, policy: null }) as unknown as QueueListing;
  return {
    overview: async () => ({ version: { major: 3, minor: 10, patch: 8 } }),
    listPolicies: async () => [],
    listOperatorPolicies: async () => [],
    streamQueues: () => listing(names.map(queue)),
    streamExchanges: () => listing([]),
    streamQueueStats: () => listing(names.map((name, i): QueueStats => ({ name, live: liveQueue(i) }))),
    federation: async () => ({ upstreams: new Set(), upstreamSets: new Set(), links: null }),
  };
}

const names = ['a.1', 'b.1', 'a.2', 'b.2', 'a.3'];

async function kept(keepLive?: () => ((name: string) => boolean) | undefined): Promise<string[]> {
  const inventory = await openInventory(source(names), 'v', {
    live: true,
    ...(keepLive ? { keepLive } : {}),
  });
  await inventory.each(() => undefined);
  return [...((await inventory.live())?.queues.keys() ?? [])];
}

describe('the live reading, keepLive', () => {
  it('without it: every queue', async () => {
    expect(await kept()).toEqual(names);
  });

  it('with a predicate: only the queues it keeps, with their numbers', async () => {
    const inventory = await openInventory(source(names), 'v', {
      live: true,
      keepLive: () => (name) => name.startsWith('a.'),
    });
    await inventory.each(() => undefined);
    const reading = await inventory.live();
    expect([...(reading?.queues.keys() ?? [])]).toEqual(['a.1', 'a.2', 'a.3']);
    expect(reading?.queues.get('a.2')?.messages).toBe(2);
  });

  it('before the caller knows (undefined): kept; from then on, filtered', async () => {
    let asked = 0;
    const wanted = (name: string) => name.startsWith('a.');
    expect(await kept(() => (++asked <= 2 ? undefined : wanted))).toEqual(['a.1', 'b.1', 'a.2', 'a.3']);
  });
});

describe('the live reading from one listing (records and numbers together), keepLive', () => {
  // Asked once the queues are handed on, a batch at a time (lint answers a batch with one pass):
  // the caller decides each queue by what it found in it, across the batches' edges.
  it('each queue decided after its caller has it, a batch at a time, kept as the caller says', async () => {
    const many = Array.from({ length: 2500 }, (_, i) => `q.${i}`);
    const base = source(many);
    const s: InventorySource = {
      ...base,
      streamQueuesLive: () =>
        listing(
          many.map(
            (name, i): QueueRecordLive => ({
              queue: { name, vhost: 'v', kind: 'classic', arguments: {} } as unknown as QueueListing,
              live: liveQueue(i),
            }),
          ),
        ),
    };
    const seen = new Set<string>();
    let asked = 0;
    const inventory = await openInventory(s, 'v', {
      live: true,
      withoutReportedPolicies: true,
      keepLive: () => {
        asked++;
        // What the caller found: a queue it has not been handed yet is not kept.
        return (name) => seen.has(name) && Number(name.slice(2)) % 3 === 0;
      },
    });
    await inventory.each((o) => seen.add(o.name));
    const queues = (await inventory.live())?.queues;
    expect([...(queues?.keys() ?? [])]).toEqual(many.filter((_, i) => i % 3 === 0));
    expect(queues?.get('q.2499')?.messages).toBe(2499);
    // Three batches (1,024, 1,024, 452), one question each.
    expect(asked).toBe(3);
  });
});

describe('the one listing with the durability columns (lint on a broker)', () => {
  it('hands each queue and exchange to the durability taker as each hands its object, asks both listings with their columns, and stretches the budget beside', async () => {
    const base = source(['a.1', 'b.1']);
    const asked: unknown[] = [];
    let stretched = 0;
    const s: InventorySource = {
      ...base,
      streamQueuesLive: (_v, opts) => {
        asked.push(['queues', opts]);
        return listing(
          ['a.1', 'b.1'].map(
            (name, i): QueueRecordLive => ({
              queue: { name, vhost: 'v', kind: 'classic', arguments: {} } as unknown as QueueListing,
              live: liveQueue(i),
              durability: { name, persistent: i } as unknown as DurabilityQueue,
            }),
          ),
        );
      },
      streamExchanges: (_v, opts) => {
        asked.push(['exchanges', opts]);
        return listing(
          ['', 'x'].map((name) => ({
            name,
            vhost: 'v',
            type: 'direct',
            arguments: {},
            policy: null,
            durable: true,
          })),
        );
      },
      stretchBudgetForStatistics: async () => {
        stretched++;
      },
    };
    const order: string[] = [];
    const inventory = await openInventory(s, 'v', {
      live: true,
      withoutReportedPolicies: true,
      durability: {
        queue: (q) => order.push(`durability ${q.name} ${q.persistent}`),
        exchange: (x) => order.push(`durability exchange ${x.name}`),
      },
    });
    await inventory.each((o) => order.push(o.name));
    expect(order).toEqual([
      'a.1',
      'durability a.1 0',
      'b.1',
      'durability b.1 1',
      '',
      'durability exchange ',
      'x',
      'durability exchange x',
    ]);
    expect(asked).toEqual([
      ['queues', { durability: true }],
      ['exchanges', { durability: true }],
    ]);
    expect(stretched).toBe(1);
  });
});

describe('the live reading, liveFor (narrowed.ts)', () => {
  /** The source, with a name filter that records what it was asked and finds by JS regex; `null` past `max` found. */
  function finding(max = 500) {
    const asked: string[] = [];
    const base = source(names);
    const s: InventorySource = {
      ...base,
      findQueueStats: async (_vhost, pattern) => {
        asked.push(pattern);
        const hits = names.filter((n) => new RegExp(pattern).test(n));
        return hits.length > max
          ? null
          : hits.map((name) => ({ name, live: liveQueue(names.indexOf(name)) }));
      },
    };
    return { s, asked };
  }

  async function read(s: InventorySource, patterns: readonly string[]) {
    const seen: string[] = [];
    const inventory = await openInventory(s, 'v', {
      live: true,
      liveFor: (small) => {
        expect(small.version.major).toBe(3);
        seen.push(...patterns);
        return { patterns, federation: false };
      },
    });
    await inventory.each(() => undefined);
    const reading = await inventory.live();
    return { names: [...(reading?.queues.keys() ?? [])], seen, reading };
  }

  it('asks the broker for the queues the patterns find, together in one filter, each once, and keeps their numbers', async () => {
    const { s, asked } = finding();
    const { names: got, reading } = await read(s, ['^a\\.[12]$', '^a\\.2$', '^b\\.1$', '^a\\.[12]$']);
    expect(asked).toEqual(['(?:^a\\.[12]$)|(?:^a\\.2$)|(?:^b\\.1$)']);
    expect([...got].sort()).toEqual(['a.1', 'a.2', 'b.1']);
    expect(reading?.queues.get('a.2')?.messages).toBe(2);
  });

  it('no pattern (a refused change): no queue read, no request', async () => {
    const { s, asked } = finding();
    expect((await read(s, [])).names).toEqual([]);
    expect(asked).toEqual([]);
  });

  it('a pattern the broker cannot narrow (too many found): the whole listing, every queue once', async () => {
    const { s, asked } = finding(2);
    expect((await read(s, ['^b\\.', '^a\\.'])).names).toEqual(names);
    expect(asked).toEqual(['(?:^b\\.)|(?:^a\\.)']);
  });

  it('patterns that cannot be joined are asked alone', async () => {
    const { s, asked } = finding();
    await read(s, ['^(a)\\.\\1$', '^b\\.1$', '(?i)^A\\.2$', '^a\\.1$']);
    expect(asked).toEqual(['^(a)\\.\\1$', '(?i)^A\\.2$', '(?:^b\\.1$)|(?:^a\\.1$)']);
  });

  it('a source without the name filter: the whole listing', async () => {
    expect((await read(source(names), ['^b\\.1$'])).names).toEqual(names);
  });
});

describe('nameFilterOf: the filter that finds what a policy pattern matches', () => {
  it('turns the caseless search back to case-sensitive for the whole pattern', () => {
    expect(nameFilterOf('^a|B$')).toBe('(?-i)^a|B$');
  });

  it('cannot carry a pattern that opens with a verb, nor one past the broker’s filter limit', () => {
    expect(nameFilterOf('(*UCP)^a')).toBeNull();
    expect(nameFilterOf('a'.repeat(1019))).toBe(`(?-i)${'a'.repeat(1019)}`);
    expect(nameFilterOf('a'.repeat(1020))).toBeNull();
  });
});
