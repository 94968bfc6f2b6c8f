/**
 * Listings narrowed to the queues some policy patterns find, asked of the broker (listings.ts
 * `queuesFound`): a change moves only the objects its policy's pattern finds, as it is or as
 * proposed, so a reading for it needs those queues alone. Where the broker cannot be asked so
 * (too many found, a pattern its filter cannot carry, a source without the narrowed listing),
 * the whole listing is read instead: narrowing saves work, never changes the answer.
 */
import { inTurn, nameFilterFits, nameFilterOf } from './listings.ts';
import type { QueueListing, QueueStats } from './responses.ts';

/** What narrowing needs of the management API beyond the inventory. ManagementClient satisfies it. */
export interface FindingSource {
  findQueues?(vhost: string, pattern: string): Promise<QueueListing[] | null>;
  findQueueStats?(vhost: string, pattern: string): Promise<QueueStats[] | null>;
}

/**
 * The queues the patterns find, each once; the whole listing when one pattern cannot be asked for.
 * Patterns are asked together, as few filters as the broker's filter limit allows (`joined`):
 * every filter makes the broker build and filter the vhost's whole list, whatever it finds.
 */
export async function* found<T extends { readonly name: string }>(
  patterns: readonly string[],
  find: ((pattern: string) => Promise<T[] | null>) | undefined,
  whole: () => AsyncIterable<T>,
): AsyncGenerator<T, void> {
  const pages = find ? await inTurn(joined(patterns).map((p) => () => find(p))) : [null];
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

/**
 * The live numbers of the queues `patterns` find (now), narrowed where the broker can be asked so;
 * where it cannot, `otherwise` (default: every queue's listing).
 */
export function queueStatsFound(
  source: FindingSource & { streamQueueStats(vhost: string): AsyncIterable<QueueStats> },
  vhost: string,
  patterns: readonly string[],
  otherwise: () => AsyncIterable<QueueStats> = () => source.streamQueueStats(vhost),
): AsyncIterable<QueueStats> {
  return found(patterns, source.findQueueStats?.bind(source, vhost), otherwise);
}

/**
 * A pattern that finds, inside `(?:…)` beside others, exactly what it finds alone: written with
 * letters, digits, classes, groups, anchors and quantifiers only, no back-reference (it would count
 * the others' groups), no option, verb, named group or quoted run (`(?i)`, `(*`, `(?<n>`, `\Q`)
 * that could reach past its group or clash with another's. Anything else is asked alone: a join
 * the broker could not compile would find nothing for every pattern in it.
 */
const joinable = (pattern: string) =>
  /^[\w\-.^$*+?|\\[\]{}(),:/@#%&=!<>'" ]*$/.test(pattern) &&
  !/\\[0-9gkKQEPpXRhHvVNCcxuo]|\(\?(?!:)|\(\*/.test(pattern);

/**
 * The patterns as few patterns as the name filter carries: those that can be joined as
 * `(?:a)|(?:b)|…` (what finds either finds what the one or the other finds: a search of the
 * name, unanchored, for each), each join as long as the broker's filter takes; the rest alone.
 */
export function joined(patterns: readonly string[]): string[] {
  const out: string[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length === 1) out.push(current[0] as string);
    else if (current.length > 1) out.push(current.map((p) => `(?:${p})`).join('|'));
    current = [];
  };
  for (const p of new Set(patterns)) {
    if (!joinable(p) || nameFilterOf(p) === null) {
      out.push(p);
      continue;
    }
    const next = [...current, p].map((x) => `(?:${x})`).join('|');
    if (current.length && !nameFilterFits(`(?-i)${next}`)) flush();
    current.push(p);
  }
  flush();
  return out;
}
