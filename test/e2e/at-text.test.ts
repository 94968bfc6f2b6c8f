/**
 * `which --at` and `policies --at` as a person reads them, through the package's `bin/rmq.js`
 * (issue 39, item 2), on the machine's broker: a trail written at chosen times through the bot's
 * own AuditTrail into a Redis of this suite's own (the compiled CLI reads the production prefix
 * `rmq:`; the server, and so the trail, is removed after). The answer's lines stay lines (never one
 * line of `\n` escapes); each change around the instant says what it did; inside a gap, what
 * governed at its start and at its end; an object that exists no more, as `which` says it of an
 * object the broker does not report, or as `--kind` says; the broker unreachable, the kind said
 * not known, never the object said missing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, uniqueName } from '../support/broker.ts';
import { BROKERS, clientFor } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const broker = BROKERS[0];
if (!broker) throw new Error('no broker');
const cwd = mkdtempSync(join(tmpdir(), 'rmq-at-text-'));
const vhost = uniqueName('at-text');
let pkg: Built;
let server: RedisServer;
let redis: Redis;
let client: LabClient;

const NOW = Date.now();
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
/** Oldest first: the first snapshot, alice's edit, the gap (audit-retention deleted in it), the snapshot after it. */
const T = {
  first: NOW - 5 * HOUR,
  edited: NOW - 4 * HOUR,
  gapFrom: NOW - 3.5 * HOUR,
  gapTo: NOW - 3 * HOUR,
};
const retention = {
  pattern: '^orders\\.audit$',
  applyTo: 'queues',
  priority: 10,
  definition: { 'max-length': 5 },
};
const retention7 = { ...retention, definition: { 'max-length': 7 } };
const fallback = {
  pattern: '^orders\\.',
  applyTo: 'queues',
  priority: 1,
  definition: { 'message-ttl': 60000 },
};

beforeAll(async () => {
  [pkg, server] = await Promise.all([built(), startRedisServer()]);
  client = clientFor(broker);
  await client.putVhost(vhost);
  await client.putQueue(vhost, 'orders.audit', { kind: 'classic' });
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  const trail = new AuditTrail(redis, 'rmq');
  const env = 'default';
  await trail.append({
    id: 's-first',
    at: iso(T.first),
    env,
    action: 'snapshot',
    why: 'first',
    vhosts: null,
    version: '3.10.8',
    policies: [
      { vhost, name: 'audit-retention', ...retention },
      { vhost, name: 'audit-fallback', ...fallback },
    ],
    operatorPolicies: [],
  });
  await trail.append({
    id: 'o-edit',
    at: iso(T.edited),
    appliedAt: iso(T.edited),
    env,
    vhost,
    policy: 'audit-retention',
    operator: false,
    action: 'outside',
    actor: 'alice',
    detectedBy: 'events',
    before: retention,
    after: retention7,
    objects: [],
    unpredictable: 0,
  });
  await trail.append({
    id: 'g-1',
    at: iso(T.gapTo),
    env,
    action: 'gap',
    from: iso(T.gapFrom),
    to: iso(T.gapTo),
  });
  await trail.append({
    id: 's-gap',
    at: iso(T.gapTo),
    env,
    action: 'snapshot',
    why: 'gap',
    vhosts: null,
    version: '3.10.8',
    policies: [{ vhost, name: 'audit-fallback', ...fallback }],
    operatorPolicies: [],
  });
  await trail.append({
    id: 'o-deleted',
    at: iso(T.gapTo + 1000),
    env,
    vhost,
    policy: 'audit-retention',
    operator: false,
    action: 'outside',
    detectedBy: 'start',
    between: { from: iso(T.gapFrom), to: iso(T.gapTo) },
    before: retention7,
    after: null,
    objects: [],
    unpredictable: 0,
  });
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await Promise.allSettled([server?.stop(), client?.deleteVhost(vhost)]);
  await client?.close();
  rmSync(cwd, { recursive: true, force: true });
});

const { user, password } = brokerCredentials();
const rmq = (args: string[], url = broker.url) =>
  runBuiltRmq(
    pkg.bin,
    [...args, '--vhost', vhost],
    { RMQ_URL: url, RMQ_USER: user, RMQ_PASSWORD: password, REDIS_URL: server.url, RMQ_TIMEOUT: '5s' },
    cwd,
  );
const lines = (text: string) => text.split('\n');

