import { Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Logger } from '../../log/index.ts';
import type { RedisTrouble } from '../../redis/index.ts';
import { openRedis, redisConnection } from '../../redis/index.ts';
import { bullPrefix } from '../apply/queue.ts';
import { boundedClose, connected } from '../apply/workerClose.ts';
import { scheduleOf } from './timebox.ts';

/**
 * The deadlines of time-boxed changes, as delayed BullMQ jobs: they live in Redis, so a bot
 * restarted before the deadline still acts at it, and the job id (`revert-<request id>`) makes it
 * one job whichever replica scheduled it and however often; BullMQ hands a job to one worker.
 *
 *   warn-<id>    10 minutes before the deadline (boxes longer than that): a warning in the thread
 *   revert-<id>  at the deadline: revert, or ask for a new approval (src/workflow/timebox/timeboxDeadline.ts)
 */

export const TIMEBOX_QUEUE = 'rmq-timebox';

export type TimeBoxJobName = 'warn' | 'revert';

export interface TimeBoxJobData {
  readonly requestId: string;
}

/** What the worker does with each job. Throwing retries it (with backoff); UnrecoverableError does not. */
export interface TimeBoxHandlers {
  warn(requestId: string): Promise<void>;
  revert(requestId: string): Promise<void>;
}

export interface TimeBoxQueueOptions {
  readonly redisUrl: string;
  readonly keyPrefix: string;
}

/** BullMQ's own connection settings: it blocks on Redis and must never give up a command. */
function connection(redisUrl: string) {
  return redisConnection(redisUrl, { maxRetriesPerRequest: null });
}

export interface TimeBoxQueue {
  /** Schedules the warning and the revert of a change applied at `appliedAt`, boxed for `forMs`. */
  schedule(
    requestId: string,
    appliedAt: Date,
    forMs: number,
  ): Promise<{ deadline: Date; warnAt: Date | null }>;
  close(): Promise<void>;
}

/** Completed and failed jobs are kept a week: a second schedule of the same id must find them. */
const KEEP = { age: 8 * 24 * 3600 } as const;

export function createTimeBoxQueue(o: TimeBoxQueueOptions): TimeBoxQueue {
  const queue = new Queue<TimeBoxJobData, void, TimeBoxJobName>(TIMEBOX_QUEUE, {
    connection: connection(o.redisUrl),
    prefix: bullPrefix(o.keyPrefix),
  });
  return {
    async schedule(requestId, appliedAt, forMs) {
      const s = scheduleOf(appliedAt, forMs);
      const delay = (at: Date) => Math.max(0, at.getTime() - Date.now());
      const options = {
        removeOnComplete: KEEP,
        removeOnFail: KEEP,
        attempts: 8,
        backoff: { type: 'exponential', delay: 2000 },
      } as const;
      if (s.warnAt) {
        await queue.add(
          'warn',
          { requestId },
          { ...options, jobId: `warn-${requestId}`, delay: delay(s.warnAt) },
        );
      }
      await queue.add(
        'revert',
        { requestId },
        { ...options, jobId: `revert-${requestId}`, delay: delay(s.deadline) },
      );
      return s;
    },
    async close() {
      await connected(queue);
      await queue.close();
    },
  };
}

export interface TimeBoxWorker {
  close(): Promise<void>;
}

export function startTimeBoxWorker(
  o: TimeBoxQueueOptions & {
    readonly handlers: TimeBoxHandlers;
    readonly log: Logger;
    /** The bot's: Redis away told once for every connection, this worker's failures then quiet. */
    readonly redisTrouble?: RedisTrouble;
  },
): TimeBoxWorker {
  // Its own connection (BullMQ's settings), so that its close can see whether Redis answers.
  const own = openRedis(o.redisUrl, { maxRetriesPerRequest: null });
  own.on('error', () => undefined); // reported by the worker's 'error' below
  const worker = new Worker<TimeBoxJobData, void, TimeBoxJobName>(
    TIMEBOX_QUEUE,
    async (job) => {
      const id = job.data?.requestId;
      if (typeof id !== 'string' || !/^r-[0-9a-f]{20}$/.test(id)) {
        throw new UnrecoverableError(`time-box job ${job.id} without a request id`);
      }
      if (job.name === 'warn') await o.handlers.warn(id);
      else await o.handlers.revert(id);
    },
    { connection: own, prefix: bullPrefix(o.keyPrefix), concurrency: 1 },
  );
  worker.on('failed', (job, err) => {
    o.log.warn({ job: job?.id, attempts: job?.attemptsMade, err: err.message }, 'time-box job failed');
  });
  worker.on('error', (err) => {
    if (!o.redisTrouble?.absorbed(err)) o.log.warn({ err: err.message }, 'time-box worker error');
  });
  const closeWorker = boundedClose(worker, own);
  return {
    async close() {
      await closeWorker();
      own.disconnect();
    },
  };
}
