import type { DefaultsRedis } from './channelDefaults.ts';

/**
 * What the Slack front door needs of Redis, and no more: ioredis satisfies it, tests may pass
 * a fake. Keys are namespaced by a prefix so several apps (and test runs) share one Redis.
 */
export interface SlackRedis extends DefaultsRedis {
  set(key: string, value: string, ex: 'EX', seconds: number, nx: 'NX'): Promise<'OK' | null>;
  set(key: string, value: string): Promise<unknown>;
  ping(): Promise<string>;
  /** For /readyz: whether Redis keeps its data on disk (src/bot/health.ts). */
  config?(subcommand: 'GET', name: string): Promise<unknown>;
}

/** Slack retries an event for up to a day (with Delayed Events); remember ids a little longer. */
const EVENT_MEMORY_SECONDS = 25 * 60 * 60;

export interface EventDedupe {
  /** True the first time an event id is seen (by any instance sharing the Redis); false after. */
  firstDelivery(eventId: string): Promise<boolean>;
}

export function redisEventDedupe(redis: SlackRedis, keyPrefix: string): EventDedupe {
  return {
    async firstDelivery(eventId) {
      const set = await redis.set(`${keyPrefix}:event:${eventId}`, '1', 'EX', EVENT_MEMORY_SECONDS, 'NX');
      return set === 'OK';
    },
  };
}
