/**
 * The broker's listings, each ONE request read as a stream (`Transport.streamList`): every queue
 * or exchange of a vhost, or only their names. Never paged through: the broker builds and sorts the
 * whole list for each page, so paging costs (objects / page size) whole lists. The exception is
 * the pages of the name filter (`queuesFound`, statistics.ts), asked for where they hold few
 * enough queues to cost less than the listing with statistics (PAGED_AT_MOST).
 * What columns a listing asks for, and what its fields mean in that mode, is decided here.
 */

import type { z } from 'zod';
import { onFirstUse } from '../core/index.ts';
import {
  DURABILITY_EXCHANGE_COLUMNS,
  DURABILITY_QUEUE_COLUMNS,
  durabilityQueueFields,
  toDurabilityQueue,
} from './durabilityListings.ts';
import { RabbitError } from './errors.ts';
import {
  type ExchangeListing,
  exchangeSchema,
  foundPageSchema,
  nameOnlySchema,
  nodeDownOf,
  pagedQueuesSchema,
  type QueueListing,
  type QueueRecordLive,
  type QueueStats,
  queueListItemSchema,
  queueRecordLiveSchema,
  queueStatsHistorySchema,
  queueStatsSchema,
  toExchange,
  toLiveQueue,
  toQueueKind,
  toQueueListing,
} from './responses.ts';
import type { Transport } from './transport.ts';

const QUEUE_COLUMNS_NO_STATS = 'name,type,arguments,policy';
const QUEUE_COLUMNS_STATS = 'name,type,arguments,policy,operator_policy,effective_policy_definition';
const EXCHANGE_COLUMNS = 'name,type,arguments,policy,internal';
const QUEUE_COLUMNS_LIVE =
  'name,messages,messages_ready,message_bytes_ready,messages_unacknowledged,consumers,idle_since,state';
const QUEUE_COLUMNS_HISTORY = 'messages_ready_details,messages_unacknowledged_details';

/**
 * Every queue of a vhost.
 *
 * - `stats: false` asks with `disable_stats=true` (7–10x cheaper). Checked on 3.10.8 (and
 *   4.0.5): this listing's `policy` is read from the queue record, so it changes the instant a
 *   policy is set or deleted, and the key is left out when there is none (mapped to `null`).
 *   3.10.8 and 4.0.5 leave out operator_policy and effective_policy_definition; 4.3.6 (4.2.5+)
 *   reports them from the record too, and `policy: null` for none (versions.test.ts). Not asked
 *   for here (QUEUE_COLUMNS_NO_STATS), so every version reads the same.
 * - `stats: true` adds `operator_policy` and `effective_policy_definition`; all three fields
 *   are then stats-derived: absent (`undefined`) until first reported, and lagging changes.
 * - `lifetime: true` adds `durable` and `exclusive` (lint's upgrade kind reads them).
 */
export async function* streamQueues(
  http: Transport,
  vhost: string,
  opts: { stats: boolean; lifetime?: boolean },
): AsyncIterable<QueueListing> {
  const lifetime = opts.lifetime ? ',durable,exclusive' : '';
  const query = opts.stats
    ? `?columns=${QUEUE_COLUMNS_STATS}${lifetime}`
    : `?disable_stats=true&columns=${QUEUE_COLUMNS_NO_STATS}${lifetime}`;
  for await (const q of http.streamList(http.path('queues', vhost) + query, queueListItemSchema)) {
    yield toQueueListing(vhost, q, opts.stats);
  }
}

/**
 * The length history back to `asOfMs` (a change already made): the broker keeps each length's
 * samples every `lengths_incr` seconds for `lengths_age`; asked back to it and a sample before it
 * (the statistics are emitted every 5 s), at most 10 minutes.
 */
function lengthsQuery(asOfMs: number): string {
  const age = Math.min(600, Math.ceil(Math.max(0, Date.now() - asOfMs) / 5000) * 5 + 15);
  return `lengths_age=${age}&lengths_incr=5`;
}

/**
 * Every queue's live statistics (ready, their bytes, unacknowledged, consumers, idle since): the
 * preview's reading of what is there now; with `asOf`, of what was there just before that time
 * (what a change made outside the bot found, src/watch/effect.ts). A listing apart from `streamQueues({ stats: false })`
 * because the policy must come from the queue record (current) while these columns exist only
 * as statistics (seconds behind); the preview reads both at once.
 */
