/**
 * The audit trail's copies beyond one Redis: every record appended is logged as one JSON line
 * `{"audit": {…}}` with the fields `history --json` shows, once per record; and on a primary with
 * a replica (two redis-server processes of this test's own) an append returns only once the
 * replica has the record (WAIT), failing (not acknowledged) while the replica cannot take it.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { AuditEntry } from '../../src/audit/types.ts';
import { createLogger } from '../../src/log/log.ts';
import { NotReplicatedError } from '../../src/redis/replication.ts';
import { type RedisServer, type ReplicatedRedis, startReplicatedRedis } from '../support/redisServer.ts';

const entry = (n: number): AuditEntry => ({
  id: `a-r-${randomBytes(4).toString('hex')}-${n}`,
  at: new Date(Date.UTC(2026, 11, 1, 9, n)).toISOString(),
  env: 'prod',
  vhost: '/',
  policy: 'ttl',
  operator: false,
  action: 'edit',
  requester: { user: 'U1', reason: `reason ${n}` },
  approver: { user: 'U2', reason: 'ok' },
  before: { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'message-ttl': n } },
  after: { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'message-ttl': n + 1 } },
  objects: [],
  unpredictable: 0,
});

let servers: ReplicatedRedis;
let redis: Redis;
let onReplica: Redis;
let replica: RedisServer;

beforeAll(async () => {
  servers = await startReplicatedRedis();
  ({ redis, onReplica, replica } = servers);
});

afterAll(async () => {
  await servers?.stop();
});

describe('the audit trail beyond one Redis', () => {
  it('logs each record appended as one JSON line {"audit": …}, the record as history shows it, once', async () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (l: string) => void lines.push(l) });
    const trail = new AuditTrail(redis, 'rmq:t-log', { log });
    const first = entry(1);
    await trail.append(first);
    await trail.append(entry(2));
    await trail.append(first); // a retried job: stored once, logged once
    const logged = lines.map((l) => JSON.parse(l) as { audit?: unknown }).filter((l) => l.audit);
    expect(logged).toHaveLength(2);
    // Newest first in history; the log in the order appended.
    expect(logged.map((l) => l.audit)).toEqual([...(await trail.list())].reverse());
  });

  it('returns once the replica has the record; fails, not acknowledged, while the replica cannot take it', async () => {
    const trail = new AuditTrail(redis, 'rmq:t-wait', { replicationWaitMs: 500 });
    const record = await trail.append(entry(3));
    // Acknowledged: already on the replica, no polling needed.
    const rows = await onReplica.xrange('rmq:t-wait:audit', '-', '+');
    expect(rows.map(([, f]) => JSON.parse(f[1] as string).id)).toEqual([record.id]);

    // The replica stopped (SIGSTOP): connected still, but it acknowledges nothing.
    process.kill(replica.pid, 'SIGSTOP');
    const held = entry(4);
    try {
      await expect(trail.append(held)).rejects.toBeInstanceOf(NotReplicatedError);
    } finally {
      process.kill(replica.pid, 'SIGCONT');
    }
    // Appended again (the job's retry): the same record, now confirmed; one record for its id.
    const again = await trail.append(held);
    expect(again.id).toBe(held.id);
    expect((await trail.list()).map((r) => r.id)).toEqual([held.id, record.id]);
    expect((await onReplica.xrange('rmq:t-wait:audit', '-', '+')).length).toBe(2);
  });
});
