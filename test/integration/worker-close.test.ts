/**
 * A BullMQ worker's close (src/workflow/apply/workerClose.ts) on a Redis of this test's own: a job under
 * way is waited for while Redis answers (it completes, recorded in Redis, before the close
 * resolves); with Redis killed while a job is under way the close still resolves, by force, after
 * the away deadline, instead of waiting for a Redis that never comes back; a job moved to delayed
 * (a held request: no BullMQ event says so) is not waited for beyond its move.
 */
import { DelayedError, type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedClose } from '../../src/workflow/apply/workerClose.ts';
import { waitFor } from '../support/broker.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const QUEUE = 'close-test';
let redis: RedisServer | undefined;
const opened: Redis[] = [];

afterEach(async () => {
  for (const c of opened.splice(0)) c.disconnect();
  await redis?.stop();
  redis = undefined;
});

/**
 * A queue and a worker whose job runs until `release` is called (then returns, or with `delay`
 * moves itself back to delayed, as the apply job does for a frozen environment).
 */
async function workerWithJob(awayMs: number, delay = false) {
  redis = await startRedisServer();
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const producer = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  for (const c of [connection, producer]) {
    c.on('error', () => undefined);
    opened.push(c);
  }
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started = false;
  const worker = new Worker(
    QUEUE,
    async (job: Job, token?: string) => {
      started = true;
      await held;
      if (delay) {
        await job.moveToDelayed(Date.now() + 3_600_000, token);
        throw new DelayedError();
      }
      return 'done';
    },
    { connection, prefix: 't' },
  );
  worker.on('error', () => undefined);
  const close = boundedClose(worker, connection, awayMs);
  const queue = new Queue(QUEUE, { connection: producer, prefix: 't' });
  queue.on('error', () => undefined);
  const job = await queue.add('j', {});
  await waitFor(() => started, { what: 'the job to start' });
  return { worker, close, queue, job, release, server: redis };
}

describe('closing a worker', () => {
  it('waits for the job under way while Redis answers: it is completed in Redis before the close resolves', async () => {
    const { worker, close, queue, job, release } = await workerWithJob(2_000);
    let closed = false;
    const closing = close().then(() => (closed = true));
    // It takes no new job (paused) and waits: the job still runs.
    await waitFor(() => worker.isPaused(), { what: 'the worker to pause' });
    expect(closed).toBe(false);
    expect(await job.getState()).toBe('active');
    release();
    await closing;
    expect(await (await queue.getJob(job.id ?? ''))?.getState()).toBe('completed');
    await queue.close();
  });

  it('waits for a job that moves itself back to delayed (no completed or failed event), then closes', async () => {
    const { close, queue, job, release } = await workerWithJob(2_000, true);
    const closing = close();
    release();
    await closing;
    expect(await (await queue.getJob(job.id ?? ''))?.getState()).toBe('delayed');
    await queue.close();
  });

  it('closes by force once Redis has been unreachable for the deadline, the job still under way', async () => {
    const { close, server } = await workerWithJob(500);
    await server.stop();
    // Resolves (BullMQ's own close would wait for Redis for ever): the test's own timeout is the bound.
    await expect(close()).resolves.toBeUndefined();
  });
});
