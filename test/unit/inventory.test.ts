/**
 * The inventory's live reading keeps the numbers of the queues its caller says it needs
 * (`keepLive`), and every queue's while the caller does not know yet: the preview decides which
 * once it has the policies, and the listing may have begun before then.
 */
import { describe, expect, it } from 'vitest';
import type { LiveQueue } from '../../src/policy/impact.ts';
import { type InventorySource, openInventory } from '../../src/rabbit/inventory.ts';
import type { QueueListing, QueueStats } from '../../src/rabbit/responses.ts';

const live = (messages: number): LiveQueue =>
  ({
    messages,
    ready: messages,
    unacked: 0,
    bytes: messages * 10,
    consumers: 0,
    idleSince: null,
  }) as LiveQueue;

async function* each<T>(xs: readonly T[]): AsyncIterable<T> {
  for (const x of xs) yield x;
}

function source(names: readonly string[]): InventorySource {
  const queue = (name: string) =>
    ({ name, vhost: 'v', kind: 'classic', arguments: {}, policy: null }) as unknown as QueueListing;
  return {
    overview: async () => ({ version: { major: 3, minor: 10, patch: 8 } }),
    listPolicies: async () => [],
    listOperatorPolicies: async () => [],
    streamQueues: () => each(names.map(queue)),
    streamExchanges: () => each([]),
    streamQueueStats: () => each(names.map((name, i): QueueStats => ({ name, live: live(i) }))),
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