describe('which --at and policies --at as text, through bin/rmq.js', () => {
  it('the answer then, line by line, and the change around it with what it changed', async () => {
    const r = await rmq(['which', 'orders.audit', '--at', iso(T.edited - 30 * 60_000)]);
    expect(r.code, r.err).toBe(0);
    expect(r.out, 'no line break written as an escape').not.toContain('\\n');
    expect(lines(r.out)).toEqual(
      expect.arrayContaining([
        '(as a classic queue, its kind now)',
        '  In force: audit-retention — pattern "^orders\\.audit$", apply-to queues, priority 10',
        '  Effective: max-length=5 (policy)',
        `  ${iso(T.edited)}  edited policy "audit-retention", outside the bot by "alice"`,
        '    max-length 5 -> 7',
      ]),
    );
  });

  it('policies then, one line each', async () => {
    const r = await rmq(['policies', '--at', iso(T.edited + 60_000)]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).not.toContain('\\n');
    expect(lines(r.out)).toEqual(
      expect.arrayContaining([
        '    10  audit-retention — pattern "^orders\\.audit$", apply-to queues',
        '        sets max-length=7',
        '     1  audit-fallback — pattern "^orders\\.", apply-to queues',
      ]),
    );
  });

  it('inside the gap: unknown between A and B, with what governed at A and at B', async () => {
    const at = iso(T.gapFrom + 10 * 60_000);
    const r = await rmq(['which', 'orders.audit', '--at', at]);
    expect(r.code, r.err).toBe(0);
    expect(lines(r.out)).toEqual(
      expect.arrayContaining([
        `  At the gap's start, ${iso(T.gapFrom)}: audit-retention; max-length=7`,
        `  At its end, ${iso(T.gapTo)}: audit-fallback; message-ttl=60000`,
        `    had set pattern "^orders\\.audit$", apply-to queues, priority 10, max-length=7`,
      ]),
    );
    const json = JSON.parse((await rmq(['which', 'orders.audit', '--at', at, '--json'])).out);
    expect(json).toMatchObject({
      known: false,
      unknownBecause: 'gap',
      gap: { from: iso(T.gapFrom), to: iso(T.gapTo) },
      inForce: null,
      edges: {
        from: { known: true, inForce: 'audit-retention', effective: { 'max-length': 7 } },
        to: { known: true, inForce: 'audit-fallback', effective: { 'message-ttl': 60000 } },
      },
    });
  });

  it("history says a change found at the gap's end was made at some moment of the gap, not when it was noticed", async () => {
    const r = await rmq(['history', 'audit-retention']);
    expect(r.code, r.err).toBe(0);
    expect(lines(r.out)).toContain(
      `  made at a moment not known between ${iso(T.gapFrom)} and ${iso(T.gapTo)} (found by comparing the policies, not when it was noticed)`,
    );
  });

  it('an object that exists no more: the matches by priority, or the winner as --kind says', async () => {
    const at = iso(T.edited - 30 * 60_000);
    const gone = await rmq(['which', 'orders.gone', '--at', at]);
    expect(lines(gone.out)).toEqual(
      expect.arrayContaining([
        'No queue or exchange by that name exists; answering as for a classic queue.',
        '  Matches, by priority:',
      ]),
    );
    expect(gone.out).not.toContain('In force:');
    const asQuorum = await rmq(['which', 'orders.gone', '--kind', 'quorum', '--at', at]);
    expect(lines(asQuorum.out)).toEqual(
      expect.arrayContaining([
        '(as a quorum queue, as --kind says)',
        '  In force: audit-fallback — pattern "^orders\\.", apply-to queues, priority 1',
      ]),
    );
  });

  it('the broker unreachable: answered from the trail, its kind said not known, the object never said missing', async () => {
    const args = ['which', 'orders.audit', '--at', iso(T.edited - 30 * 60_000)];
    const r = await rmq(args, 'http://127.0.0.1:9');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('The broker could not be asked what it is now, so its kind is not known');
    expect(r.out).not.toContain('exists');
    expect(r.out).not.toContain('In force:');
    expect(r.out).toContain('1. audit-retention');
    const json = JSON.parse((await rmq([...args, '--json'], 'http://127.0.0.1:9')).out);
    expect(json).toMatchObject({ known: true, kindFrom: 'not-asked', object: { kindAssumed: true } });
  });
});
