/**
 * Listings narrowed to the queues some policy patterns find, asked of the broker (listings.ts
 * `queuesFound`): a change moves only the objects its policy's pattern finds, as it is or as
 * proposed, so a reading for it needs those queues alone. Where the broker cannot be asked so
 * (too many found, a pattern its filter cannot carry, a source without the narrowed listing),
 * the whole listing is read instead: narrowing saves work, never changes the answer.
 */
import type { InventorySource } from './inventory.ts';
import type { QueueListing, QueueStats } from './responses.ts';

/** What narrowing needs of the management API beyond the inventory. ManagementClient satisfies it. */
export interface FindingSource {
  findQueues?(vhost: string, pattern: string): Promise<QueueListing[] | null>;
  findQueueStats?(vhost: string, pattern: string): Promise<QueueStats[] | null>;
}

/** The queues the patterns find, each once; the whole listing when one pattern cannot be asked for. */
export async function* found<T extends { readonly name: string }>(
  patterns: readonly string[],
  find: ((pattern: string) => Promise<T[] | null>) | undefined,
  whole: () => AsyncIterable<T>,
): AsyncGenerator<T, void> {
  const pages = find ? await Promise.all([...new Set(patterns)].map(find)) : [null];
  if (pages.some((p) => p === null)) {
    yield* whole();
    return;
  }
  const seen = new Set<string>();
  for (const page of pages as T[][])
    for (const q of page) {
      if (seen.has(q.name)) continue;
      seen.add(q.name);
      yield q;
    }
}

/** The live numbers of the queues `patterns` find (now), narrowed where the broker can be asked so. */
export function queueStatsFound(
  source: InventorySource & FindingSource,
  vhost: string,
  patterns: readonly string[],
): AsyncIterable<QueueStats> {
  return found(patterns, source.findQueueStats?.bind(source, vhost), () => source.streamQueueStats(vhost));
}

/**
 * The inventory of what `patterns` find: the same source, its queue listings (records without
 * statistics, and the live numbers now) narrowed. A preview through it answers for the objects a
 * change of a policy with those patterns moves exactly as through the whole source; counts over
 * the whole vhost it does not give.
 */
export function narrowedTo(
  source: InventorySource & FindingSource,
  patterns: readonly string[],
): InventorySource {
  return {
    overview: () => source.overview(),
    listPolicies: (vhost) => source.listPolicies(vhost),
    listOperatorPolicies: (vhost) => source.listOperatorPolicies(vhost),
    streamExchanges: (vhost) => source.streamExchanges(vhost),
    federation: (vhost) => source.federation(vhost),
    streamQueues: (vhost, opts) =>
      opts.stats
        ? source.streamQueues(vhost, opts)
        : found(patterns, source.findQueues?.bind(source, vhost), () => source.streamQueues(vhost, opts)),
    streamQueueStats: (vhost, opts) =>
      opts?.asOf ? source.streamQueueStats(vhost, opts) : queueStatsFound(source, vhost, patterns),
  };
}
