/**
 * Redis behind Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME) for the request store, BullMQ and
 * the audit trail alike. The test starts its own primary, replica and three Sentinels (the
 * machine's redis-server, on ports and in directories of their own), files a change request,
 * kills the primary by its pid once the replica has the request, waits for the Sentinels to
 * promote the replica, then approves: the change is applied once (one PUT reaches the broker),
 * audited once, and `history --verify` through the compiled CLI, pointed at the Sentinels, holds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { loadConfig } from '../../src/config/config.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeBroker, startFakeBroker } from '../support/fakeBroker.ts';
import { type RedisServer, startRedisServer, startSentinel } from '../support/redisServer.ts';
import { APPROVER, REQUESTER, type WorkflowFixture, workflowFixture } from '../support/workflow.ts';

const NAME = 'rmqtest';
const vhost = uniqueName('sentinel');
const admin = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-sentinel-'));
let primary: RedisServer;
let replica: RedisServer;
let sentinels: RedisServer[] = [];
let proxy: FakeBroker;
let viaProxy: ManagementClient;
let fx: WorkflowFixture;
let env: Record<string, string>;

/** What Sentinel `s` names as the primary's port. */
async function primaryPortSaidBy(s: RedisServer): Promise<number | undefined> {
  const c = new Redis(s.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
  c.on('error', () => undefined);
  try {
    await c.connect();
    const addr = (await c.call('SENTINEL', 'get-master-addr-by-name', NAME)) as [string, string] | null;
    return addr ? Number(addr[1]) : undefined;
  } finally {
    c.disconnect();
  }
}

beforeAll(async () => {
  primary = await startRedisServer();
  replica = await startRedisServer(['--replicaof', '127.0.0.1', String(primary.port)]);
  sentinels = await Promise.all([0, 1, 2].map(() => startSentinel(primary.port, NAME)));
  // Each Sentinel knows the replica (from the primary) and the other Sentinels (over hello).
  await waitFor(
    async () => {
      for (const s of sentinels) {
        const c = new Redis(s.url, { maxRetriesPerRequest: 0 });
        try {
          const replicas = (await c.call('SENTINEL', 'replicas', NAME)) as unknown[];
          const peers = (await c.call('SENTINEL', 'sentinels', NAME)) as unknown[];
          if (replicas.length !== 1 || peers.length !== 2) return false;
        } finally {
          c.disconnect();
        }
      }
      return true;
    },
    { deadlineMs: 30_000, intervalMs: 200, what: 'the Sentinels to know the replica and each other' },
  );
  env = {
    REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
    REDIS_SENTINEL_NAME: NAME,
  };
  await admin.putVhost(vhost);
  await admin.putQueue(vhost, 'orders.audit', { kind: 'classic' });
  proxy = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
  viaProxy = new ManagementClient({ url: proxy.url, ...brokerCredentials() });
  // The bot's own settings: the Sentinels' address as the config makes it, the production prefix.
  fx = workflowFixture(viaProxy, { redisUrl: loadConfig(env).redisUrl, keyPrefix: 'rmq' });
});

afterAll(async () => {
  await fx?.close();
  await viaProxy?.close();
  await proxy?.close();
  await admin.deleteVhost(vhost);
  await admin.close();
  await Promise.allSettled([...sentinels, replica, primary].map((s) => s?.stop()));
  rmSync(cwd, { recursive: true, force: true });
});

describe('Redis behind Sentinel', () => {
  it('a request filed before the primary dies is approved after the failover: applied once, audited once, the chain holds', async () => {
    await fx.worker(viaProxy);
    const wf = fx.workflow();
    const { request } = await wf.file({
      vhost,
      layer: 'user',
      action: 'create',
      policy: 'cap',
      fields: { pattern: '^orders\\.', definition: { 'max-length': 7 } },
      requester: { user: REQUESTER, reason: 'INC-19 failover' },
      origin: { channel: 'C0INCIDENT' },
    });
    // Stored through Sentinel on the primary, and already on the replica.
    const direct = new Redis(primary.url, { maxRetriesPerRequest: 0 });
    const onReplica = new Redis(replica.url, { maxRetriesPerRequest: 0 });
    try {
      expect(await direct.exists(`rmq:request:${request.id}`)).toBe(1);
      await waitFor(async () => (await onReplica.exists(`rmq:request:${request.id}`)) === 1, {
        what: 'the replica to have the request',
      });
    } finally {
      direct.disconnect();
    }

    primary.child.kill('SIGKILL');
    await waitFor(
      async () => (await Promise.all(sentinels.map(primaryPortSaidBy))).every((p) => p === replica.port),
      { deadlineMs: 60_000, intervalMs: 250, what: 'the Sentinels to promote the replica' },
    );
    await waitFor(async () => /role:master/.test(await onReplica.info('replication')), {
      what: 'the replica to be the primary',
    });
    onReplica.disconnect();

    // Approved after the failover, through the same clients, which asked the Sentinels again.
    await waitFor(
      async () => {
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok after failover' });
        return true;
      },
      { deadlineMs: 30_000, intervalMs: 500, what: 'the decision to reach the promoted primary' },
    );
    const applied = await waitFor(
      async () => {
        const r = await wf.get(request.id);
        return r?.state === 'applied' && r;
      },
      { deadlineMs: 60_000, what: 'the request to be applied' },
    );
    expect(await admin.getPolicy('user', vhost, 'cap')).toMatchObject({ definition: { 'max-length': 7 } });
    const puts = proxy.requests.filter((r) => r.method === 'PUT' && r.url.includes('/api/policies/'));
    expect(puts).toHaveLength(1);
    const records = await new AuditTrail(fx.redis, 'rmq').list({ vhost });
    expect(records.map((r) => r.id)).toEqual([applied.auditId]);

    // The terminal, pointed at the Sentinels like the bot: the chain holds, nothing is open.
    const pkg = await built();
    const verify = await runBuiltRmq(pkg.bin, ['history', '--verify', '--json'], env, cwd);
    expect(verify.code, verify.err).toBe(0);
    expect(JSON.parse(verify.out)).toMatchObject({ verify: { ok: true, records: 1 } });
    const open = await runBuiltRmq(pkg.bin, ['requests', '--json'], env, cwd);
    expect(open.code, open.err).toBe(0);
    expect(JSON.parse(open.out)).toEqual({ env: null, requests: [], frozen: [] });
  });
});
