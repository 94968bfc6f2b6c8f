// Over 400 lines: the three ways of reading a vhost (all at once, in one listing, in two steps) share their started listings, the small reads and the live reading.
/**
 * Everything a preview needs to know about one vhost, in the fewest and cheapest requests:
 *
 *   GET /api/overview                                  version (cached per client)
 *   GET /api/policies/{vhost}                          user policies
 *   GET /api/operator-policies/{vhost}                 operator policies
 *   GET /api/queues/{vhost}?disable_stats=true&columns=name,type,arguments,policy   ONE body, streamed
 *   GET /api/exchanges/{vhost}?columns=name,type,arguments,policy                  ONE body, streamed
 *
 *   GET /api/queues/{vhost}?columns=name,messages,…,idle_since         (live: true) ONE body, streamed
 *   GET /api/parameters/federation-upstream{,-set}/{vhost}, /api/federation-links/{vhost}   (live: true)
 *
 * All start at once; the listings are parsed element by element as they arrive, so a vhost
 * of 100,000 queues is never held whole in memory. With `liveFor` (a preview: it knows what it
 * wants once the policies are read) the live numbers are those of the queues the changed
 * policy's patterns find, one page of the broker's name filter per pattern where it holds them
 * (listings.ts `queuesFound`), and the federation is read only where a policy names an upstream.
 *
 * Why this listing and not the one with statistics (measured on 3.10.8, confirmed on 4.0.5):
 * - `disable_stats=true` costs 7–10x less, and its `policy` is read from the queue record: it is
 *   current the instant a policy changes. That is the user layer's "before", from the broker.
 * - The stats listing adds `operator_policy` and `effective_policy_definition`, but those (and its
 *   `policy`) lag a change by 3–16 s, and are absent for a queue whose stats are not out yet.
 * - So the operator layer is recomputed by the engine from the operator-policy list (a handful
 *   of policies in practice). Where the engine cannot decide it (an unreadable pattern, a tie),
 *   the simulation says so rather than guess. Exchanges never report an operator policy anyway.
 * Never paged through: the broker builds and sorts the whole list for every page (quadratic); the
 * one page of a name filter is asked for only where it holds every queue the filter finds.
 */
import type { LiveQueue } from '../policy/impact/index.ts';
import type { BrokerVersion, Policy } from '../policy/index.ts';
import type { InventoryObject } from '../policy/simulate/index.ts';
import { STATS_OVER_RECORDS } from './listings.ts';
import { type FindingSource, found, queueStatsFound } from './narrowed.ts';
import type {
  DurabilityQueue,
  ExchangeListing,
  FederationState,
  QueueListing,
  QueueRecordLive,
  QueueStats,
} from './responses.ts';
import { failureOf, federationFailed, type ReadingFailure, whyFailed } from './unread.ts';

/** What the inventory needs of the management API. ManagementClient satisfies it. */
export interface InventorySource extends FindingSource {
  overview(): Promise<{ version: BrokerVersion }>;
  listPolicies(vhost: string): Promise<Policy[]>;
  listOperatorPolicies(vhost: string): Promise<Policy[]>;
  /** `lifetime`: with `durable` and `exclusive` (listings.ts). */
  streamQueues(vhost: string, opts: { stats: boolean; lifetime?: boolean }): AsyncIterable<QueueListing>;
  /** `durability`: with the columns lint's durability kinds read (listings.ts). */
  streamExchanges(vhost: string, opts?: { durability?: boolean }): AsyncIterable<ExchangeListing>;
  /** With `asOf`: the numbers as sampled just before that time (listings.ts). */
  streamQueueStats(vhost: string, opts?: { asOf?: Date }): AsyncIterable<QueueStats>;
  /**
   * The queues' records and numbers in one listing, no reported policy (listings.ts); absent: two
   * listings. `durability`: with the columns lint's durability kinds read.
   */
  streamQueuesLive?(
    vhost: string,
    opts?: { asOf?: Date; durability?: boolean },
  ): AsyncIterable<QueueRecordLive>;
  /** The live numbers of the queues named (statistics.ts); absent: the listing with statistics, kept for those. */
  queueStatsOf?(
    vhost: string,
    names: readonly string[],
    total: number,
    opts?: { asOf?: Date },
  ): AsyncIterable<QueueStats>;
  federation(vhost: string): Promise<FederationState>;
  /** The plugins with policy keys that are enabled; undefined when not known (ManagementClient.plugins). */
  plugins?(): Promise<ReadonlySet<string> | undefined>;
  /** A default budget stretched to at least `ms` from now (ManagementClient.stretchBudget); absent: none. */
  stretchBudget?(ms: number): void;
  /** A default budget stretched to what the listing with statistics may take, asked beside it (ManagementClient); absent: none. */
  stretchBudgetForStatistics?(vhost: string): Promise<void>;
  /** The question's budget in ms (RMQ_TIMEOUT), when the source has one: said when a reading runs out of it. */
  readonly budgetMs?: number;
}

