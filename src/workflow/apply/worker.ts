import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AuditTrail } from '../../audit/index.ts';
import type { ManagementClientOptions } from '../../rabbit/index.ts';
import type { RedisTrouble } from '../../redis/index.ts';
import { openRedis } from '../../redis/index.ts';
import { expireDue, remindDue, remindReviewsDue } from '../deciding/expiry.ts';
import type { FreezeStore } from '../deciding/freeze.ts';
import { freezeEntry, RAN_OUT, releaseHeld } from '../deciding/thaw.ts';
import { notifierLogging } from '../notifierLogging.ts';
import type { RequestStore } from '../store.ts';
import type { ApplyWorker, ApplyWorkerOptions } from '../types.ts';
import { type AnnounceWrite, ApplyJob } from './applyJob.ts';
import { APPLY_DEFAULTS, APPLY_QUEUE, type ApplyJobData, bullPrefix, createApplyQueue } from './queue.ts';
import { boundedClose } from './workerClose.ts';

/**
 * The BullMQ worker that runs the apply job (applyJob.ts) on approved requests, and the sweep
 * beside it: lost jobs queued again, expiry and reminders, freezes that ended.
 */

/** Management client settings for the job: a background task may wait, and the queue retries writes. */
export const APPLY_CLIENT_SETTINGS: Pick<ManagementClientOptions, 'timeouts' | 'getRetries' | 'retryBaseMs'> =
  {
    timeouts: { connectMs: 5_000, headersMs: 60_000, bodyMs: 60_000 },
    getRetries: 3,
    retryBaseMs: 500,
  };

/** What the job works with, built by the composition root (src/bot/botChangeRequests.ts `applyWorkerDeps`) and handed in. */
export interface ApplyWorkerDeps {
  /**
   * The worker's Redis connection (`jobConnection`): BullMQ blocks on it and must never give up a
   * command, and `requests` and `audit` sit on it for the same reason. Closed with the worker.
   */
  readonly connection: Redis;
  readonly requests: RequestStore;
  readonly audit: AuditTrail;
  readonly announceWrite: AnnounceWrite;
  /** The environments' freezes (on `connection`): a frozen environment's approved requests wait. */
  readonly freezes: FreezeStore;
}

/**
 * A connection for the apply worker and its stores: `maxRetriesPerRequest: null`, as BullMQ
 * requires. Its failures go to `redisTrouble` where the bot has one (told once with the others').
 */
export function jobConnection(redisUrl: string, log: Logger, redisTrouble?: RedisTrouble): Redis {
  const connection = openRedis(redisUrl, { maxRetriesPerRequest: null });
  if (redisTrouble) return redisTrouble.watch(connection);
  connection.on('error', (err: Error) =>
    log.warn({ message: err.message }, 'apply worker: Redis connection error'),
  );
  return connection;
}
export async function startApplyWorker(options: ApplyWorkerOptions & ApplyWorkerDeps): Promise<ApplyWorker> {
  const now = options.now ?? (() => new Date());
  const log = options.log.child({ component: 'apply' });
  const { connection, requests: store, audit } = options;
  const notify = notifierLogging(options.notifier, log);
  const queue = createApplyQueue({
    redisUrl: options.redisUrl,
    keyPrefix: options.keyPrefix,
    attempts: options.attempts ?? APPLY_DEFAULTS.attempts,
    backoffMs: options.backoffMs ?? APPLY_DEFAULTS.backoffMs,
  });
  const job = new ApplyJob({
    store,
    audit,
    notify,
    log,
    now,
    brokerFor: options.brokerFor,
    environments: options.environments,
    announceWrite: options.announceWrite,
    freezes: options.freezes,
    verifyDeadlineMs: options.verifyDeadlineMs ?? 60_000,
    ...(options.rollbackRetryMs !== undefined ? { rollbackRetryMs: options.rollbackRetryMs } : {}),
    observe: options.observe ?? {},
    ...(options.onRecorded ? { onRecorded: options.onRecorded } : {}),
  });

  const worker = new Worker<ApplyJobData>(APPLY_QUEUE, (j, token) => job.run(j, token), {
    connection,
    prefix: bullPrefix(options.keyPrefix),
    concurrency: 2,
    ...(options.lockDurationMs ? { lockDuration: options.lockDurationMs } : {}),
    ...(options.lockDurationMs ? { stalledInterval: options.lockDurationMs } : {}),
  });
  worker.on('error', (err) => {
    if (!options.redisTrouble?.absorbed(err)) log.error({ err }, 'apply worker error');
  });
  const closeWorker = boundedClose(worker, connection);

  // Approved requests whose job is missing (an enqueue lost to a Redis blip) are queued again;
  // requests past their deadline expire; those past half of it remind their approvers; break-glass
  // changes unreviewed past their review deadline remind the approvals channel. At start, then on an interval, by every replica.
  const sweep = async () => {
    try {
      for (const r of await store.unfinished()) await queue.enqueue(r.id);
      await expireDue(store, notify);
      await remindDue(store, notify);
      await remindReviewsDue(store, notify);
      await endFreezes();
    } catch (err) {
      if (!options.redisTrouble?.absorbed(err))
        log.warn({ err }, 'apply worker: sweep failed; next one in a while');
    }
  };
  /**
   * A freeze past its end is taken by one replica, recorded; then, on every replica, the requests
   * held in an environment no longer frozen are released in approval order (the delayed jobs also
   * wake by themselves at the freeze's end; this catches a lift that raced a hold).
   */
  async function endFreezes(): Promise<void> {
    const held = (await store.unfinished()).filter((r) => r.held).map((r) => r.env);
    for (const name of new Set([...(await options.freezes.environments()), ...held])) {
      const at = now();
      const ended = await options.freezes.takeEnded(name, at);
      if (ended) {
        await audit.append(freezeEntry(name, ended, at, { because: RAN_OUT }));
        log.info({ env: name, until: ended.until }, 'freeze ended');
      }
      if (!(await options.freezes.current(name, at))) await releaseHeld(store, queue, name);
    }
  }

  await sweep();
  const timer = setInterval(sweep, options.sweepIntervalMs ?? 30_000);
  timer.unref();

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await closeWorker();
        await queue.close();
        connection.disconnect();
      })();
      return closing;
    },
  };
}
