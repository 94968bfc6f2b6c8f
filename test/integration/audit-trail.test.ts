/**
 * The audit trail on the real Redis: chained appends across replicas, idempotent by id, history
 * queries, and `history --verify` (the terminal command) finding a removed or edited record.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditTrail, canonicalJson, recordHash } from '../../src/audit/trail.ts';
import type { AuditEntry, ChangeEntry, SnapshotEntry } from '../../src/audit/types.ts';
import { createLogger } from '../../src/log/log.ts';
import { runCli } from '../../src/terminal/cli.ts';
import { freezeEntry } from '../../src/workflow/deciding/thaw.ts';
import { PADDED_FREEZE, PADDED_REVIEW } from '../fixtures/audit-padded-records.ts';
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

const entry = (n: number, over: Partial<ChangeEntry> = {}): ChangeEntry => ({
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
  return cliWith({}, prefix, ...argv);
}

async function cliWith(env: Record<string, string>, prefix: string, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(
    argv,
    { REDIS_URL, ...env },
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
    expect(await trail.verify()).toEqual({ ok: true, records: 6, keyed: false });
  });

  it("a snapshot against its environment's mark: refused once a change of that environment is appended, never for another's, a gap or a snapshot", async () => {
    const { trail } = freshTrail();
    const snapshot = (n: number): SnapshotEntry => ({
      id: `s-prod-${n}`,
      at: new Date(Date.UTC(2026, 10, 30, 13, n)).toISOString(),
      env: 'prod',
      action: 'snapshot',
      why: 'checkpoint',
      vhosts: null,
      policies: [],
      operatorPolicies: [],
    });
    const gap: AuditEntry = {
      id: 'g-prod',
      at: entry(0).at,
      env: 'prod',
      action: 'gap',
      from: entry(0).at,
      to: entry(0).at,
    };
    expect(await trail.markOf('prod')).toBe('0');
    const mark = await trail.markOf('prod');
    await trail.append(entry(1, { env: 'staging' }));
    await trail.append(gap);
    expect(await trail.appendSnapshot(snapshot(1), mark)).toMatchObject({
      action: 'snapshot',
      id: 's-prod-1',
    });
    await trail.append(entry(2));
    expect(await trail.markOf('prod')).toBe('1');
    expect(await trail.appendSnapshot(snapshot(2), mark)).toBe('grown');
    expect(await trail.get('s-prod-2')).toBeUndefined();
    expect(await trail.appendSnapshot(snapshot(2), await trail.markOf('prod'))).toMatchObject({
      id: 's-prod-2',
    });
    // Appended again (a retry): the record stored, whatever the mark.
    expect(await trail.appendSnapshot(snapshot(2), '0')).toMatchObject({ id: 's-prod-2' });
    expect(await trail.verify()).toEqual({ ok: true, records: 5, keyed: false });
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
    expect(await trail.verify()).toEqual({
      ok: false,
      records: 2,
      broken: entry(3).id,
      why: 'chain-broken',
      keyed: false,
    });
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
      keyed: false,
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
    expect(JSON.parse(r.out)).toEqual({ env: null, requests: [], frozen: [] });
    const down = await runCli(
      ['requests'],
      { REDIS_URL: 'redis://127.0.0.1:1' },
      { out: () => {}, err: () => {} },
    );
    expect(down).toBe(3);
  });
});

// --- issue 20: the trail's tail rewritten by someone who can write Redis -------------------------

const KEY = `test-audit-key-${randomBytes(16).toString('hex')}`;
const WITH_KEY = { RMQ_AUDIT_KEY: KEY };

/**
 * What an attacker with Redis write access does to the last record: changes it, re-seals it with
 * the sha256 anyone can compute (keeping or dropping `keyed`), and resets the head to match.
 */
async function rewriteLast(prefix: string, change: (r: Record<string, unknown>) => void): Promise<void> {
  const key = `${prefix}:audit`;
  const rows = await redis.xrange(key, '-', '+');
  const [sid, fields] = rows[rows.length - 1] as [string, string[]];
  const record = JSON.parse(fields[1] as string) as Record<string, unknown>;
  change(record);
  const { hash: _old, ...body } = record;
  const hash = recordHash(body as never);
  await redis.xdel(key, sid);
  await redis.xadd(key, '*', 'record', canonicalJson({ ...body, hash }));
  await redis.set(`${prefix}:audit:head`, hash);
}