export async function* streamQueueStats(
  http: Transport,
  vhost: string,
  opts: { asOf?: Date } = {},
): AsyncIterable<QueueStats> {
  if (opts.asOf === undefined) {
    const path = `${http.path('queues', vhost)}?columns=${QUEUE_COLUMNS_LIVE}`;
    for await (const q of http.streamList(path, queueStatsSchema))
      yield { name: q.name, live: toLiveQueue(q), ...nodeDownOf(q) };
    return;
  }
  const asOfMs = opts.asOf.getTime();
  const path = `${http.path('queues', vhost)}?${lengthsQuery(asOfMs)}&columns=${QUEUE_COLUMNS_LIVE},${QUEUE_COLUMNS_HISTORY}`;
  for await (const q of http.streamList(path, queueStatsHistorySchema()))
    yield { name: q.name, live: toLiveQueue(q, asOfMs), ...nodeDownOf(q) };
}

/** The combined listing's element with the durability columns too (`streamQueuesLive`'s `durability`). */
const queueRecordDurabilitySchema = onFirstUse(() => queueRecordLiveSchema().extend(durabilityQueueFields()));

/**
 * Every queue's record (name, type, arguments) and live statistics in ONE listing, for a reader
 * that needs no reported policy (a change already made to the user layer: the engine reads both
 * sides, src/watch/effect.ts; lint, which resolves both layers itself): half the bodies of the two
 * listings the preview streams. The
 * stats listing's `policy` lags, so it is not asked for, nor `operator_policy` (the engine
 * resolves that layer as with `stats: false`). With `asOf`, as `streamQueueStats`. With
 * `durability`, the columns lint's durability kinds read (durabilityListings.ts) in the same
 * listing, each queue's as `durability`.
 */
export async function* streamQueuesLive(
  http: Transport,
  vhost: string,
  opts: { asOf?: Date; durability?: boolean } = {},
): AsyncIterable<QueueRecordLive> {
  const asOfMs = opts.asOf?.getTime();
  const history = asOfMs === undefined ? '' : `&${lengthsQuery(asOfMs)}`;
  const columns = `name,type,arguments,durable,exclusive,${QUEUE_COLUMNS_LIVE.slice('name,'.length)}${asOfMs === undefined ? '' : `,${QUEUE_COLUMNS_HISTORY}`}${opts.durability ? `,${DURABILITY_QUEUE_COLUMNS}` : ''}`;
  const path = `${http.path('queues', vhost)}?columns=${columns}${history}`;
  const schema = opts.durability ? queueRecordDurabilitySchema() : queueRecordLiveSchema();
  for await (const q of http.streamList(path, schema)) {
    const kind = toQueueKind(q.type);
    yield {
      queue: {
        name: q.name,
        vhost,
        kind,
        type: q.type,
        arguments: q.arguments,
        policy: undefined,
        ...(q.durable === undefined ? {} : { durable: q.durable }),
        ...(q.exclusive === undefined ? {} : { exclusive: q.exclusive }),
      },
      live: toLiveQueue(q, asOfMs),
      ...nodeDownOf(q),
      ...(opts.durability ? { durability: toDurabilityQueue(q, kind) } : {}),
    };
  }
}

/**
 * The queues a policy pattern finds, asked of the broker itself: the listing's name filter
 * (`name` with `use_regex=true`, honoured only with `page`) runs the same regular expression
 * engine on the same bytes as policy matching (`re:run` on the name, unanchored: a search), so
 * the broker hands over exactly the queues the pattern matches, and computes statistics for
 * those alone. Measured on 3.10.8, 2,200 queues of which the pattern finds 200: 40 ms for their
 * live columns against 222 ms for every queue's (and 46 ms for every record without statistics).
 *
 * The filter is case-insensitive (`caseless`); `(?-i)` before the pattern switches that off for
 * the whole pattern (an inline option at the top level holds for the rest of it, alternatives
 * included), so a negative lookahead or a negated class finds what the policy finds and no more.
 * Proven on each broker by test/integration/queues-found.test.ts.
 *
 * More than a first page (FIRST_PAGE) found: pages of PAGE_MAX, PAGES_AT_ONCE at a time, while they cost less than
 * the whole listing (PAGED_AT_MOST). `null` when the broker cannot be asked so, and the caller
 * reads the whole listing:
 * - more queues found than PAGED_AT_MOST (each page rebuilds and filters the whole list, and
 *   gathers its queues' statistics one by one);
 * - a pattern the filter cannot carry: one that opens with a `(*VERB)` (it must stay first), or
 *   longer than the broker's filter limit (4.2+ refuses a filter of over 1,024 characters).
 */
export async function queuesFound<S extends z.ZodType, T>(
  http: Transport,
  vhost: string,
  pattern: string,
  mode: FoundMode<S, T>,
): Promise<T[] | null> {
  const filter = nameFilterOf(pattern);
  if (filter === null) return null;
  // A first page of FIRST_PAGE: enough for most patterns (a service's queues), and cheap to
  // learn from that a pattern finds too many (each queue on a page costs its statistics).
  const first = await filteredPage(http, vhost, filter, mode, 1, FIRST_PAGE);
  if (first === null) return null;
  if (first.count <= first.items.length) return first.items;
  // A first page short of what was found: paging not as asked (a proxy, another page size).
  if (first.items.length < FIRST_PAGE) return null;
  // More than the pages are worth: the whole listing.
  if (first.count > PAGED_AT_MOST) return null;
  const pages = await inTurn(
    Array.from(
      { length: Math.ceil(first.count / PAGE_MAX) },
      (_, i) => () => filteredPage(http, vhost, filter, mode, i + 1, PAGE_MAX),
    ),
  );
  if (pages.some((p) => p === null)) return null;
  return pages.flatMap((p) => (p as { items: T[] }).items);
}

