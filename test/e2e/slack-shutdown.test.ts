/**
 * SIGTERM while Redis cannot be reached: the compiled bot (`dist/main.js`, as `npm start` runs
 * it) on a Redis of this test's own, with its apply and time-box workers and queues blocked on
 * it; the test kills that Redis (by its pid), then sends SIGTERM. BullMQ's close waits for a
 * Redis that never comes back (ioredis holds QUIT until it reconnects): the bot closes with a
 * deadline, then disconnects, and exits 0 (stopped by a signal, docs/operations.md / src/bot/main.ts) within
 * its drain, not after the 90 s hard limit with 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotProcess, labBotEnv, spawnBot } from '../support/botProcess.ts';
import { brokerUrl, waitFor } from '../support/broker.ts';
import { built } from '../support/built.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

/**
 * The longest the stop may take here: the answers' drain (10 s, none under way), the broker
 * clients' grace (1 s) and the workers' close deadline while Redis is away (REDIS_AWAY_CLOSE_MS
 * in src/workflow/apply/workerClose.ts), with room for a loaded machine; far below the 90 s hard limit.
 */
const STOP_BOUND_MS = 30_000;

const cwd = mkdtempSync(join(tmpdir(), 'rmq-shutdown-'));
let slack: FakeSlack;
let redis: RedisServer;
let bot: BotProcess;

beforeAll(async () => {
  const mainJs = join((await built()).outdir, 'main.js');
  [slack, redis] = await Promise.all([startFakeSlack(), startRedisServer()]);
  const env = labBotEnv({
    cwd,
    environmentsYaml: `environments:\n  - { name: lab, url: "${brokerUrl()}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD, approvers: [U0APPROVER], approvalsChannel: C0APPROVALS }\n`,
    slack,
    redisUrl: redis.url,
    signingSecret: 'shutdown-test-signing-secret',
  });
  bot = spawnBot(mainJs, env, cwd);
  await bot.listening();
});

afterAll(async () => {
  bot?.child.kill('SIGKILL');
  await Promise.allSettled([slack?.close(), redis?.stop()]);
  rmSync(cwd, { recursive: true, force: true });
});

describe('npm start, SIGTERM with Redis gone', () => {
  it('closes its queues with a deadline, then by force, and exits 0 within the drain', async () => {
    // Up: the apply and time-box workers block on their Redis connections (BullMQ's BZPOPMIN / BLMOVE).
    const probe = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      await waitFor(
        async () => {
          const clients = await probe.client('LIST');
          return (
            String(clients)
              .split('\n')
              .filter((l) => /cmd=(bzpopmin|blmove|brpoplpush)/.test(l)).length >= 2
          );
        },
        { deadlineMs: 30_000, what: 'both workers blocked on Redis' },
      );
    } finally {
      probe.disconnect();
    }
    await redis.stop();
    await waitFor(() => bot.output().includes('Redis does not answer at'), {
      deadlineMs: 15_000,
      what: 'the bot to see Redis gone',
    });

    const signalled = Date.now();
    bot.child.kill('SIGTERM');
    const code = await Promise.race([
      bot.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), STOP_BOUND_MS)),
    ]);
    const tookMs = Date.now() - signalled;
    expect({ code, tookMs: tookMs < STOP_BOUND_MS }, `the bot said:\n${bot.output().slice(-6000)}`).toEqual({
      code: 0,
      tookMs: true,
    });
    expect(bot.output()).not.toContain('shutdown did not finish in time');
    expect(bot.output()).toContain('"msg":"stopped"');
  }, 90_000);
});
