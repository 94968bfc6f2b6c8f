/**
 * createBot, the composition root main.ts and the harness both start, as the built bundle
 * (`dist/main.js`) has it: a start that
 * fails says what to fix as a BotStartError and closes only what the bot made itself, never the
 * clients a caller handed in (a replica's, a test's); its stop() is once, however often called.
 * The bot's whole life as users run it: slack-main.test.ts (dist/main.js) and every harness suite.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerCredentials, brokerUrl } from '../support/broker.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';
import { type Shipped, shipped } from '../support/harness.ts';

let slack: FakeSlack;
let dist: Shipped;
beforeAll(async () => {
  [slack, dist] = await Promise.all([startFakeSlack(), shipped()]);
});
afterAll(async () => {
  await slack?.close();
});

const configWith = (botToken: string) => {
  const { user, password } = brokerCredentials();
  return dist.loadConfig({
    RMQ_URL: brokerUrl(),
    RMQ_USER: user,
    RMQ_PASSWORD: password,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    SLACK_BOT_TOKEN: botToken,
    SLACK_SIGNING_SECRET: 'test-signing-secret',
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
  });
};

describe('createBot', () => {
  it('a refused bot token: a BotStartError naming it; the clients handed in stay open', async () => {
    const { BotStartError, createBot, createBrokers, createLogger, createMetrics, createRedis } = dist;
    const config = configWith('xoxb-refused');
    const metrics = createMetrics({ defaultMetrics: false });
    const brokers = createBrokers(config, metrics);
    const redis = createRedis(config.redisUrl);
    // Its own prefix, its keys deleted after: the bot's queue writes its metadata before Slack is asked.
    const keyPrefix = `rmq:test-bot-refused-${randomBytes(5).toString('hex')}`;
    try {
      const bot = createBot(config, {
        logger: createLogger('silent'),
        metrics,
        keyPrefix,
        clients: { brokers, redis },
      });
      const err = await bot.start(0).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BotStartError);
      expect((err as Error).message).toMatch(/^Slack refused SLACK_BOT_TOKEN \(invalid_auth\)\. /);
      expect((err as Error).message).not.toContain('xoxb-refused');
      await bot.stop();
      // Still the caller's, still working.
      expect(await redis.ping()).toBe('PONG');
      const [only] = brokers.values();
      expect(await only?.listVhosts()).toContain('/');
    } finally {
      await Promise.allSettled([...brokers.values()].map((b) => b.close()));
      const keys = await redis.keys(`${keyPrefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it('serves, and stop() is once: a second call waits for the first', async () => {
    const { createBot, createLogger, createMetrics } = dist;
    const bot = createBot(configWith(slack.botToken), {
      logger: createLogger('silent'),
      metrics: createMetrics({ defaultMetrics: false }),
      keyPrefix: 'rmq:test-bot-once',
      changes: false,
      watch: false,
    });
    const port = await bot.start(0);
    expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
    const first = bot.stop(1000);
    expect(bot.stop(1000)).toBe(first);
    await first;
    await expect(fetch(`http://127.0.0.1:${port}/livez`)).rejects.toThrow();
  });
});
