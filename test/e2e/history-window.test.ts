/**
 * `history --since T1 --until T2` through the package's `bin/rmq.js` (issue 39, item 3): records
 * at chosen times, written through the bot's own AuditTrail into a Redis of this suite's own (the
 * compiled CLI reads the production prefix `rmq:`; the server, and so the trail, is removed after),
 * read back in text and `--json`: since inclusive, until exclusive, with the filters, `--verify`
 * over the whole chain, and the refusals (exit 2, naming the three forms of TIME). And the window
 * read from the trail without reading it whole.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { ChangeEntry } from '../../src/audit/types.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const cwd = mkdtempSync(join(tmpdir(), 'rmq-history-window-'));
let pkg: Built;
let server: RedisServer;
let redis: Redis;

const NOW = Date.now();
const MIN = 60_000;
const HOUR = 60 * MIN;
/** The chosen times, oldest first, as the bot appends them. */
const T = {
  old: NOW - 50 * HOUR,
  since: NOW - 26 * HOUR,
  inside: NOW - 3 * HOUR,
  staging: NOW - 150 * MIN,
  until: NOW - 2 * HOUR,
  after: NOW - 30 * MIN,
};
const iso = (ms: number) => new Date(ms).toISOString();

const entry = (id: string, at: number, over: Partial<ChangeEntry> = {}): ChangeEntry => ({
  id,
  at: iso(at),
  env: 'prod',
  vhost: 'orders',
  policy: 'ttl',
  operator: false,
  action: 'edit',
  requester: { user: 'U0ONCALL', reason: `change ${id}` },
  approver: { user: 'U0APPROVER', reason: 'ok' },
  before: { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'message-ttl': 1 } },
  after: { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'message-ttl': 2 } },
  objects: [],
  unpredictable: 0,
  ...over,
});

