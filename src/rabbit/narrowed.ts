/**
 * Listings narrowed to the queues some policy patterns find, asked of the broker (listings.ts
 * `queuesFound`): a change moves only the objects its policy's pattern finds, as it is or as
 * proposed, so a reading for it needs those queues alone. Where the broker cannot be asked so
 * (too many found, a pattern its filter cannot carry, a source without the narrowed listing),
 * the whole listing is read instead: narrowing saves work, never changes the answer.
 */
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
  source: FindingSource & { streamQueueStats(vhost: string): AsyncIterable<QueueStats> },
  vhost: string,
  patterns: readonly string[],
): AsyncIterable<QueueStats> {
  return found(patterns, source.findQueueStats?.bind(source, vhost), () => source.streamQueueStats(vhost));
}