/**
 * What is there now, read beside the inventory: every queue's statistics by name (`null`: the
 * broker reports none for it), and the vhost's federation. Never a reason to refuse the preview:
 * a reading that failed says why, and its numbers are unknown.
 */
export interface LiveReading {
  /** When the listing was asked for; the broker's statistics are a few seconds older still. */
  readonly sampledAt: string;
  /** Asked as of this time (the numbers sampled just before it), not as they are now. */
  readonly asOf?: string;
  readonly queues: ReadonlyMap<string, LiveQueue | null>;
  /** The queues (of `queues`, without statistics) whose cluster node is down. */
  readonly nodeDown?: ReadonlySet<string>;
  /** Why the statistics could not be read (then `queues` is empty). */
  readonly queuesWhy?: string;
  readonly queuesFailure?: ReadingFailure;
  readonly federation: FederationState | null;
  /** Why the federation could not be read. */
  readonly federationWhy?: string;
  readonly federationFailure?: ReadingFailure;
}

export interface Inventory {
  readonly version: BrokerVersion;
  readonly user: Policy[];
  readonly operator: Policy[];
  /** With `plugins: true`: the plugins with policy keys that are enabled, when known. */
  readonly plugins?: ReadonlySet<string>;
  /**
   * Hands every queue, then every exchange, to `take`, as the listings arrive; once.
   * A callback rather than an async iterable: each async-generator hop costs microseconds per
   * object, and at 100,000 queues the hops would cost more than everything else.
   */
  each(take: (o: InventoryObject) => void): Promise<void>;
  /** Drops the listings without reading them (the change was refused). */
  cancel(): Promise<void>;
  /** With `live: true`: the live reading, once its listing has been read whole. */
  live(): Promise<LiveReading | null>;
}

/** A listing whose request is sent now, not when someone starts reading it. */
export interface Started<T> {
  each(take: (item: T) => void): Promise<void>;
  cancel(): Promise<void>;
}

export function startNow<T>(source: AsyncIterable<T>): Started<T> {
  const iterator = source[Symbol.asyncIterator]();
  const first = iterator.next();
  // A failure is reported to whoever reads; if nobody does, it must not crash the process.
  first.catch(() => undefined);
  let taken = false;
  return {
    async each(take) {
      if (taken) throw new Error('an inventory listing can be read once');
      taken = true;
      for (let r = await first; !r.done; r = await iterator.next()) take(r.value);
    },
    async cancel() {
      if (taken) return;
      taken = true;
      try {
        await first;
        await iterator.return?.();
      } catch {
        // the listing failed: nothing to release
      }
    },
  };
}

/**
 * A listed queue is an inventory object already (its `vhost`, and with statistics its
 * `effectiveDefinition`, go unread): handed on as it is, not copied once per queue of the vhost.
 */
export function queueObject(q: QueueListing): InventoryObject {
  return q;
}

export function exchangeObject(e: ExchangeListing): InventoryObject {
  return { name: e.name, kind: 'exchange', type: e.type, arguments: e.arguments, policy: e.policy };
}

/**
 * Starts every request of the inventory at once and waits for the small ones (version and the
 * two policy lists); the listings stream in while the caller validates and reads them.
 * If a small request fails, the listings are dropped and the error is thrown.
 */