/** `history --verify --against FILE --json` with the key. */
const verifyAgainst = (prefix: string, file: string) =>
  cliWith(WITH_KEY, prefix, 'history', '--verify', '--against', file, '--json');

/** A log file as the bot writes it: pino JSON lines, the audit records among other lines. */
function botLog(): { file: string; log: ReturnType<typeof createLogger>; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'rmq-audit-log-'));
  const file = join(dir, 'bot.log');
  writeFileSync(file, '');
  const lines: string[] = [];
  const log = createLogger('info', { write: (line: string) => lines.push(line) });
  log.info({ port: 3000 }, 'listening for Slack at POST /slack/events');
  return {
    file,
    log,
    done: () => {
      writeFileSync(file, `${lines.join('')}2026-11-30T12:00:00Z stdout F {"not":"ours"}\nplain text\n`);
    },
  };
}

describe('the trail rewritten by someone who can write Redis (issue 20)', () => {
  it('without RMQ_AUDIT_KEY an altered and re-hashed last record verifies, and --verify says it checked against accidents only', async () => {
    const { prefix, trail } = freshTrail();
    for (const n of [1, 2, 3]) await trail.append(entry(n));
    await rewriteLast(prefix, (r) => {
      (r.approver as { reason: string }).reason = 'approved by the CTO';
    });
    const r = await cli(prefix, 'history', '--verify');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/intact \(3 records\)\. Checked against accidents only: without RMQ_AUDIT_KEY/);
  });

  it('with RMQ_AUDIT_KEY an altered and re-hashed last record is found (exit 1), whether it keeps `keyed` or drops it', async () => {
    for (const dropKeyed of [false, true]) {
      const { prefix } = freshTrail();
      const trail = new AuditTrail(redis, prefix, { key: KEY });
      for (const n of [1, 2, 3]) await trail.append(entry(n));
      const intact = await cliWith(WITH_KEY, prefix, 'history', '--verify', '--json');
      expect(intact.code, intact.err).toBe(0);
      expect(JSON.parse(intact.out).verify).toEqual({ ok: true, records: 3, keyed: true });
      await rewriteLast(prefix, (r) => {
        (r.approver as { reason: string }).reason = 'approved by the CTO';
        if (dropKeyed) delete r.keyed;
      });
      const r = await cliWith(WITH_KEY, prefix, 'history', '--verify', '--json');
      expect(r.code).toBe(1);
      expect(JSON.parse(r.out).verify).toMatchObject({
        ok: false,
        broken: entry(3).id,
        why: dropKeyed ? 'unkeyed' : 'hash-mismatch',
        keyed: true,
      });
      expect(r.err).toContain(`BROKEN at ${entry(3).id}`);
      // Without the key the keyed seals cannot be checked: never "intact" (issue 28), exit 1.
      const keyless = await cli(prefix, 'history', '--verify');
      expect(keyless.code).toBe(1);
      expect(keyless.out).toMatch(/NOT PROVEN: \d records of 3 .* sealed with RMQ_AUDIT_KEY/);
    }
  });

  it('rotating the key as the README says: the old trail moved aside verifies under the old key, the new one under the new key', async () => {
    const { prefix } = freshTrail();
    const archive = `${prefix}-2026-12`;
    prefixes.push(archive);
    const NEW_KEY = `test-audit-key-${randomBytes(16).toString('hex')}`;
    const old = new AuditTrail(redis, prefix, { key: KEY });
    for (const n of [1, 2, 3]) await old.append(entry(n));
    // Not moved aside, the old records fail under the new key: why the README moves them.
    const unmoved = await cliWith({ RMQ_AUDIT_KEY: NEW_KEY }, prefix, 'history', '--verify', '--json');
    expect(unmoved.code).toBe(1);
    expect(JSON.parse(unmoved.out).verify).toMatchObject({
      ok: false,
      broken: entry(1).id,
      why: 'hash-mismatch',
    });
    for (const suffix of ['audit', 'audit:head', 'audit:ids']) {
      await redis.rename(`${prefix}:${suffix}`, `${archive}:${suffix}`);
    }
    const fresh = new AuditTrail(redis, prefix, { key: NEW_KEY });
    for (const n of [4, 5]) await fresh.append(entry(n));
    const now = await cliWith({ RMQ_AUDIT_KEY: NEW_KEY }, prefix, 'history', '--verify', '--json');
    expect(now.code, now.err).toBe(0);
    expect(JSON.parse(now.out).verify).toEqual({ ok: true, records: 2, keyed: true });
    const before = await cliWith(WITH_KEY, archive, 'history', '--verify', '--json');
    expect(before.code, before.err).toBe(0);
    expect(JSON.parse(before.out).verify).toEqual({ ok: true, records: 3, keyed: true });
  });

  it('the key is never in Redis', async () => {
    const { prefix } = freshTrail();
    const trail = new AuditTrail(redis, prefix, { key: KEY });
    await trail.append(entry(1));
    const dump = JSON.stringify(await redis.xrange(`${prefix}:audit`, '-', '+'));
    expect(dump).not.toContain(KEY);
    expect(await redis.get(`${prefix}:audit:head`)).not.toContain(KEY);
  });

  it("--verify --against the bot's log: a deleted last record (head reset), an altered one, an extra one and a wiped trail are each named, exit 1", async () => {
    const { prefix } = freshTrail();
    const logged = botLog();
    const trail = new AuditTrail(redis, prefix, { key: KEY, log: logged.log });
    for (const n of [1, 2, 3, 4]) await trail.append(entry(n));
    logged.done();
    try {
      const clean = await verifyAgainst(prefix, logged.file);
      expect(clean.code, clean.err).toBe(0);
      expect(JSON.parse(clean.out).verify).toMatchObject({
        ok: true,
        records: 4,
        against: { logged: 4, missing: [], altered: [], extra: [], unreadableLines: 0 },
      });

      // The last record deleted and the head set back to the one before: the chain alone holds.
      const rows = await redis.xrange(`${prefix}:audit`, '-', '+');
      const [lastSid] = rows[3] as [string, string[]];
      const third = JSON.parse((rows[2] as [string, string[]])[1][1] as string) as { hash: string };
      await redis.xdel(`${prefix}:audit`, lastSid);
      await redis.set(`${prefix}:audit:head`, third.hash);
      expect((await cliWith(WITH_KEY, prefix, 'history', '--verify')).code).toBe(0);
      const deleted = await verifyAgainst(prefix, logged.file);
      expect(deleted.code).toBe(1);
      expect(JSON.parse(deleted.out).verify).toMatchObject({
        ok: false,
        why: 'log-mismatch',
        broken: entry(4).id,
        against: { missing: [entry(4).id], altered: [], extra: [] },
      });
      const text = await cliWith(WITH_KEY, prefix, 'history', '--verify', '--against', logged.file);
      expect(text.out).toContain(`missing from Redis (1): ${entry(4).id}`);

      // A record appended by someone without the key, never logged: named as extra.
      await new AuditTrail(redis, prefix).append(entry(5));
      const mixed = JSON.parse((await verifyAgainst(prefix, logged.file)).out).verify;
      expect(mixed.against.extra).toEqual([entry(5).id]);

      // The whole trail wiped, stream and head together: every logged record is missing.
      await redis.del(`${prefix}:audit`, `${prefix}:audit:head`, `${prefix}:audit:ids`);
      const wipedAlone = await cliWith(WITH_KEY, prefix, 'history', '--verify', '--json');
      expect(JSON.parse(wipedAlone.out).verify).toMatchObject({ ok: true, records: 0 });
      const wiped = await verifyAgainst(prefix, logged.file);
      expect(wiped.code).toBe(1);
      expect(JSON.parse(wiped.out).verify.against.missing).toEqual([1, 2, 3, 4].map((n) => entry(n).id));
    } finally {
      rmSync(join(logged.file, '..'), { recursive: true, force: true });
    }
  });

  it('--against names an altered record; a file that cannot be read is refused (exit 2)', async () => {
    const { prefix } = freshTrail();
    const logged = botLog();
    const trail = new AuditTrail(redis, prefix, { log: logged.log });
    for (const n of [1, 2]) await trail.append(entry(n));
    logged.done();
    try {
      // Altered in Redis (an approver's reason), re-sealed and re-chained: only the log shows it.
      await rewriteLast(prefix, (r) => {
        (r.approver as { reason: string }).reason = 'approved by the CTO';
      });
      const r = await cli(prefix, 'history', '--verify', '--against', logged.file, '--json');
      expect(r.code).toBe(1);
      expect(JSON.parse(r.out).verify.against).toMatchObject({
        altered: [entry(2).id],
        missing: [],
        extra: [],
      });
      expect(readFileSync(logged.file, 'utf8')).toContain('"audit":');
      const missing = await cli(prefix, 'history', '--verify', '--against', join(logged.file, 'nope'));
      expect(missing.code).toBe(2);
      expect(missing.err).toMatch(/cannot read it/);
    } finally {
      rmSync(join(logged.file, '..'), { recursive: true, force: true });
    }
  });
});

