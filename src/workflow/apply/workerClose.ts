import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';

/**
 * Stopping a BullMQ worker without hanging on a Redis that is gone. BullMQ's own graceful close
 * waits for Redis however long it stays away (its main loop's next command; ioredis holds QUIT
 * until it reconnects), and once begun it cannot be forced. So a worker is closed in two steps:
 * it stops taking jobs (paused, not waiting), and the jobs under way (each `processJob`: the
 * processor and the write of its outcome, completed, failed or delayed) are waited for while
 * Redis answers, or until Redis has been unreachable for REDIS_AWAY_CLOSE_MS; then BullMQ's forced
 * close (connections disconnected, no QUIT). A job cut short there is taken up again once its lock expires, by another replica or the
 * next start, as after a crash: what it could still do without Redis could not be recorded.
 */

/** While Redis cannot be reached, how long a stopping worker still waits for its jobs under way. */
export const REDIS_AWAY_CLOSE_MS = 2_000;

/** How often a stopping worker looks at its connection. */
const LOOK_MS = 100;

/**
 * Waits, at most `ms`, for a BullMQ queue or worker to finish connecting (its INFO at start).
 * Closed before that, BullMQ's own start fails after its error listeners are gone: an unhandled
 * rejection ("Connection is closed") in the process that closed it, seen in CI on a loaded machine.
 */
export async function connected(
  part: { waitUntilReady(): Promise<unknown> },
  ms = REDIS_AWAY_CLOSE_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      part.waitUntilReady().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `connection` has not been ready for `ms` in a row; `cancel` stops looking. */
function unreachableFor(connection: Redis, ms: number): { reached: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const reached = new Promise<void>((resolve) => {
    let since: number | undefined;
    timer = setInterval(() => {
      if (connection.status === 'ready') {
        since = undefined;
        return;
      }
      since ??= Date.now();
      if (Date.now() - since >= ms) resolve();
    }, LOOK_MS);
  });
  return { reached, cancel: () => clearInterval(timer) };
}

/**
 * `worker`'s close, in the two steps above. `connection` is the Redis connection it runs on (its
 * status says whether Redis answers). Call once the worker is made: it follows the jobs from then.
 */
export function boundedClose<D, R, N extends string>(
  worker: Worker<D, R, N>,
  connection: Redis,
  awayMs = REDIS_AWAY_CLOSE_MS,
): () => Promise<void> {
  // BullMQ's events miss some ends (a job moved back to delayed, a lost lock): the work itself is
  // followed instead, each call of processJob (BullMQ's main loop calls it per job).
  const underWay = new Set<Promise<unknown>>();
  const processJob = worker.processJob.bind(worker);
  worker.processJob = (...args) => {
    const run = processJob(...args);
    underWay.add(run);
    run.then(
      () => underWay.delete(run),
      () => underWay.delete(run),
    );
    return run;
  };
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      await connected(worker, awayMs);
      await worker.pause(true);
      if (underWay.size > 0) {
        const away = unreachableFor(connection, awayMs);
        try {
          await Promise.race([Promise.allSettled([...underWay]), away.reached]);
        } finally {
          away.cancel();
        }
      }
      await worker.close(true);
    })();
    return closing;
  };
}