beforeAll(async () => {
  [pkg, server] = await Promise.all([built(), startRedisServer()]);
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  const trail = new AuditTrail(redis, 'rmq');
  await trail.append(entry('a-old', T.old));
  // Exactly at --since: inside (inclusive).
  await trail.append(entry('a-at-since', T.since));
  await trail.append(entry('a-inside', T.inside, { policy: 'dlx' }));
  await trail.append(entry('a-staging', T.staging, { env: 'staging', vhost: 'billing' }));
  // Exactly at --until: outside (exclusive).
  await trail.append(entry('a-at-until', T.until));
  await trail.append(entry('a-after', T.after));
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

const rmq = (args: string[]) =>
  runBuiltRmq(
    pkg.bin,
    ['history', ...args],
    { RMQ_URL: 'http://127.0.0.1:9', RMQ_USER: 'u', RMQ_PASSWORD: 'p', REDIS_URL: server.url },
    cwd,
  );

interface Doc {
  env: string | null;
  window: { since: string | null; until: string | null; words: string };
  entries: { id: string; at: string }[];
  verify?: { ok: boolean; records: number };
}
const ids = (d: Doc) => d.entries.map((e) => e.id);

describe('history --since/--until through bin/rmq.js (issue 39, item 3)', () => {
  it('--json: since inclusive, until exclusive, every environment, newest first', async () => {
    const run = await rmq(['--since', iso(T.since), '--until', iso(T.until), '--json']);
    expect(run.code, run.err).toBe(0);
    const doc = JSON.parse(run.out) as Doc;
    expect(doc.window).toMatchObject({ since: iso(T.since), until: iso(T.until) });
    expect(ids(doc)).toEqual(['a-staging', 'a-inside', 'a-at-since']);
    expect(doc.env).toBeNull();
  });

  it('an offset other than Z reads the same instant', async () => {
    const plusOne = `${iso(T.since + HOUR).slice(0, 19)}+01:00`;
    const run = await rmq(['--since', plusOne, '--until', iso(T.until), '--json']);
    expect(run.code, run.err).toBe(0);
    expect(ids(JSON.parse(run.out) as Doc)).toEqual(['a-staging', 'a-inside', 'a-at-since']);
  });

  it('with --env, a name and --vhost: the window of what they match', async () => {
    const env = JSON.parse(
      (await rmq(['--since', iso(T.since), '--until', iso(T.until), '--env', 'prod', '--json'])).out,
    ) as Doc;
    expect(ids(env)).toEqual(['a-inside', 'a-at-since']);
    const named = JSON.parse((await rmq(['dlx', '--since', iso(T.since), '--json'])).out) as Doc;
    expect(ids(named)).toEqual(['a-inside']);
    const vhost = JSON.parse(
      (await rmq(['--since', iso(T.since), '--vhost', 'billing', '--json'])).out,
    ) as Doc;
    expect(ids(vhost)).toEqual(['a-staging']);
  });

  it('relative times, and no --until: up to now', async () => {
    const run = await rmq(['--since', '-1d', '--json']);
    expect(run.code, run.err).toBe(0);
    const doc = JSON.parse(run.out) as Doc;
    expect(doc.window.until).toBeNull();
    expect(ids(doc)).toEqual(['a-after', 'a-at-until', 'a-staging', 'a-inside']);
  });

  it('text: the window said first, HH:MM as today, UTC', async () => {
    const run = await rmq(['--since', '-2d', '--until', '00:00']);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('(inclusive) until 00:00 today, UTC (');
    expect(run.out).toContain('(exclusive)');
    const bySince = await rmq(['--since', iso(T.since), '--until', iso(T.until)]);
    expect(bySince.out.split('\n')[0]).toBe(
      `The records from ${iso(T.since)} (inclusive) until ${iso(T.until)} (exclusive).`,
    );
    expect(bySince.out).toContain('(a-inside)');
    expect(bySince.out).toContain('(a-at-since)');
    expect(bySince.out).not.toContain('(a-at-until)');
    expect(bySince.out).not.toContain('(a-old)');
    const none = await rmq(['--since', iso(T.old - HOUR), '--until', iso(T.old)]);
    expect(none.code).toBe(0);
    expect(none.out).toContain('No recorded changes in that window match.');
  });

  it('--verify in a window verifies the whole chain, and says so', async () => {
    const run = await rmq(['--since', iso(T.since), '--until', iso(T.until), '--verify', '--json']);
    expect(run.code, run.err).toBe(0);
    const doc = JSON.parse(run.out) as Doc;
    expect(ids(doc)).toHaveLength(3);
    expect(doc.verify).toMatchObject({ ok: true, records: 6 });
    expect(doc.window.words).toContain('--verify checks the whole chain, not only the window.');
  });

  it.each([
    [['--since', '2026-12-04T03:12:00'], 'needs its offset'],
    [['--since', 'yesterday'], 'not a time'],
    [['--since', '-1h', '--until', '-2h'], 'is not before --until'],
    [['--since', iso(NOW + HOUR)], 'in the future'],
    [['--until', '2h'], 'with a minus'],
  ])('%j is refused, exit 2, naming the three forms', async (args, why) => {
    const run = await rmq(args);
    expect(run.code).toBe(2);
    expect(run.err).toContain(why);
    if (why !== 'in the future' && why !== 'is not before --until')
      expect(run.err).toContain('HH:MM (today, UTC), or a time before now (-2h, -30m, -1d)');
    const json = await rmq([...args, '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.out)).toMatchObject({ error: { code: 'bad-input' } });
  });
});

describe('a window is read without reading the trail whole', () => {
  it('a window of 10 records in a trail of 3,000 reads one batch, not the trail', async () => {
    const prefix = 'window-bench';
    const base = Date.UTC(2026, 0, 1);
    const trail = new AuditTrail(redis, prefix);
    for (let i = 0; i < 3000; i++) await trail.append(entry(`a-${i}`, base + i * MIN));
    let rows = 0;
    // The same Redis, counting the stream rows each XRANGE/XREVRANGE returns.
    const counting = new Proxy(redis, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver);
        if (key !== 'xrange' && key !== 'xrevrange') return typeof v === 'function' ? v.bind(target) : v;
        return async (...args: unknown[]) => {
          const got = (await (v as (...a: unknown[]) => Promise<unknown[]>).apply(target, args)) as unknown[];
          rows += got.length;
          return got;
        };
      },
    });
    const windowed = new AuditTrail(counting, prefix);
    const since = base + 1500 * MIN;
    const { entries } = await windowed.scan({ since, until: since + 10 * MIN });
    expect(entries.map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, i) => `a-${1509 - i}`));
    // One batch (500) and the bisection's probes, never the 3,000.
    expect(rows).toBeLessThan(600);
    rows = 0;
    await windowed.scan({});
    expect(rows).toBe(3000);
    await redis.del(`${prefix}:audit`, `${prefix}:audit:head`, `${prefix}:audit:ids`);
  });
});
