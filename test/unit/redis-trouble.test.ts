/**
 * src/redis/redisTrouble.ts: which failures mean Redis is away, the address as it may be logged, and
 * one line for the first failure of any connection, the rest at debug, until Redis answers again.
 * The process as users meet it: test/e2e/errors-name-the-fix.test.ts.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { isRedisAway, RedisTrouble, redisAddressShown } from '../../src/redis/redisTrouble.ts';

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('isRedisAway', () => {
  it('network failures and ioredis giving up are; anything else is not', () => {
    expect(isRedisAway(coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'))).toBe(true);
    expect(isRedisAway(coded('ENOTFOUND', 'getaddrinfo ENOTFOUND redis.nowhere'))).toBe(true);
    expect(
      isRedisAway(
        Object.assign(new Error('Reached the max retries per request limit'), {
          name: 'MaxRetriesPerRequestError',
        }),
      ),
    ).toBe(true);
    expect(isRedisAway(new Error('Connection is closed.'))).toBe(true);
    expect(isRedisAway(new Error('WRONGPASS invalid username-password pair'))).toBe(true);
    expect(isRedisAway(new Error('ERR unknown command'))).toBe(false);
    expect(isRedisAway(coded('unreachable', 'unreachable: GET /api/policies'))).toBe(false);
    expect(isRedisAway('ECONNREFUSED')).toBe(false);
  });
});

describe('redisAddressShown', () => {
  it('hides a password, keeps the rest', () => {
    expect(redisAddressShown('redis://:s3cret@redis:6379/0')).toBe('redis://:[redacted]@redis:6379/0');
    expect(redisAddressShown('rediss://bot:s3cret@redis:6380')).toBe('rediss://bot:[redacted]@redis:6380');
    expect(redisAddressShown('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });
});

describe('RedisTrouble', () => {
  it('tells the first failure in one line naming the setting, the rest at debug', () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const trouble = new RedisTrouble(pino({ level: 'debug' }, sink), 'redis://:pw@127.0.0.1:1');
    const refused = coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1');
    expect(trouble.absorbed(refused)).toBe(true);
    expect(trouble.absorbed(refused)).toBe(true);
    expect(trouble.absorbed(new Error('ERR something else'))).toBe(false);
    expect(trouble.away).toBe(true);
    expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([
      'Redis does not answer at redis://:[redacted]@127.0.0.1:1 (connect ECONNREFUSED 127.0.0.1:1): check REDIS_URL. The bot retries quietly and says when Redis answers again.',
    ]);
    expect(JSON.stringify(lines)).not.toContain(':pw@');
    const sentinel = new RedisTrouble(pino({ level: 'silent' }), 'redis+sentinel://a:26379/mymaster');
    expect(sentinel.setting).toBe('REDIS_SENTINELS and REDIS_SENTINEL_NAME');
  });
});
