/**
 * The claim a user's revert of an audit record takes in Redis (`<prefix>:revert-of:<audit id>`,
 * src/workflow/store.ts): it holds off a second revert of the record while the first is open, and
 * expires REVERT_CLAIM_AFTER_DEADLINE_MS after that revert's deadline, so it is there for as long
 * as anything reads it and no longer: a record reverted once no longer leaves its claim for good.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openRedis } from '../../src/redis/redis.ts';
import { newRequestId, REVERT_CLAIM_AFTER_DEADLINE_MS, RequestStore } from '../../src/workflow/store.ts';
import { changeRequest } from '../support/changeRequest.ts';
import { REDIS_URL } from '../support/workflow.ts';

const prefix = `rmq:test-claim-${randomBytes(4).toString('hex')}`;
const redis = openRedis(REDIS_URL, { maxRetriesPerRequest: 1 });
const store = new RequestStore(redis, prefix);

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

/** A pending revert of `record`, filed now, its deadline `ttlMs` away. */
const revert = (record: string, ttlMs: number) => {
  const now = Date.now();
  return changeRequest({
    id: newRequestId(),
    action: 'revert',
    revertOf: record,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + ttlMs).toISOString(),
    updatedAt: new Date(now).toISOString(),
  });
};

describe('a revert claim', () => {
  it.each([
    ['an hour', 3_600_000],
    ['the longest RMQ_REQUEST_TTL, 30 days', 30 * 86_400_000],
  ])(
    'outlives its revert by REVERT_CLAIM_AFTER_DEADLINE_MS past a deadline %s away, and holds off a second meanwhile',
    async (_what, ttlMs) => {
      const record = `a-${randomBytes(4).toString('hex')}`;
      const first = { ...revert(record, ttlMs), revertOf: record };
      expect(await store.createRevert(first)).toEqual({});
      const claim = `${prefix}:revert-of:${record}`;
      expect(await redis.get(claim)).toBe(`${prefix}:request:${first.id}`);
      // PEXPIRETIME: the claim's expiry as set, not a count down read a moment later.
      expect(await redis.call('PEXPIRETIME', claim)).toBe(
        Date.parse(first.expiresAt) + REVERT_CLAIM_AFTER_DEADLINE_MS,
      );
      // While the first is open, a second revert of the record is refused, naming it.
      expect(await store.createRevert({ ...revert(record, ttlMs), revertOf: record })).toEqual({
        openAlready: first.id,
      });
    },
  );
});
