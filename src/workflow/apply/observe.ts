import {
  expectedAfter,
  type Observation,
  type ObservedQueue,
  type WatchedQueue,
  worthListing,
} from '../../audit/index.ts';
import { codeOf } from '../../core/index.ts';
import type { LiveQueue } from '../../policy/impact/index.ts';
import type { InventorySource } from '../../rabbit/index.ts';

/**
 * What the write then did to the messages: the apply job polls the queues' statistics after it,
 * up to a deadline, for the audit record's `observed` (src/audit/observed.ts). Every way a change
 * is applied goes through the job, so through this.
 *
 * The statistics lag the broker (each queue reports every `collect_statistics_interval`, 5 s by
 * default; quorum queues were seen later still), so a reading just after the write may still be
 * the numbers before it. The poll ends when every watched queue shows what was predicted (a
 * removal down to the count left, a deletion due before the deadline gone) and, where a queue
 * held messages, no sooner than `minMs` after the write, so that a loss the preview could not
 * see (its own reading lagging) shows too. At the deadline it stops and says it was cut short.
 */

export interface ObserveOptions {
  /** Longest the poll waits after the write. Default 30 s. */
  readonly deadlineMs?: number;
  /** Shortest, when a watched queue held messages: one statistics interval and a margin. Default 6 s. */
  readonly minMs?: number;
  /** Between readings. Default 1 s. */
  readonly intervalMs?: number;
}

export const OBSERVE_DEFAULTS = { deadlineMs: 30_000, minMs: 6_000, intervalMs: 1_000 } as const;

/** The touched queues to watch, as the job saves them before it writes. */
export interface WatchPlan {
  readonly watched: readonly WatchedQueue[];
  readonly unwatched: number;
  /** When the numbers before were read (the preview's reading); null: they could not be. */
  readonly sampledBefore: string | null;
}

type Reading = ReadonlyMap<string, LiveQueue | null>;

async function read(broker: Pick<InventorySource, 'streamQueueStats'>, vhost: string): Promise<Reading> {
  const out = new Map<string, LiveQueue | null>();
  for await (const q of broker.streamQueueStats(vhost)) out.set(q.name, q.live);
  return out;
}

/** Whether the queue's numbers in `reading` are what the prediction waits for. */
function settled(q: WatchedQueue, reading: Reading, writtenAtMs: number, deadlineMs: number): boolean {
  const present = reading.has(q.name);
  const live = reading.get(q.name) ?? null;
  const expected = expectedAfter(q, writtenAtMs, deadlineMs);
  if (expected?.kind === 'deleted') return !present;
  if (!present) return true;
  if (live === null) return false; // no statistics yet: not known
  if (expected?.kind === 'count') return live.messages <= expected.messages;
  return true;
}

export async function observeAfterWrite(
  broker: Pick<InventorySource, 'streamQueueStats'>,
  vhost: string,
  plan: WatchPlan,
  writtenAt: Date,
  options: ObserveOptions = {},
): Promise<Observation> {
  const deadlineMs = options.deadlineMs ?? OBSERVE_DEFAULTS.deadlineMs;
  const minMs = options.minMs ?? OBSERVE_DEFAULTS.minMs;
  const intervalMs = options.intervalMs ?? OBSERVE_DEFAULTS.intervalMs;
  const writtenAtMs = writtenAt.getTime();
  const deadline = writtenAtMs + deadlineMs;
  const earliest = plan.watched.some((q) => q.messagesBefore !== 0) ? writtenAtMs + minMs : writtenAtMs;
  let reading: Reading = new Map();
  let at = new Date();
  let cutShort = false;
  let unreadable: string | undefined;
  let readOnce = false;
  if (plan.watched.length > 0) {
    for (;;) {
      at = new Date();
      try {
        reading = await read(broker, vhost);
        readOnce = true;
        unreadable = undefined;
      } catch (err) {
        // Said in the record, never a reason to fail an apply that is already written.
        unreadable = `${codeOf(err) ?? 'error'}: ${err instanceof Error ? err.message : String(err)}`;
      }
      const done =
        unreadable === undefined && plan.watched.every((q) => settled(q, reading, writtenAtMs, deadline));
      const now = Date.now();
      if (done && now >= earliest) break;
      if (now >= deadline) {
        cutShort = !done;
        break;
      }
      const wait = done ? earliest - now : intervalMs;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(wait, deadline - now))));
    }
  }
  const queues: ObservedQueue[] = [];
  let unchanged = 0;
  for (const q of plan.watched) {
    // Gone: deleted (null). Present without statistics, or never read: not known (absent).
    const live = reading.get(q.name);
    const row: ObservedQueue = !reading.has(q.name)
      ? !readOnce
        ? { ...q }
        : { ...q, messagesAfter: null }
      : live
        ? { ...q, messagesAfter: live.messages }
        : { ...q };
    if (worthListing(row)) queues.push(row);
    else unchanged++;
  }
  return {
    writtenAt: writtenAt.toISOString(),
    sampledBefore: plan.sampledBefore,
    at: at.toISOString(),
    ...(cutShort ? { cutShort: true as const } : {}),
    ...(unreadable ? { unreadable } : {}),
    queues,
    unchanged,
    unwatched: plan.unwatched,
  };
}
