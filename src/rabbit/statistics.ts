/**
 * The second step of a reading in two: the queues an answer reaches are known from the listing
 * without statistics (names, types, policies, arguments: all that matching and resolution need),
 * and the statistics (messages, consumers, idle time) are asked for those alone, in pages of the
 * broker's name filter, or in the one listing with statistics where that costs less.
 * What each costs is listings.ts's (`PAGED_AT_MOST`, measured); exact-name filters are written
 * here, as short as the names' common prefixes allow, so a page carries as many names as the
 * broker's filter limit lets it.
 */
import {
  FOUND_STATS,
  type FoundMode,
  filteredPage,
  inTurn,
  nameFilterFits,
  PAGE_MAX,
  PAGED_AT_MOST,
} from './listings.ts';
import type { QueueStats } from './responses.ts';
import type { Transport } from './transport.ts';

/** How the statistics of some queues are asked for: the filters (one page each), or the whole listing. */
export type StatisticsPlan = { readonly whole: true } | { readonly whole: false; readonly filters: string[] };

/**
 * The cheapest way to ask for the statistics of `names` (the vhost holds `total` queues): name
 * filters of at most PAGE_MAX names each, or, where they would cost more, the one listing.
 */
export function statisticsPlan(names: readonly string[], total: number): StatisticsPlan {
  if (names.length === 0) return { whole: false, filters: [] };
  // The listing holds what any number of pages would; a filter cannot be written for every name.
  if (names.length * 2 > total || names.length > PAGED_AT_MOST) return { whole: true };
  const filters = namesFilters(names);
  if (filters === null) return { whole: true };
  return { whole: false, filters };
}

/**
 * The statistics (now) of the queues named, each once, asked as `statisticsPlan` says; a queue
 * deleted since its record was read is simply not there. `whole`: the listing with statistics.
 */
export async function* statisticsOf(
  http: Transport,
  vhost: string,
  names: readonly string[],
  total: number,
  whole: () => AsyncIterable<QueueStats>,
  // biome-ignore lint/suspicious/noExplicitAny: any schema whose items become QueueStats
  mode: FoundMode<any, QueueStats> = FOUND_STATS,
): AsyncGenerator<QueueStats, void> {
  const plan = statisticsPlan(names, total);
  if (plan.whole) {
    yield* whole();
    return;
  }
  const pages = await inTurn(plan.filters.map((f) => () => filteredPage(http, vhost, f, mode, 1)));
  if (pages.some((p) => p === null)) {
    // The broker does not take the filter as written: the listing answers it.
    yield* whole();
    return;
  }
  const wanted = new Set(names);
  for (const page of pages)
    for (const q of (page as { items: QueueStats[] }).items) if (wanted.delete(q.name)) yield q;
}

// --- the name filters ----------------------------------------------------------------------

/** A name's character as the filter must write it: letters and digits as they are, the rest escaped. */
const literal = (c: string) => (/^[A-Za-z0-9]$/.test(c) || (c.codePointAt(0) ?? 0) > 0x7f ? c : `\\${c}`);

interface Trie {
  end: boolean;
  next: Map<string, Trie>;
}

/** The names as one alternation with their common prefixes written once (a trie): `a(?:b|c)`. */
function trieRegex(names: readonly string[]): string {
  const root: Trie = { end: false, next: new Map() };
  for (const name of names) {
    let node = root;
    for (const c of Array.from(name)) {
      let child = node.next.get(c);
      if (!child) {
        child = { end: false, next: new Map() };
        node.next.set(c, child);
      }
      node = child;
    }
    node.end = true;
  }
  const write = (node: Trie): string => {
    const next = [...node.next];
    // Names that differ in their last character alone: one class, `q0[0-9]` not `q0(?:0|1|…)`.
    if (next.length > 1 && next.every(([, child]) => child.next.size === 0)) {
      const chars = next.map(([c]) => (/^[A-Za-z0-9]$/.test(c) ? c : `\\${c}`)).join('');
      return `[${chars}]${node.end ? '?' : ''}`;
    }
    const branches = next.map(([c, child]) => literal(c) + write(child));
    if (branches.length === 0) return '';
    if (branches.length === 1 && !node.end) return branches[0] as string;
    return `(?:${branches.join('|')}${node.end ? '|' : ''})`;
  };
  return write(root);
}

/** The exact-name filter of `names`: finds those names and no other, case-sensitively. */
export const exactFilter = (names: readonly string[]) => `(?-i)^${trieRegex(names)}$`;

/**
 * `names` (sorted here, so neighbours share prefixes) cut into exact-name filters of at most
 * PAGE_MAX names each, each as long as the broker takes; null when one name alone is too long.
 */
export function namesFilters(names: readonly string[]): string[] | null {
  const sorted = [...new Set(names)].sort();
  const filters: string[] = [];
  let from = 0;
  while (from < sorted.length) {
    // The most names from `from` whose filter fits: doubled while it fits, then halved back.
    let n = 1;
    if (!nameFilterFits(exactFilter(sorted.slice(from, from + 1)))) return null;
    while (
      n < PAGE_MAX &&
      from + n < sorted.length &&
      nameFilterFits(exactFilter(sorted.slice(from, from + n * 2)))
    )
      n *= 2;
    let step = Math.floor(n / 2);
    while (step > 0) {
      const m = Math.min(n + step, PAGE_MAX, sorted.length - from);
      if (m > n && nameFilterFits(exactFilter(sorted.slice(from, from + m)))) n = m;
      step = Math.floor(step / 2);
    }
    n = Math.min(n, PAGE_MAX);
    filters.push(exactFilter(sorted.slice(from, from + n)));
    from += n;
  }
  return filters;
}