export async function openInventory(
  source: InventorySource,
  vhost: string,
  options: InventoryOptions = {},
): Promise<Inventory> {
  const openedAt = performance.now();
  if (options.live && options.afterRecords) return openInTwoSteps(source, vhost, options);
  if (options.live && options.withoutReportedPolicies && source.streamQueuesLive)
    return openOneListing(source, vhost, options);
  const queues = startNow(source.streamQueues(vhost, { stats: false }));
  const exchanges = startNow(source.streamExchanges(vhost));
  const { liveFor } = options;
  const asOf = options.asOf ? { asOf: options.asOf } : {};
  let reading =
    options.live && !liveFor
      ? readLive(
          source,
          vhost,
          source.streamQueueStats(vhost, asOf),
          true,
          options.asOf,
          // Asked beside the records, a keepLive meant for one listing would come too early.
          options.withoutReportedPolicies ? undefined : options.keepLive,
        )
      : null;
  // The names listed, once every record is read (none when the listings are dropped).
  let recordsRead: (names: readonly string[]) => void = () => undefined;
  const namesListed = new Promise<readonly string[]>((resolve) => {
    recordsRead = resolve;
  });
  const cancel = async () => {
    recordsRead([]);
    await Promise.all([queues.cancel(), exchanges.cancel(), reading?.cancel()]);
  };
  const small = await smallOf(source, vhost, cancel, options.plugins);
  const { keepLive } = options;
  if (options.live && liveFor) {
    const wanted = liveFor(small);
    // Where the patterns find more than a few pages hold: the second step, the numbers of the
    // queues `reachedOf` keeps once the records are read (statistics.ts), not every queue's.
    const { reachedOf } = options;
    const reached = async function* () {
      const names = await namesListed;
      const keep = reachedOf?.();
      const kept = keep ? names.filter(keep) : names;
      yield* source.queueStatsOf
        ? source.queueStatsOf(vhost, kept, names.length)
        : source.streamQueueStats(vhost);
    };
    const stats = queueStatsFound(source, vhost, wanted.patterns, reachedOf ? reached : undefined);
    reading = readLive(source, vhost, stats, wanted.federation, options.asOf, keepLive);
  }
  const each = async (take: (o: InventoryObject) => void) => {
    const names: string[] = [];
    await queues.each((q) => {
      take(queueObject(q));
      names.push(q.name);
    });
    recordsRead(names);
    fitBudget(source, openedAt);
    await exchanges.each((e) => take(exchangeObject(e)));
  };
  return { ...small, each, cancel, live: async () => (reading ? await reading.done : null) };
}

