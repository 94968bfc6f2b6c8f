/**
 * Redis for the terminal's `requests`, `history`, `--at` and `links` (the links watch's record),
 * loaded by `src/terminal/cli.ts` with `import()` so `which` and `preview` never pay for the Redis
 * client.
 *
 * ioredis is imported statically (here, through src/redis/redis.ts), never with `import()` itself: in the bundled CLI an
 * `import()` of a CommonJS package yields only its `default` (`{ Redis }` came out undefined:
 * "r is not a constructor"), while a static named import is read from the package's exports as
 * Node reads it. `scripts/build.ts` refuses a bundle with such an `import()`.
 */
import type { Redis } from 'ioredis';
import { isSentinelUrl, loadTerminalConfig, type TerminalConfig } from '../config/index.ts';
import type { LinksAsWatched } from '../links/index.ts';
import { openRedis } from '../redis/index.ts';
import { LinksStore } from '../watch/linksState/index.ts';

/** Redis connected, or an Error naming the variable to fix. */
async function connected(redisUrl: string): Promise<Redis> {
  const redis = openRedis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 3_000,
    commandTimeout: 10_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined); // reported by the caller, once
  try {
    await redis.connect();
    return redis;
  } catch (err) {
    redis.disconnect();
    throw new Error(
      `Redis (${isSentinelUrl(redisUrl) ? 'REDIS_SENTINELS' : 'REDIS_URL'}) cannot be reached: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** Redis, closed after `fn`. Unreachable: exit 3, like a broker that could not be asked. */
export async function withRedis(
  env: NodeJS.ProcessEnv,
  io: { readonly err: (s: string) => void },
  fn: (redis: Redis, config: TerminalConfig) => Promise<number>,
): Promise<number> {
  const config = loadTerminalConfig(env);
  let redis: Redis;
  try {
    redis = await connected(config.redisUrl);
  } catch (err) {
    io.err(`rmq: ${err instanceof Error ? err.message : String(err)}\n`);
    return 3;
  }
  try {
    return await fn(redis, config);
  } finally {
    redis.disconnect();
  }
}

/**
 * What the bot's links watch recorded of environment `envName` (src/watch/linksStore.ts), for
 * `links`: read once when asked, Redis closed after `fn`. Redis unreachable is not a failure of
 * `links`: the reading throws, and the answer says it was not read.
 */
export async function withLinksWatched<T>(
  env: NodeJS.ProcessEnv,
  keyPrefix: string,
  envName: string,
  fn: (watched: () => Promise<LinksAsWatched | undefined>) => Promise<T>,
): Promise<T> {
  const { redisUrl } = loadTerminalConfig(env);
  let redis: Redis | undefined;
  try {
    return await fn(async () => {
      redis = await connected(redisUrl);
      return new LinksStore(redis, keyPrefix, envName).watched();
    });
  } finally {
    redis?.disconnect();
  }
}
