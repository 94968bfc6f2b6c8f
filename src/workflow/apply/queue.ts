import { Queue } from 'bullmq';
import * as z from 'zod';
import { AuditObjectSchema, WatchedQueueSchema } from '../../audit/index.ts';
import { openRedis } from '../../redis/index.ts';
import { SetCursorSchema } from '../changeSet.ts';
import type { ApplyQueue } from '../types.ts';
import { connected } from './workerClose.ts';

/**
 * The apply queue (BullMQ). One job per approved request, its id the request's id: a second
 * enqueue of the same approval (a retried click, the worker's sweep, another replica) is a no-op
 * while the job is kept, and the job itself checks the request's state, so an approval is applied
 * at most once.
 */

export const APPLY_QUEUE = 'apply';

export const bullPrefix = (keyPrefix: string) => `${keyPrefix}:bull`;

export const ApplyJobData = z.object({
  requestId: z.string(),
  /** A single change's, set by the job before it writes: what each object loses, from the broker as it was just before (applyOne.ts). */
  objects: z.array(AuditObjectSchema).optional(),
  unpredictable: z.number().int().min(0).optional(),
  /** Set with `objects`: the touched queues to watch after the write, as they were just before it. */
  watch: z
    .object({
      watched: z.array(WatchedQueueSchema),
      unwatched: z.number().int().min(0),
      sampledBefore: z.iso.datetime().nullable(),
    })
    .optional(),
  /** When the job wrote (set just before the write). */
  writtenAt: z.iso.datetime().optional(),
  /**
   * The apply's cursor, every request's (a single change is a set of one): its phase and how far it
   * got, saved after every step (applySet.ts). A job saved before it had one starts at the first step.
   */
  set: SetCursorSchema.optional(),
});
export type ApplyJobData = z.infer<typeof ApplyJobData>;

export interface ApplyQueueOptions {
  readonly redisUrl: string;
  readonly keyPrefix: string;
  /** Tries of a job whose failure may pass. Default 6. */
  readonly attempts?: number;
  /** First backoff step, doubled per try (2, 4, 8, 16, 32 s by default). */
  readonly backoffMs?: number;
}

export const APPLY_DEFAULTS = { attempts: 6, backoffMs: 2_000 } as const;

export function createApplyQueue(options: ApplyQueueOptions): ApplyQueue {
  // Its own connection: an enqueue while Redis is away fails fast instead of waiting forever.
  const connection = openRedis(options.redisUrl, {
    maxRetriesPerRequest: 1,
    connectTimeout: 3_000,
    commandTimeout: 5_000,
  });
  connection.on('error', () => undefined); // reported by the callers' failures
  const queue = new Queue<ApplyJobData>(APPLY_QUEUE, { connection, prefix: bullPrefix(options.keyPrefix) });
  queue.on('error', () => undefined);
  return {
    async enqueue(requestId) {
      await queue.add(
        'apply',
        { requestId },
        {
          jobId: requestId,
          attempts: options.attempts ?? APPLY_DEFAULTS.attempts,
          backoff: { type: 'exponential', delay: options.backoffMs ?? APPLY_DEFAULTS.backoffMs },
          // Kept a week: a late duplicate enqueue still finds it and adds nothing.
          removeOnComplete: { age: 7 * 86_400 },
          removeOnFail: { age: 30 * 86_400 },
        },
      );
    },
    async promote(requestId) {
      const job = await queue.getJob(requestId);
      if (job && (await job.isDelayed())) await job.promote();
    },
    async close() {
      await connected(queue);
      await queue.close();
      connection.disconnect();
    },
  };
}
