/**
 * How every part of the bot (the request store, BullMQ's queues and workers, the audit trail,
 * the watchers, the terminal's `requests` and `history`) reaches Redis: `REDIS_URL`, or the
 * primary that Redis Sentinel names (`REDIS_SENTINELS`, `REDIS_SENTINEL_NAME`). The config turns
 * the Sentinel settings into one address, `redis+sentinel://host:port,host:port/NAME` (with the
 * primary's password, if any, as in a Redis URL), so the parts pass one string around whichever
 * it is (src/config/redisAddress.ts); here it becomes the client's options. ioredis asks the Sentinels for the primary at each
 * (re)connection, so after a failover every connection reaches the promoted replica.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { isSentinelUrl, parseSentinels } from '../config/index.ts';

/**
 * The client options for an address: `{ url }` for a Redis URL (BullMQ and ioredis read it), or
 * the Sentinels and the primary's name. `extra` (timeouts, retries) applies to the connection to
 * the primary.
 */
export function redisConnection(url: string, extra: RedisOptions = {}): RedisOptions & { url?: string } {
  if (!isSentinelUrl(url)) return { url, ...extra };
  const m = /^redis\+sentinel:\/\/(?:([^@/]*)@)?([^/]+)\/([^/?#]+)$/.exec(url);
  const parsed = m?.[2] ? parseSentinels(m[2]) : undefined;
  if (!m?.[3] || !parsed || 'error' in parsed) throw new Error(`not a Sentinel address: ${url}`);
  const password = m[1]?.includes(':') ? decodeURIComponent(m[1].slice(m[1].indexOf(':') + 1)) : undefined;
  return {
    sentinels: parsed.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: decodeURIComponent(m[3]),
    ...(password ? { password } : {}),
    // A Sentinel that does not answer is skipped quickly for the next one.
    sentinelRetryStrategy: (times: number) => Math.min(times * 200, 2_000),
    ...extra,
  };
}

/** A client for the address (see redisConnection). */
export function openRedis(url: string, extra: RedisOptions = {}): Redis {
  const { url: plain, ...options } = redisConnection(url, extra);
  return plain === undefined ? new Redis(options) : new Redis(plain, options);
}