export interface InventoryOptions {
  /** Read the live state beside the inventory (`Inventory.live`). */
  readonly live?: boolean;
  /** Read which plugins with policy keys are enabled, beside the policies (`Inventory.plugins`): to validate. */
  readonly plugins?: boolean;
  /** The live numbers as sampled just before this time (a change already made). */
  readonly asOf?: Date;
  /**
   * The caller reads no reported policy (a change already made to the user layer: the engine
   * reads both sides): with `live`, the queues' records and numbers come in ONE listing
   * (`streamQueuesLive`), their `policy` undefined. A failure of it fails the inventory.
   */
  readonly withoutReportedPolicies?: boolean;
  /**
   * With `live`: read in two steps. The records without statistics first (with
   * `withoutReportedPolicies`, their `policy` undefined); once
   * `each` has handed them all, the live numbers of the queues `keepLive` keeps (asked then, once
   * per queue), and of those alone (`InventorySource.queueStatsOf`: pages of the name filter, or
   * the listing with statistics where that costs less). The federation is read beside the records.
   */
  readonly afterRecords?: boolean;
  /**
   * With `live`: which queues' numbers to keep, once the caller knows (asked as each arrives;
   * undefined: not known yet, kept). Spares holding every queue's numbers when few can matter.
   * With `withoutReportedPolicies` and one listing, asked once the queue is handed to `each`'s
   * `take`, for up to 1,024 queues at once, in the order they were handed; where the source has
   * no combined listing, not asked (every queue's kept).
   */
  readonly keepLive?: () => ((name: string) => boolean) | undefined;
  /**
   * With `live` and `withoutReportedPolicies` (one listing): the columns lint's durability kinds
   * read, asked in the inventory's own queue and exchange listings (not in listings of their own),
   * each queue's and exchange's handed here as `each` hands the object.
   */
  readonly durability?: DurabilityTaker;
  /**
   * With `liveFor`: the queues whose numbers are asked for when the patterns find more than a
   * few pages of the name filter hold, asked once every queue's record is handed to `each`'s
   * `take` (the caller has seen them all): their numbers alone are then asked (statistics.ts).
   * Absent: the listing with statistics at once (what the patterns find is what is wanted).
   */
  readonly reachedOf?: () => ((name: string) => boolean) | undefined;
  /**
   * With `live` (now, not `asOf`): what of the live state is wanted, known once the policy lists
   * are read. `patterns`: the queues whose numbers are wanted (a changed policy's pattern, as it
   * is and as proposed); the live listing then starts after the lists, narrowed to those queues
   * where the broker can be asked so (narrowed.ts): the broker computes statistics for those
   * alone. `federation`: whether the federation is read (three requests; only a policy naming
   * an upstream makes it matter, impact.ts `readsFederation`).
   */
  readonly liveFor?: (small: Pick<Inventory, 'version' | 'user' | 'operator' | 'plugins'>) => {
    readonly patterns: readonly string[];
    readonly federation: boolean;
  };
}

/** What lint's durability kinds take of the inventory's listings (InventoryOptions.durability). */
export interface DurabilityTaker {
  queue(q: DurabilityQueue): void;
  exchange(x: ExchangeListing): void;
}

/** Queues whose numbers wait for `keepLive`'s answer, at most (`openOneListing`). */
const KEEP_BATCH = 1024;

/** The inventory and its live reading from one queue listing (InventoryOptions.withoutReportedPolicies). */
async function openOneListing(
  source: InventorySource,
  vhost: string,
  { asOf, keepLive, plugins: withPlugins, durability }: InventoryOptions,
): Promise<Inventory> {
  const sampledAt = new Date().toISOString();
  const listing = source.streamQueuesLive?.(vhost, {
    ...(asOf ? { asOf } : {}),
    ...(durability ? { durability: true } : {}),
  });
  if (!listing) throw new Error('openOneListing: the source has no combined listing');
  // Every queue's statistics, with nothing read first to tell what they cost here (lint's
  // reading): a default budget is stretched from a page asked beside them.
  if (durability) source.stretchBudgetForStatistics?.(vhost).catch(() => undefined);
  const queues = startNow(listing);
  const exchanges = startNow(
    durability ? source.streamExchanges(vhost, { durability: true }) : source.streamExchanges(vhost),
  );
  const federation = readFederation(source, vhost);
  const cancel = async () => {
    await Promise.all([queues.cancel(), exchanges.cancel()]);
  };
  const small = await smallOf(source, vhost, cancel, withPlugins);
  const live = new Map<string, LiveQueue | null>();
  const nodeDown = new Set<string>();
  let read = false;
  return {
    ...small,
    cancel,
    async each(take) {
      // Asked once the queues are read: the caller may decide by what it found in them. Asked
      // for up to KEEP_BATCH queues at once, after they are handed on: a caller that reads in
      // batches (lint's) answers a batch with one pass, not one per queue.
      const waiting: QueueRecordLive[] = [];
      const decide = () => {
        const keep = keepLive?.();
        for (const q of waiting) {
          if (keep && !keep(q.queue.name)) continue;
          live.set(q.queue.name, q.live);
          if (q.nodeDown) nodeDown.add(q.queue.name);
        }
        waiting.length = 0;
      };
      await queues.each((q) => {
        take(queueObject(q.queue));
        if (durability && q.durability) durability.queue(q.durability);
        waiting.push(q);
        if (waiting.length >= KEEP_BATCH) decide();
      });
      decide();
      await exchanges.each((e) => {
        take(exchangeObject(e));
        durability?.exchange(e);
      });
      read = true;
    },
    async live() {
      if (!read) throw new Error('openOneListing: live() is read after each()');
      return {
        sampledAt,
        ...(asOf ? { asOf: asOf.toISOString() } : {}),
        queues: live,
        ...(nodeDown.size ? { nodeDown } : {}),
        ...(await federation),
      };
    },
  };
}

