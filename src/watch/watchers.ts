import type { Redis } from 'ioredis';
import type { AuditTrail } from '../audit/index.ts';
import type { Config } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { InventorySource } from '../rabbit/index.ts';
import type { RedisTrouble } from '../redis/index.ts';
import {
  type OutsideNotifier,
  type OutsideRecorderOptions,
  type OutsideTrail,
  outsideRecorder,
} from './outside.ts';
import { sealInto } from './seal.ts';
import { WatchStore } from './store.ts';
import {
  type OutsideChange,
  type WatchBroker,
  Watcher,
  type WatcherOptions,
  type WatchHealth,
} from './watcher.ts';

/**
 * One watcher per environment, built in src/bot/bot.ts (createBot, which main.ts and the e2e harness start): started together,
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
  /** The bot's: Redis away told once, the comparisons' failures then quiet. */
  readonly redisTrouble?: RedisTrouble;
  /** Seals each environment's snapshots and gaps into the trail. */
  readonly seal?: WatcherOptions['seal'];
  /** The records appended since the environment's last snapshot (the trail's count): checkpoints. */
  readonly sinceSnapshot?: (env: string) => Promise<number>;
  /** The environment's mark in the trail: a snapshot is sealed only if it has not grown since its reading began. */
  readonly trailMark?: (env: string) => Promise<string>;
  /** Overrides, for tests. */
  readonly tuning?: Pick<
    WatcherOptions,
    'graceMs' | 'retryLowMs' | 'retryHighMs' | 'vhosts' | 'heartbeatMs' | 'gapAfterMs' | 'checkpointEvery'
  >;
}

export interface Watchers {
  readonly stores: ReadonlyMap<string, WatchStore>;
  /** How each environment's changes are being caught (for /healthz). */
  health(): Record<string, WatchHealth>;
  stop(): Promise<void>;
}

/**
 * Starts every environment's watcher in the background (the first comparison may wait on a slow
 * broker; the bot answers meanwhile). A comparison that fails is tried again on the interval.
 */
export function startWatchers(options: WatchersOptions): Watchers {
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
        ...(options.redisTrouble ? { redisTrouble: options.redisTrouble } : {}),
        ...(options.seal ? { seal: options.seal } : {}),
        ...(options.sinceSnapshot
          ? {
              sinceSnapshot: (
                (sinceSnapshot) => () =>
                  sinceSnapshot(env.name)
              )(options.sinceSnapshot),
            }
          : {}),
        ...(options.trailMark
          ? {
              trailMark: (
                (trailMark) => () =>
                  trailMark(env.name)
              )(options.trailMark),
            }
          : {}),
        ...options.tuning,
      }),
    );
  }
  const started = [...watchers.values()].map((w) => w.start());
  return {
    stores,
    health: () => Object.fromEntries([...watchers].map(([name, w]) => [name, w.health()])),
    async stop() {
      await Promise.allSettled(started);
      await Promise.allSettled([...watchers.values()].map((w) => w.stop()));
    },
  };
}

/**
 * What src/bot/bot.ts builds: every environment watched, each change outside the bot recorded in the
 * audit trail and posted to the environment's approvals channel.
 */
export function watchOutside(o: {
  readonly config: Config;
  readonly redis: Redis;
  readonly keyPrefix: string;
  readonly logger: Logger;
  /** Background clients (long timeouts, GETs retried), one per environment. */
  readonly brokers: ReadonlyMap<string, WatchBroker & InventorySource>;
  /** Where each change, snapshot and gap is recorded: the audit trail (src/audit/trail.ts). */
  readonly trail: OutsideTrail &
    Pick<AuditTrail, 'append' | 'appendSnapshot' | 'appendedSinceSnapshot' | 'markOf'>;
  readonly notifier: OutsideNotifier;
  readonly redisTrouble?: RedisTrouble;
  readonly tuning?: WatchersOptions['tuning'];
  /** How long a burst of outside changes gathers (tests shorten it). */
  readonly burst?: Pick<OutsideRecorderOptions, 'windowMs' | 'maxHoldMs'>;
}): Watchers {
  const brokerFor = (env: string) => {
    const b = o.brokers.get(env);
    if (!b) throw new Error(`no broker client for environment ${env}`);
    return b;
  };
  const logger = o.logger.child({ part: 'watch' });
  const recorder = outsideRecorder({
    brokerFor,
    approvalsChannelOf: (env) => o.config.environments.find((e) => e.name === env)?.approvalsChannel,
    trail: o.trail,
    notifier: o.notifier,
    log: logger,
    ...o.burst,
  });
  const watchers = startWatchers({
    config: o.config,
    redis: o.redis,
    keyPrefix: o.keyPrefix,
    logger: o.logger,
    brokerFor,
    outside: async (change) => recorder.record(change),
    seal: (seal) => sealInto(o.trail, seal),
    sinceSnapshot: (env) => o.trail.appendedSinceSnapshot(env),
    trailMark: (env) => o.trail.markOf(env),
    ...(o.redisTrouble ? { redisTrouble: o.redisTrouble } : {}),
    ...(o.tuning ? { tuning: o.tuning } : {}),
  });
  return {
    ...watchers,
    async stop() {
      await watchers.stop();
      // The bursts still gathering are recorded and posted before the process goes.
      await recorder.flush();
    },
  };
}
