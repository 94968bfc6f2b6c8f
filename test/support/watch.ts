/**
 * A watcher of changes outside the bot, on a real broker and Redis, for tests: its own Redis key
 * prefix (removed by `close`), watching one vhost, collecting what it would record and post.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { amqpEndpoint, type Environment } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import type { ManagementClient } from '../../src/rabbit/client.ts';
import { WatchStore } from '../../src/watch/store.ts';
import { type OutsideChange, Watcher, type WatcherOptions } from '../../src/watch/watcher.ts';
import { brokerCredentials } from './broker.ts';
import type { TestBroker } from './brokers.ts';

export function testEnvironment(broker: TestBroker, amqpUrl = broker.amqpUrl): Environment {
  const { user, password } = brokerCredentials();
  return {
    name: 'test',
    url: broker.url,
    urls: broker.urls ?? [broker.url],
    user,
    password,
    mode: 'normal',
    approvers: [],
    approvalsRequired: 1,
    requesters: [],
    breakGlass: undefined,
    approvalsChannel: undefined,
    amqp: amqpEndpoint(broker.amqpUrls ?? amqpUrl, broker.url, user, password),
    requestTtlMs: 24 * 3_600_000,
  };
}

export interface TestWatcher {
  readonly watcher: Watcher;
  readonly store: WatchStore;
  readonly changes: OutsideChange[];
  stop(): Promise<void>;
}

export interface WatchFixture {
  readonly redis: Redis;
  readonly keyPrefix: string;
  start(options: Partial<WatcherOptions> & { vhost: string; client: ManagementClient }): Promise<TestWatcher>;
  close(): Promise<void>;
}

export function watchFixture(broker: TestBroker): WatchFixture {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const keyPrefix = `rmq:test-watch-${randomBytes(5).toString('hex')}`;
  const running: TestWatcher[] = [];
  return {
    redis,
    keyPrefix,
    async start(options) {
      // One recorded state per vhost: two watchers of one vhost are two replicas of one bot.
      const env = { ...(options.env ?? testEnvironment(broker)), name: `test-${options.vhost}` };
      const store = new WatchStore(redis, keyPrefix, env.name);
      const changes: OutsideChange[] = [];
      const watcher = new Watcher({
        env,
        broker: options.client,
        store,
        logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
        intervalMs: 60_000,
        outside: async (c) => {
          changes.push(c);
        },
        retryLowMs: 200,
        retryHighMs: 1000,
        graceMs: 500,
        vhosts: (v) => v === options.vhost,
        ...options,
      });
      await watcher.start();
      const t: TestWatcher = { watcher, store, changes, stop: () => watcher.stop() };
      running.push(t);
      return t;
    },
    async close() {
      await Promise.allSettled(running.map((t) => t.stop()));
      const keys = await redis.keys(`${keyPrefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}