/** The first page asked of a pattern's filter (see `queuesFound`). */
const FIRST_PAGE = 200;

/**
 * Page `page` of the listing narrowed by `filter` (a regular expression as the broker reads it,
 * `use_regex=true`), and how many the filter found; null when the broker (or a proxy before it)
 * answers it otherwise: a plain listing (paging ignored) or a 400 for the filter. The whole
 * listing answers that; anything else (the broker down, slow, refusing this user) would fail that
 * too, and is thrown.
 */
export async function filteredPage<S extends z.ZodType, T>(
  http: Transport,
  vhost: string,
  filter: string,
  mode: FoundMode<S, T>,
  page: number,
  pageSize = PAGE_MAX,
): Promise<{ count: number; items: T[] } | null> {
  const query = `?${mode.query}&use_regex=true&page=${page}&page_size=${pageSize}&name=${encodeURIComponent(filter)}`;
  try {
    const answer = await http.getJson(http.path('queues', vhost) + query, foundPageSchema(mode.item));
    return { count: answer.filtered_count, items: answer.items.map(mode.take) };
  } catch (e) {
    if (e instanceof RabbitError && (e.code === 'bad-response' || e.code === 'refused-by-broker'))
      return null;
    throw e;
  }
}

/**
 * The most queues whose statistics are asked in pages of the name filter; past it, the listing
 * with statistics. Measured on 4.3.6 with 30,000 queues (2026-12-05, bench/bigVhost.ts, cold
 * cache, load 4–10): the listing without statistics 0.9–2 s; with statistics 4.5–13 s, ~0.2–0.4
 * ms a queue; a page of the name filter 0.4–0.5 s to build and filter the vhost's whole list,
 * plus ~6 ms a queue it gives statistics for (150 found: 0.5–1.35 s; full pages of 500, two at a
 * time: 2.6–5.9 s each): the broker gathers a page's statistics queue by queue, the whole
 * listing's in one sweep. Below ~1,000 queues the pages cost less. `disable_stats=true&
 * enable_queue_totals=true` (`messages` alone) took 4.3–6.6 s: no cheaper, never asked.
 */
export const PAGED_AT_MOST = 1000;
/**
 * The listing with statistics over the one without, at most (the same measurements: 3.5 to 6.5
 * times; 8 leaves room): a default budget is stretched to this many times what the listing
 * without statistics took, once it is read (inventory.ts).
 */
export const STATS_OVER_RECORDS = 8;
/**
 * The listing with statistics over ONE page of the listing without (one name), at most: the
 * broker builds the vhost's whole list for either (the same measurements: a page 0.4–0.5 s, the
 * listing with statistics 4.5–13 s; 32 covers the worst). Where the listing with statistics is
 * asked at once, nothing read before it to tell its cost (lint's one listing), such a page is
 * asked beside it and a default budget stretched to this many times what it took.
 */
export const STATS_OVER_PAGE = 32;

const namePageSchema = onFirstUse(() => foundPageSchema(nameOnlySchema()));

/** One page of one name of the vhost's queue listing without statistics: what it costs the broker is its whole list built. */
export async function queueListingPage(http: Transport, vhost: string): Promise<void> {
  await http.getJson(
    `${http.path('queues', vhost)}?disable_stats=true&columns=name&page=1&page_size=1`,
    namePageSchema(),
  );
}

/** Pages asked for at once: the broker builds them on its own cores; two keep it busy without a burst. */
export const PAGES_AT_ONCE = 2;

/**
 * Runs `calls` PAGES_AT_ONCE at a time; their answers in order. Once an answer is `null` (the
 * caller reads the whole listing instead), no further call starts.
 */
export async function inTurn<T>(calls: readonly (() => Promise<T | null>)[]): Promise<(T | null)[]> {
  const out: (T | null)[] = new Array(calls.length).fill(null);
  let next = 0;
  let given = false;
  const worker = async () => {
    while (next < calls.length && !given) {
      const i = next++;
      out[i] = await (calls[i] as () => Promise<T | null>)();
      if (out[i] === null) given = true;
    }
  };
  await Promise.all(Array.from({ length: Math.min(PAGES_AT_ONCE, calls.length) }, worker));
  return out;
}

