/**
 * BullMQ's queues and workers closed while they still connect (a bot stopped right after its
 * start, a replica's worker started late): no "Connection is closed" may escape as an unhandled
 * rejection, which Node turns into a crash and CI saw as a failed run.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { createLogger } from '../../src/log/log.ts';
import { openRedis } from '../../src/redis/redis.ts';
import { createApplyQueue } from '../../src/workflow/apply/queue.ts';
import { createTimeBoxQueue, startTimeBoxWorker } from '../../src/workflow/timebox/timeboxQueue.ts';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `rmq:test-bull-close-${randomBytes(5).toString('hex')}`;
const log = createLogger('silent');

const escaped: unknown[] = [];
const record = (reason: unknown) => escaped.push(reason);
beforeEach(() => {
  escaped.length = 0;
  process.on('unhandledRejection', record);
});
afterEach(() => {
  process.off('unhandledRejection', record);
});
afterAll(async () => {
  const redis = openRedis(redisUrl);
  const keys = await redis.keys(`${keyPrefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

/** Rejections are reported on a later turn: let the event loop run a while after the closes. */
const turns = () => new Promise((resolve) => setTimeout(resolve, 300));

const messages = () => escaped.map((e) => (e instanceof Error ? e.message : String(e)));

it('a time-box worker and queue closed as soon as they are made', async () => {
  // Closed at every moment of their start: the INFO of each connection in flight at one of them.
  for (let i = 0; i < 40; i++) {
    const worker = startTimeBoxWorker({
      redisUrl,
      keyPrefix,
      log,
      handlers: { warn: async () => {}, revert: async () => {} },
    });
    const queue = createTimeBoxQueue({ redisUrl, keyPrefix });
    await new Promise((resolve) => setTimeout(resolve, i / 4));
    await Promise.all([worker.close(), queue.close()]);
  }
  await turns();
  expect(messages()).toEqual([]);
});

it('an apply queue closed as soon as it is made', async () => {
  for (let i = 0; i < 40; i++) {
    const queue = createApplyQueue({ redisUrl, keyPrefix });
    await new Promise((resolve) => setTimeout(resolve, i / 4));
    await queue.close();
  }
  await turns();
  expect(messages()).toEqual([]);
});
