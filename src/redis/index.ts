/** The entrance of redis/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { openRedis, redisConnection } from './redis.ts';
export { RedisTrouble } from './redisTrouble.ts';
export { replicated } from './replication.ts';
