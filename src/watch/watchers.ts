import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { WatchStore } from './store.ts';
import { type OutsideChange, type WatchBroker, Watcher, type WatchHealth } from './watcher.ts';

/**
 * One watcher per environment, built in main.ts (and by the e2e harness): started together,
 * health reported together, stopped together.
 */

export interface WatchersOptions {
  readonly config: Config;
  readonly redis: Redis;
  readonly keyPrefix: string;
  readonly logger: Logger;
  /** A management client fit for background work (long timeouts, GETs retried). */
  readonly brokerFor: (env: string) => WatchBroker;
  readonly outside: (change: OutsideChange) => Promise<void>;
  /** Overrides, for tests. */
  readonly tuning?: { graceMs?: number; retryLowMs?: number; retryHighMs?: number };
}

export interface Watchers {
  readonly stores: ReadonlyMap<string, WatchStore>;
  health(): Record<string, WatchHealth>;
  stop(): Promise<void>;
}

/** Starts every environment's watcher; a watcher whose first comparison fails keeps retrying. */
export async function startWatchers(options: WatchersOptions): Promise<Watchers> {
  const watchers = new Map<string, Watcher>();
  const stores = new Map<string, WatchStore>();
  for (const env of options.config.environments) {
    const store = new WatchStore(options.redis, options.keyPrefix, env.name);
    stores.set(env.name, store);
    watchers.set(
      env.name,
      new Watcher({
        env,
        broker: options.brokerFor(env.name),
        store,
        logger: options.logger.child({ part: 'watch', env: env.name }),
        intervalMs: options.config.watchIntervalMs,
        outside: options.outside,
        ...options.tuning,
      }),
    );
  }
  await Promise.all([...watchers.values()].map((w) => w.start()));
  return {
    stores,
    health: () => Object.fromEntries([...watchers].map(([name, w]) => [name, w.health()])),
    async stop() {
      await Promise.allSettled([...watchers.values()].map((w) => w.stop()));
    },
  };
}