describe('history with a record it cannot read (issue 20)', () => {
  it('says how many, and exits 1 (for --json readers too)', async () => {
    const { prefix, trail } = freshTrail();
    for (const n of [1, 2, 3]) await trail.append(entry(n));
    await redis.xadd(`${prefix}:audit`, '*', 'record', '{"garbage": true');
    const json = await cli(prefix, 'history', '--json');
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.out);
    expect(doc.entries).toHaveLength(3);
    expect(doc.unreadable).toBe(1);
    const text = await cli(prefix, 'history');
    expect(text.code).toBe(1);
    expect(text.out).toContain('1 record of the trail could not be read');
  });
});

describe('freeze and review records stored padded, before the union on action (issue 26)', () => {
  it('read, verify, and chain on to a new freeze record without padding; --json keeps the changes keys', async () => {
    const { prefix, trail } = freshTrail();
    for (const line of [PADDED_FREEZE, PADDED_REVIEW]) {
      const { id } = JSON.parse(line) as { id: string };
      const sid = await redis.xadd(`${prefix}:audit`, '*', 'record', line);
      await redis.hset(`${prefix}:audit:ids`, id, sid as string);
    }
    await redis.set(`${prefix}:audit:head`, (JSON.parse(PADDED_REVIEW) as { hash: string }).hash);
    expect(await trail.verify()).toMatchObject({ ok: true, records: 2 });

    const at = new Date('2026-12-01T09:00:00.000Z');
    const frozen = await trail.append(
      freezeEntry(
        'prod',
        { until: '2026-12-01T10:00:00.000Z', by: 'U0ALICE', reason: 'INC-8', at: at.toISOString() },
        at,
      ),
    );
    await trail.append(entry(1));
    const stored = await redis.xrange(`${prefix}:audit`, '-', '+');
    expect(JSON.parse(stored[2]?.[1][1] as string)).not.toHaveProperty('policy');

    const shown = await cli(prefix, 'history', '--verify', '--json');
    expect(shown.code).toBe(0);
    const doc = JSON.parse(shown.out) as { entries: Record<string, unknown>[]; verify: { ok: boolean } };
    expect(doc.verify.ok).toBe(true);
    expect(doc.entries.map((e) => e.action)).toEqual(['edit', 'freeze', 'review', 'freeze']);
    expect(doc.entries[1]?.id).toBe(frozen.id);
    for (const e of doc.entries.filter((x) => x.action === 'freeze')) expect(e).not.toHaveProperty('policy');
    // A change keeps every key of INTERFACE.md §2.
    for (const k of [
      'id',
      'at',
      'env',
      'vhost',
      'policy',
      'operator',
      'action',
      'requester',
      'approver',
      'before',
      'after',
      'objects',
      'hash',
      'prev',
    ])
      expect(doc.entries[0]).toHaveProperty(k);
    // A query by policy or vhost finds the review of that policy, never a freeze.
    expect((await trail.list({ name: 'cap' })).map((r) => r.action)).toEqual(['review']);
    expect((await trail.list({ vhost: '/' })).map((r) => r.action)).toEqual(['edit', 'review']);

    // The padding is sealed: changed in Redis, the record no longer verifies.
    const other = freshTrail();
    await redis.xadd(
      `${other.prefix}:audit`,
      '*',
      'record',
      PADDED_FREEZE.replace('"policy":""', '"policy":"x"'),
    );
    await redis.set(`${other.prefix}:audit:head`, (JSON.parse(PADDED_FREEZE) as { hash: string }).hash);
    expect(await other.trail.verify()).toMatchObject({ ok: false, why: 'hash-mismatch' });
  });
});
