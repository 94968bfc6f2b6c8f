/**
 * The audit trail on the real Redis: chained appends across replicas, idempotent by id, history
 * queries, and `history --verify` (the terminal command) finding a removed or edited record.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { AuditEntry } from '../../src/audit/types.ts';
import { runCli } from '../../src/cli.ts';
import { REDIS_URL } from '../support/workflow.ts';

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const prefixes: string[] = [];

function freshTrail() {
  const prefix = `rmq:test-audit-${randomBytes(5).toString('hex')}`;
  prefixes.push(prefix);
  return { prefix, trail: new AuditTrail(redis, prefix) };
}

afterEach(async () => {
  for (const p of prefixes.splice(0)) {
    const keys = await redis.keys(`${p}:*`);
    if (keys.length) await redis.del(...keys);
  }
});

const entry = (n: number, over: Partial<AuditEntry> = {}): AuditEntry => ({
  id: `a-r-${String(n).padStart(20, '0')}`,
  at: new Date(Date.UTC(2026, 10, 30, 12, n)).toISOString(),
  env: 'prod',
  vhost: '/',
  policy: n % 2 ? 'ttl' : 'dlx',
  operator: false,
  action: 'edit',
  requester: { user: 'U1', reason: `reason ${n}` },
  approver: { user: 'U2', reason: 'ok' },
  before: { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'message-ttl': n } },
  after: { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'message-ttl': n + 1 } },
  objects: [
    {
      name: `q${n}`,
      kind: 'classic',
      before: 'ttl',
      after: 'ttl',
      lost: {},
      gained: {},
      changed: { 'message-ttl': { before: n, after: n + 1 } },
    },
  ],
  unpredictable: 0,
  ...over,
});

async function cli(prefix: string, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(
    argv,
    { REDIS_URL },
    { out: (s) => (out += s), err: (s) => (err += s) },
    { keyPrefix: prefix },
  );
  return { code, out, err };
}

describe('audit trail', () => {
  it('chains records appended at once by several replicas; one record per id', async () => {
    const { prefix, trail } = freshTrail();
    const other = new AuditTrail(redis, prefix);
    const appended = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) => (n % 2 ? trail : other).append(entry(n))),
    );
    // the same id again (a retried job) adds nothing and returns what is stored
    const again = await other.append(entry(3, { approver: { user: 'U9', reason: 'other' } }));
    expect(again).toEqual(appended[2]);
    const all = await trail.list();
    expect(all).toHaveLength(6);
    // newest first, each record's prev the hash of the one before it
    const oldestFirst = [...all].reverse();
    for (const [i, r] of oldestFirst.entries()) expect(r.prev).toBe(i === 0 ? '' : oldestFirst[i - 1]?.hash);
    expect(await trail.verify()).toEqual({ ok: true, records: 6 });
  });

  it('history by policy, by object name, by vhost and env; --json newest first', async () => {
    const { prefix, trail } = freshTrail();
    for (const n of [1, 2, 3]) await trail.append(entry(n));
    await trail.append(entry(4, { env: 'staging', vhost: 'v2' }));
    expect((await trail.list({ name: 'ttl' })).map((r) => r.id)).toEqual([entry(3).id, entry(1).id]);
    expect((await trail.list({ name: 'q2' })).map((r) => r.id)).toEqual([entry(2).id]);
    expect((await trail.list({ env: 'staging' })).map((r) => r.id)).toEqual([entry(4).id]);
    expect((await trail.list({ vhost: '/' })).map((r) => r.id)).toEqual([3, 2, 1].map((n) => entry(n).id));
    const json = await cli(prefix, 'history', 'ttl', '--json');
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.out);
    expect(doc.entries.map((e: { id: string }) => e.id)).toEqual([entry(3).id, entry(1).id]);
    expect(doc.entries[0]).toMatchObject({
      env: 'prod',
      vhost: '/',
      policy: 'ttl',
      operator: false,
      action: 'edit',
      requester: { user: 'U1' },
      approver: { user: 'U2' },
      prev: expect.any(String),
      hash: expect.any(String),
    });
    const text = await cli(prefix, 'history', 'q2');
    expect(text.out).toContain('edit policy "dlx" in prod/"/"');
    expect(text.out).toContain('message-ttl 2 -> 3');
  });

  it('--verify: a removed record is found, naming the first broken one (exit 1)', async () => {
    const { prefix, trail } = freshTrail();
    for (const n of [1, 2, 3, 4]) await trail.append(entry(n));
    expect((await cli(prefix, 'history', '--verify')).code).toBe(0);
    const rows = await redis.xrange(`${prefix}:audit`, '-', '+');
    await redis.xdel(`${prefix}:audit`, rows[1]?.[0] as string);
    expect(await trail.verify()).toEqual({ ok: false, records: 2, broken: entry(3).id, why: 'chain-broken' });
    const r = await cli(prefix, 'history', '--verify');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`BROKEN at ${entry(3).id}`);
    const json = JSON.parse((await cli(prefix, 'history', '--verify', '--json')).out);
    expect(json.verify).toMatchObject({ ok: false, broken: entry(3).id });
  });

  it('--verify: an edited record is found by its hash', async () => {
    const { prefix, trail } = freshTrail();
    for (const n of [1, 2, 3]) await trail.append(entry(n));
    // Rewrite the stream as it was, record 2 with another approver's reason (same stream ids).
    const key = `${prefix}:audit`;
    const rows = await redis.xrange(key, '-', '+');
    await redis.del(key);
    for (const [sid, fields] of rows) {
      const text = fields[1] as string;
      const record = JSON.parse(text);
      if (record.id === entry(2).id) record.approver.reason = 'approved (really)';
      await redis.xadd(key, sid, 'record', JSON.stringify(record));
    }
    expect(await trail.verify()).toEqual({
      ok: false,
      records: 2,
      broken: entry(2).id,
      why: 'hash-mismatch',
    });
    expect((await cli(prefix, 'history', '--verify')).code).toBe(1);
  });

  it('--verify: the last record removed is found by the head', async () => {
    const { prefix, trail } = freshTrail();
    for (const n of [1, 2]) await trail.append(entry(n));
    const rows = await redis.xrange(`${prefix}:audit`, '-', '+');
    await redis.xdel(`${prefix}:audit`, rows[1]?.[0] as string);
    const v = await trail.verify();
    expect(v).toMatchObject({ ok: false, why: 'head-mismatch' });
    expect((await cli(prefix, 'history', '--verify')).err).toContain(entry(1).id);
  });

  it('requests --json lists open requests; Redis unreachable is exit 3', async () => {
    const { prefix } = freshTrail();
    const r = await cli(prefix, 'requests', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ requests: [] });
    const down = await runCli(
      ['requests'],
      { REDIS_URL: 'redis://127.0.0.1:1' },
      { out: () => {}, err: () => {} },
    );
    expect(down).toBe(3);
  });
});