/**
 * The listing without statistics read, it tells what this broker's listings cost: a default
 * budget (no RMQ_TIMEOUT) is stretched to what the listing with statistics may take on it.
 */
function fitBudget(source: InventorySource, openedAt: number): void {
  source.stretchBudget?.((performance.now() - openedAt) * STATS_OVER_RECORDS);
}

/** The inventory, then the live numbers of the queues `keepLive` keeps (InventoryOptions.afterRecords). */
async function openInTwoSteps(
  source: InventorySource,
  vhost: string,
  { keepLive, plugins: withPlugins, asOf, withoutReportedPolicies }: InventoryOptions,
): Promise<Inventory> {
  const openedAt = performance.now();
  // What the one listing it replaces carried of each record, `durable` and `exclusive` too.
  const queues = startNow(source.streamQueues(vhost, { stats: false, lifetime: true }));
  const exchanges = startNow(source.streamExchanges(vhost));
  const federation = readFederation(source, vhost);
  const cancel = async () => {
    await Promise.all([queues.cancel(), exchanges.cancel()]);
  };
  const small = await smallOf(source, vhost, cancel, withPlugins);
  let reading: ReturnType<typeof readLive> | undefined;
  return {
    ...small,
    cancel,
    async each(take) {
      const names: string[] = [];
      await queues.each((q) => {
        // The record's policy is the layer as it is now; a reader of both sides resolves it.
        take(withoutReportedPolicies ? { ...queueObject(q), policy: undefined } : queueObject(q));
        names.push(q.name);
      });
      fitBudget(source, openedAt);
      await exchanges.each((e) => take(exchangeObject(e)));
      // Asked once every record is handed on: the caller decides by what it found in them all.
      const keep = keepLive?.();
      const wanted = keep ? names.filter(keep) : names;
      const when = asOf ? { asOf } : {};
      const stats = source.queueStatsOf
        ? source.queueStatsOf(vhost, wanted, names.length, when)
        : source.streamQueueStats(vhost, when);
      // `keep` is asked once per queue (it may count): the numbers that come are held against the names.
      const held = new Set(wanted);
      reading = readLive(source, vhost, stats, federation, asOf, () => (name) => held.has(name));
    },
    async live() {
      if (!reading) throw new Error('openInTwoSteps: live() is read after each()');
      return await reading.done;
    },
  };
}

/**
 * The numbers now of the queues named, of the `total` the vhost lists: statistics.ts's pages of
 * the name filter, or the listing with statistics kept for those. A queue the broker no longer
 * lists is not in the answer; a failure is thrown.
 */
export async function liveOfNames(
  source: InventorySource,
  vhost: string,
  names: readonly string[],
  total: number,
): Promise<Map<string, LiveQueue | null>> {
  const wanted = new Set(names);
  const out = new Map<string, LiveQueue | null>();
  const stats = source.queueStatsOf
    ? source.queueStatsOf(vhost, [...wanted], total)
    : source.streamQueueStats(vhost);
  for await (const q of stats) if (wanted.has(q.name)) out.set(q.name, q.live);
  return out;
}

/** `readSmall`'s answers as the inventory holds them. */
async function smallOf(
  source: InventorySource,
  vhost: string,
  cancel: () => Promise<void>,
  withPlugins: boolean | undefined,
): Promise<Pick<Inventory, 'version' | 'user' | 'operator' | 'plugins'>> {
  const [{ version }, user, operator, plugins] = await readSmall(source, vhost, cancel, withPlugins);
  return { version, user, operator, ...(plugins ? { plugins } : {}) };
}

/**
 * The version and the two policy lists (and, asked for, the plugins: unknown when they cannot be
 * read); if one fails, the listings started are dropped (`cancel`).
 */
