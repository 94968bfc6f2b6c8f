/**
 * The deadlines of time-boxed changes on the real Redis: a delayed job survives the bot's
 * restart, and runs once however many replicas scheduled it and however many workers wait.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/log.ts';
import {
  createTimeBoxQueue,
  startTimeBoxWorker,
  type TimeBoxHandlers,
} from '../../src/workflow/timebox/timeboxQueue.ts';
import { waitFor } from '../support/broker.ts';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `rmq:test-timebox-${randomBytes(5).toString('hex')}`;
const log = createLogger('silent');
const requestId = () => `r-${randomBytes(10).toString('hex')}`;

function recording(): TimeBoxHandlers & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async warn(id) {
      calls.push(`warn ${id}`);
    },
    async revert(id) {
      calls.push(`revert ${id}`);
    },
  };
}

afterAll(async () => {
  const redis = new Redis(redisUrl);
  const keys = await redis.keys(`${keyPrefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('time-box deadlines', () => {
  it('scheduled twice by two replicas, two workers waiting: the revert runs once, at the deadline', async () => {
    const [q1, q2] = [
      createTimeBoxQueue({ redisUrl, keyPrefix }),
      createTimeBoxQueue({ redisUrl, keyPrefix }),
    ];
    const a = recording();
    const b = recording();
    const workers = [
      startTimeBoxWorker({ redisUrl, keyPrefix, handlers: a, log }),
      startTimeBoxWorker({ redisUrl, keyPrefix, handlers: b, log }),
    ];
    try {
      const id = requestId();
      const appliedAt = new Date();
      const s = await q1.schedule(id, appliedAt, 1500);
      await q2.schedule(id, appliedAt, 1500);
      expect(s.warnAt).toBeNull(); // shorter than the warning
      await waitFor(() => a.calls.length + b.calls.length >= 1, { deadlineMs: 10_000, what: 'the revert' });
      const ranAt = Date.now();
      expect(ranAt).toBeGreaterThanOrEqual(s.deadline.getTime() - 50);
      // A third schedule after it ran finds the completed job: nothing runs again.
      await q1.schedule(id, appliedAt, 1500);
      const later = requestId();
      await q1.schedule(later, new Date(), 500);
      await waitFor(() => [...a.calls, ...b.calls].includes(`revert ${later}`), {
        deadlineMs: 10_000,
        what: 'the later revert',
      });
      expect([...a.calls, ...b.calls].filter((c) => c === `revert ${id}`)).toHaveLength(1);
    } finally {
      await Promise.all([...workers.map((w) => w.close()), q1.close(), q2.close()]);
    }
  });

  it('the bot stopped before the deadline: the next one started runs it once', async () => {
    const queue = createTimeBoxQueue({ redisUrl, keyPrefix });
    const first = recording();
    const worker = startTimeBoxWorker({ redisUrl, keyPrefix, handlers: first, log });
    const id = requestId();
    await queue.schedule(id, new Date(), 2000);
    await worker.close();
    await queue.close();
    expect(first.calls).toEqual([]);
    const second = recording();
    const restarted = startTimeBoxWorker({ redisUrl, keyPrefix, handlers: second, log });
    try {
      await waitFor(() => second.calls.includes(`revert ${id}`), {
        deadlineMs: 15_000,
        what: 'the revert after restart',
      });
      expect(first.calls).toEqual([]);
    } finally {
      await restarted.close();
    }
  });

  it('a box longer than ten minutes is warned about ten minutes before', async () => {
    const queue = createTimeBoxQueue({ redisUrl, keyPrefix });
    const handlers = recording();
    const worker = startTimeBoxWorker({ redisUrl, keyPrefix, handlers, log });
    try {
      const id = requestId();
      // Applied 2 h ago with a box of 2 h 10 min + 1 s: the warning is due in a second, the revert in 10 min.
      const appliedAt = new Date(Date.now() - 2 * 3_600_000);
      const s = await queue.schedule(id, appliedAt, 2 * 3_600_000 + 10 * 60_000 + 1000);
      expect(s.deadline.getTime() - (s.warnAt?.getTime() ?? 0)).toBe(10 * 60_000);
      await waitFor(() => handlers.calls.includes(`warn ${id}`), { deadlineMs: 10_000, what: 'the warning' });
      expect(handlers.calls).toEqual([`warn ${id}`]);
    } finally {
      await Promise.all([worker.close(), queue.close()]);
    }
  });
});
