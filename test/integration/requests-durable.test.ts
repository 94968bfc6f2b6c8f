/**
 * The request store beyond one Redis: on a primary with a replica (two redis-server processes of
 * this test's own), a request filed, an approval counted and a state moved return only once the
 * replica has them (WAIT, src/redis/replication.ts, the rule the audit trail follows too); while the
 * replica cannot take them (SIGSTOP: connected, acknowledging nothing) each is refused, not
 * acknowledged, and a failover right after could not lose what the bot said was done.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotReplicatedError } from '../../src/redis/replication.ts';
import { newRequestId, RequestStore } from '../../src/workflow/store.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { changeRequest } from '../support/changeRequest.ts';
import { type RedisServer, type ReplicatedRedis, startReplicatedRedis } from '../support/redisServer.ts';

const prefix = `rmq:t-req-${randomBytes(4).toString('hex')}`;

/** A pending request, filed now, expiring in an hour. */
const filed = (): ChangeRequest => {
  const now = Date.now();
  return changeRequest({
    id: newRequestId(),
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 3_600_000).toISOString(),
    updatedAt: new Date(now).toISOString(),
  });
};
const approval = (by: string) => ({ by, reason: 'ok', at: new Date().toISOString() });

let servers: ReplicatedRedis;
let onReplica: Redis;
let replica: RedisServer;
let store: RequestStore;

beforeAll(async () => {
  servers = await startReplicatedRedis();
  ({ onReplica, replica } = servers);
  store = new RequestStore(servers.redis, prefix, undefined, { replicationWaitMs: 500 });
});

afterAll(async () => {
  await servers?.stop();
});

/** The request's state as the replica has it, read once (no polling: WAIT promised it). */
const onReplicaNow = (id: string) => onReplica.hget(`${prefix}:request:${id}`, 'state');

describe('the request store on a primary with a replica', () => {
  it('acknowledges a filing, an approval and a move only once the replica has each', async () => {
    const r = filed();
    expect(await store.create(r)).toBe(true);
    expect(await onReplicaNow(r.id)).toBe('pending');
    // Never over a request of the same id: the one stored stays as it was.
    expect(await store.create({ ...r, requester: { user: 'U0EVE' } })).toBe(false);
    expect((await store.get(r.id))?.requester.user).toBe(r.requester.user);
    expect((await store.approve(r, approval('U0BOB'))).kind).toBe('approved');
    expect(await onReplicaNow(r.id)).toBe('approved');
    const moved = await store.transition(r.id, { move: 'start' });
    expect(moved.kind).toBe('ok');
    expect(await onReplicaNow(r.id)).toBe('applying');
  });

  it('refuses each, not acknowledged, while the replica cannot take it; the writes are in the primary', async () => {
    const pending = filed();
    await store.create(pending);
    const moving = filed();
    await store.create(moving);
    await store.approve(moving, approval('U0BOB'));

    process.kill(replica.pid, 'SIGSTOP');
    const refused = filed();
    try {
      await expect(store.create(refused)).rejects.toBeInstanceOf(NotReplicatedError);
      await expect(store.approve(pending, approval('U0BOB'))).rejects.toBeInstanceOf(NotReplicatedError);
      await expect(store.transition(moving.id, { move: 'start' })).rejects.toBeInstanceOf(NotReplicatedError);
    } finally {
      process.kill(replica.pid, 'SIGCONT');
    }
    // Written in the primary all the same: what a retry (or the worker's sweep) finds.
    expect((await store.get(refused.id))?.state).toBe('pending');
    expect((await store.get(pending.id))?.state).toBe('approved');
    expect((await store.get(moving.id))?.state).toBe('applying');
  });
});
