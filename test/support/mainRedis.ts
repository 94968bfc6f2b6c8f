/**
 * The compiled bot (`dist/main.js`) run as a process keys Redis under the production prefix
 * (`rmq:`): its watchers record the broker's policies, its workflow its requests. Tests that run
 * it give it a Redis database of its own, emptied of those keys after, so nothing lands in the
 * shared database 0 where every other test keeps its own prefix.
 */
import { Redis } from 'ioredis';

export const MAIN_REDIS_URL = (() => {
  const u = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  u.pathname = '/15';
  return u.toString();
})();

export async function clearMainRedis(): Promise<void> {
  const redis = new Redis(MAIN_REDIS_URL);
  try {
    const keys = await redis.keys('rmq:*');
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