/** The management API's largest page. */
export const PAGE_MAX = 500;
/** The longest name filter a broker takes (4.2+; older ones take any). */
const FILTER_MAX = 1024;

/** The name filter that finds exactly what `pattern` matches; null when it cannot be written. */
export function nameFilterOf(pattern: string): string | null {
  const filter = `(?-i)${pattern}`;
  return pattern.startsWith('(*') || !nameFilterFits(filter) ? null : filter;
}

/** Whether the broker takes `filter` (4.2+ refuses one over FILTER_MAX characters). */
export const nameFilterFits = (filter: string) => filter.length <= FILTER_MAX;

/** What a narrowed listing asks for and what it makes of each queue. */
export interface FoundMode<S extends z.ZodType, T> {
  readonly query: string;
  readonly item: S;
  readonly take: (q: z.output<S>) => T;
}

/** As `streamQueues({ stats: false })`: records, the policy read from the record. */
export const foundRecords = (vhost: string): FoundMode<typeof queueListItemSchema, QueueListing> => ({
  query: `disable_stats=true&columns=${QUEUE_COLUMNS_NO_STATS}`,
  item: queueListItemSchema,
  take: (q) => toQueueListing(vhost, q, false),
});

/** As `streamQueueStats` (now): the live columns. */
export const FOUND_STATS: FoundMode<typeof queueStatsSchema, QueueStats> = {
  query: `columns=${QUEUE_COLUMNS_LIVE}`,
  item: queueStatsSchema,
  take: (q) => ({ name: q.name, live: toLiveQueue(q), ...nodeDownOf(q) }),
};

/** As `streamQueueStats` with `asOf`: the live columns as sampled just before that time. */
export const foundStatsAsOf = (
  asOf: Date,
): FoundMode<ReturnType<typeof queueStatsHistorySchema>, QueueStats> => {
  const asOfMs = asOf.getTime();
  return {
    query: `${lengthsQuery(asOfMs)}&columns=${QUEUE_COLUMNS_LIVE},${QUEUE_COLUMNS_HISTORY}`,
    item: queueStatsHistorySchema(),
    take: (q) => ({ name: q.name, live: toLiveQueue(q, asOfMs), ...nodeDownOf(q) }),
  };
};

/**
 * Every exchange of a vhost (the default one named ""). With `durability`, the columns lint's
 * durability kinds read too (durable, the exchange's own counters: `durable` and `unrouted`).
 */
export async function* streamExchanges(
  http: Transport,
  vhost: string,
  opts: { durability?: boolean } = {},
): AsyncIterable<ExchangeListing> {
  const columns = opts.durability ? `${EXCHANGE_COLUMNS},${DURABILITY_EXCHANGE_COLUMNS}` : EXCHANGE_COLUMNS;
  const path = `${http.path('exchanges', vhost)}?columns=${columns}`;
  for await (const e of http.streamList(path, exchangeSchema)) yield toExchange(vhost, e);
}

/**
 * Only the names of a vhost's queues or exchanges: what "did you mean" folds over (never a call
 * per name). `columns=name` and no statistics keep the body to about 30 bytes a queue: 100,000
 * queues are ~3 MB, read as they arrive.
 */
export function streamNames(
  http: Transport,
  what: 'queues' | 'exchanges',
  vhost: string,
): AsyncIterable<{ name: string }> {
  // The listing's own iterator, not a generator over it: at 100,000 names each hop counts.
  return http.streamList(`${http.path(what, vhost)}?disable_stats=true&columns=name`, nameOnlySchema());
}

/**
 * The user policy the broker applies to one queue, read from the queue record (current), for
 * when the detail GET's stats-derived fields are not published yet (a queue declared seconds
 * ago: up to ~10 s for a quorum queue). `undefined` when no such queue exists.
 *
 * The detail GET with `disable_stats=true` omits the policy fields, so this asks the listing,
 * narrowed with its `name` filter. That filter is the management UI's search: case-insensitive,
 * and honoured only with `page` — so the regex is anchored and escaped, and the exact name is
 * picked out here. The broker still builds the vhost's whole list to answer (O(queues)): use it
 * only when the cheap GET did not report.
 */
export async function queuePolicyFromRecord(
  http: Transport,
  vhost: string,
  name: string,
): Promise<string | null | undefined> {
  const regex = `^${name.replace(/[^A-Za-z0-9\u0080-\uffff]/g, (c) => `\\${c}`)}$`;
  const query = `?disable_stats=true&use_regex=true&page=1&page_size=500&name=${encodeURIComponent(regex)}&columns=${QUEUE_COLUMNS_NO_STATS}`;
  const page = await http.getJson(http.path('queues', vhost) + query, pagedQueuesSchema());
  const hit = page.items.find((q) => q.name === name);
  return hit ? (toQueueListing(vhost, hit, false).policy ?? null) : undefined;
}
