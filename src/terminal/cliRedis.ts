/**
 * Redis for the terminal's `requests` and `history`, loaded by `src/terminal/cli.ts` with `import()` so
 * `which` and `preview` never pay for the Redis client.
 *
 * ioredis is imported statically (here, through src/redis/redis.ts), never with `import()` itself: in the bundled CLI an
 * `import()` of a CommonJS package yields only its `default` (`{ Redis }` came out undefined:
 * "r is not a constructor"), while a static named import is read from the package's exports as
 * Node reads it. `scripts/build.ts` refuses a bundle with such an `import()`.
 */
import type { Redis } from 'ioredis';
import { isSentinelUrl, loadTerminalConfig, type TerminalConfig } from '../config/index.ts';
import { openRedis } from '../redis/index.ts';

/** Redis, closed after `fn`. Unreachable: exit 3, like a broker that could not be asked. */
export async function withRedis(
  env: NodeJS.ProcessEnv,
  io: { readonly err: (s: string) => void },
  fn: (redis: Redis, config: TerminalConfig) => Promise<number>,
): Promise<number> {
  const config = loadTerminalConfig(env);
  const { redisUrl } = config;
  const redis = openRedis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 3_000,
    commandTimeout: 10_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined); // reported below, once
  try {
    await redis.connect();
  } catch (err) {
    io.err(
      `rmq: Redis (${isSentinelUrl(redisUrl) ? 'REDIS_SENTINELS' : 'REDIS_URL'}) cannot be reached: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    redis.disconnect();
    return 3;
  }
  try {
    return await fn(redis, config);
  } finally {
    redis.disconnect();
  }
}
