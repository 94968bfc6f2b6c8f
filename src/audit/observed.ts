import * as z from 'zod';
import type { Impact } from '../policy/impact/index.ts';
import type { PreviewObject } from '../preview/index.ts';

/**
 * Predicted and observed, for the audit record of an applied change: per touched queue what the
 * preview said the write would do to its messages (from the broker as it was just before the
 * write), and what the broker's statistics then said, read by polling after the write (the apply
 * job, src/workflow/apply/observe.ts). Pure: the rows' shape, which queues are watched, where predicted
 * and observed differ; their words are observedWords.ts (apart: the schemas are loaded by every
 * reader of the audit trail, the terminal's start included, the words only where they are said).
 */

/** A touched queue before the write: its numbers and what the preview predicted for it. */
export const WatchedQueueSchema = z.object({
  name: z.string(),
  kind: z.string(),
  /** ready + unacknowledged before the write; null: the broker had no statistics for it. */
  messagesBefore: z.number().int().nullable(),
  /** Messages the preview said the write removes at once (absent: it could not say, statistics unknown). */
  predictedRemoved: z.number().int().min(0).optional(),
  /** The preview said the queue is deleted (`expires`, no consumer) this long after the write. */
  predictedDeletedInMs: z.number().int().min(0).optional(),
  /** Its cluster node was down when the preview read it: nothing was predicted from the others. */
  nodeDown: z.literal(true).optional(),
});
export type WatchedQueue = z.infer<typeof WatchedQueueSchema>;

/** `observed.queues[]` (docs/json.md, `history --json`): a watched queue and what it held after the write. */
export const ObservedQueueSchema = WatchedQueueSchema.extend({
  /** null: the queue was gone (deleted); absent: not known (no statistics after the write). */
  messagesAfter: z.number().int().nullable().optional(),
});
export type ObservedQueue = z.infer<typeof ObservedQueueSchema>;

export const ObservationSchema = z.object({
  /** When the write was made, and when the numbers before it were read (the preview's reading). */
  writtenAt: z.iso.datetime(),
  sampledBefore: z.iso.datetime().nullable(),
  /** When the last reading after the write was asked for. */
  at: z.iso.datetime(),
  /** The deadline passed before every queue's numbers reached what was predicted: they may not have settled. */
  cutShort: z.literal(true).optional(),
  /** Why the statistics after the write could not be read (then `messagesAfter` is what was last seen). */
  unreadable: z.string().optional(),
  queues: z.array(ObservedQueueSchema),
  /** Touched queues watched whose numbers did not move and for which nothing was predicted: not listed. */
  unchanged: z.number().int().min(0),
  /** Touched queues not watched (beyond WATCH_MAX). */
  unwatched: z.number().int().min(0),
});
export type Observation = z.infer<typeof ObservationSchema>;

/** At most this many touched queues are watched (those with a prediction first): a bounded job and record. */
export const WATCH_MAX = 1000;

function predictionOf(
  impact: readonly Impact[],
): Pick<WatchedQueue, 'predictedRemoved' | 'predictedDeletedInMs'> {
  let removed = 0;
  let known = true;
  let deletedInMs: number | undefined;
  for (const x of impact) {
    if (x.effect === 'drop') removed += x.messages;
    else if (x.effect === 'may-drop') known = false;
    else if (x.effect === 'delete') deletedInMs = x.inMs;
  }
  return {
    ...(known ? { predictedRemoved: removed } : {}),
    ...(deletedInMs === undefined ? {} : { predictedDeletedInMs: deletedInMs }),
  };
}

const predictsLoss = (w: WatchedQueue) =>
  (w.predictedRemoved ?? 1) > 0 || w.predictedDeletedInMs !== undefined;

/**
 * The touched queues to watch after the write: those the preview predicts a loss for (or cannot
 * tell), then those holding messages (or whose numbers are unknown), which the statistics'
 * lag may have hidden from the preview; at most WATCH_MAX.
 */
export function queuesToWatch(objects: readonly PreviewObject[]): {
  watched: WatchedQueue[];
  unwatched: number;
} {
  const all: WatchedQueue[] = [];
  for (const o of objects) {
    if (o.kind === 'exchange') continue;
    const w = {
      name: o.name,
      kind: o.kind,
      messagesBefore: o.now?.messages ?? null,
      ...predictionOf(o.impact),
      ...(o.nodeDown ? { nodeDown: true as const } : {}),
    };
    if (predictsLoss(w) || w.messagesBefore !== 0) all.push(w);
  }
  all.sort((a, b) => Number(predictsLoss(b)) - Number(predictsLoss(a)));
  return { watched: all.slice(0, WATCH_MAX), unwatched: Math.max(0, all.length - WATCH_MAX) };
}

/** The numbers after the write that the prediction expects: a count, deleted (null), or nothing said. */
export function expectedAfter(
  q: WatchedQueue,
  writtenAtMs: number,
  atMs: number,
): { kind: 'count'; messages: number } | { kind: 'deleted' } | { kind: 'deletion-due'; atMs: number } | null {
  if (q.predictedDeletedInMs !== undefined) {
    const due = writtenAtMs + q.predictedDeletedInMs;
    return atMs >= due ? { kind: 'deleted' } : { kind: 'deletion-due', atMs: due };
  }
  if (q.predictedRemoved === undefined || q.messagesBefore === null) return null;
  return { kind: 'count', messages: Math.max(0, q.messagesBefore - q.predictedRemoved) };
}

/**
 * Whether a queue's observed numbers are what was predicted (true also when nothing was, or is
 * yet, expected, and when the numbers after are not known: those are said as unknown).
 */
export function agrees(q: ObservedQueue, o: Pick<Observation, 'writtenAt' | 'at'>): boolean {
  const e = expectedAfter(q, Date.parse(o.writtenAt), Date.parse(o.at));
  if (e === null || q.messagesAfter === undefined) return true;
  if (e.kind === 'deleted') return q.messagesAfter === null;
  if (e.kind === 'deletion-due') return q.messagesAfter !== null;
  return q.messagesAfter === e.messages;
}

/** The listed queues whose observed numbers differ from the prediction. */
export function differences(o: Observation): ObservedQueue[] {
  return o.queues.filter((q) => !agrees(q, o));
}

/** The listed queues as shown: those that differ from the prediction first. */
export function inShowingOrder(o: Observation): ObservedQueue[] {
  return [...o.queues].sort((a, b) => Number(agrees(a, o)) - Number(agrees(b, o)));
}

/** Whether a watched queue is listed in the record: a prediction, a move, or numbers not known. */
export function worthListing(q: ObservedQueue): boolean {
  return (
    predictsLoss(q) ||
    q.messagesBefore === null ||
    q.messagesAfter === undefined ||
    q.messagesAfter !== q.messagesBefore
  );
}