async function readSmall(
  source: InventorySource,
  vhost: string,
  cancel: () => Promise<void>,
  withPlugins: boolean | undefined,
): Promise<[{ version: BrokerVersion }, Policy[], Policy[], ReadonlySet<string> | undefined]> {
  try {
    return await Promise.all([
      source.overview(),
      source.listPolicies(vhost),
      source.listOperatorPolicies(vhost),
      withPlugins && source.plugins ? source.plugins().catch(() => undefined) : undefined,
    ]);
  } catch (e) {
    await cancel();
    throw e;
  }
}

/** The vhost's federation, or why it could not be read (never a failure of the reading). */
function readFederation(
  source: InventorySource,
  vhost: string,
): Promise<Pick<LiveReading, 'federation' | 'federationWhy' | 'federationFailure'>> {
  return source.federation(vhost).then(
    (f) => ({ federation: f }),
    (e: unknown) => federationFailed(e, source.budgetMs),
  );
}

/** Folds the stats listing into a map as it arrives (beside the inventory), and reads the federation. */
function readLive(
  source: InventorySource,
  vhost: string,
  stats: AsyncIterable<QueueStats>,
  withFederation: boolean | ReturnType<typeof readFederation>,
  asOf: Date | undefined,
  keepLive: InventoryOptions['keepLive'],
): { done: Promise<LiveReading>; cancel(): Promise<void> } {
  const sampledAt = new Date().toISOString();
  const listing = startNow(stats);
  const federation =
    typeof withFederation !== 'boolean'
      ? withFederation
      : withFederation
        ? readFederation(source, vhost)
        : Promise.resolve({ federation: null });
  const queues = new Map<string, LiveQueue | null>();
  const nodeDown = new Set<string>();
  const done = (async (): Promise<LiveReading> => {
    let queuesWhy: string | undefined;
    let queuesFailure: ReadingFailure | undefined;
    try {
      await listing.each((q) => {
        const keep = keepLive?.();
        if (!keep || keep(q.name)) {
          queues.set(q.name, q.live);
          if (q.nodeDown) nodeDown.add(q.name);
        }
      });
    } catch (e) {
      queues.clear();
      nodeDown.clear();
      queuesWhy = whyFailed(e);
      queuesFailure = failureOf(e, source.budgetMs);
    }
    return {
      sampledAt,
      ...(asOf ? { asOf: asOf.toISOString() } : {}),
      queues,
      ...(nodeDown.size ? { nodeDown } : {}),
      ...(queuesWhy ? { queuesWhy } : {}),
      ...(queuesFailure ? { queuesFailure } : {}),
      ...(await federation),
    };
  })();
  return {
    done,
    async cancel() {
      await listing.cancel();
      await done;
    },
  };
}

/**
 * The inventory of what `patterns` find: the same source, its queue listings (records without
 * statistics, and the live numbers now) narrowed. A preview through it answers for the objects a
 * change of a policy with those patterns moves exactly as through the whole source; counts over
 * the whole vhost it does not give.
 */
export function narrowedTo(source: InventorySource, patterns: readonly string[]): InventorySource {
  return {
    overview: () => source.overview(),
    listPolicies: (vhost) => source.listPolicies(vhost),
    listOperatorPolicies: (vhost) => source.listOperatorPolicies(vhost),
    streamExchanges: (vhost) => source.streamExchanges(vhost),
    federation: (vhost) => source.federation(vhost),
    ...(source.plugins ? { plugins: () => source.plugins?.() ?? Promise.resolve(undefined) } : {}),
    ...(source.budgetMs !== undefined ? { budgetMs: source.budgetMs } : {}),
    streamQueues: (vhost, opts) =>
      opts.stats
        ? source.streamQueues(vhost, opts)
        : found(patterns, source.findQueues?.bind(source, vhost), () => source.streamQueues(vhost, opts)),
    streamQueueStats: (vhost, opts) =>
      opts?.asOf ? source.streamQueueStats(vhost, opts) : queueStatsFound(source, vhost, patterns),
  };
}
