/**
 * What users pipe: every terminal command through the package's `bin/rmq.js` into a slow reader
 * (`| jq` on a busy machine), its output whole at every size (issue 28: `history --json | wc -c`
 * gave 65,536 bytes, the pipe's buffer, where a file got 657,889), and `history --verify` on a
 * keyed chain read without the key (issue 28: an edited keyed record was called intact). Against
 * the real broker (a vhost of this file's own) and a Redis of this file's own (the compiled CLI
 * reads the production key prefix `rmq:`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail, canonicalJson } from '../../src/audit/trail.ts';
import type { AuditEntry } from '../../src/audit/types.ts';
import { commandsOf } from '../../src/commands/registry.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName } from '../support/broker.ts';
import { type Built, built } from '../support/built.ts';
import { type CliRun, runBuiltRmq, runBuiltRmqSlowly } from '../support/cli.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const vhost = uniqueName('cli-pipes');
const client = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-cli-pipes-'));
const KEY = 'k'.repeat(32);
let pkg: Built;
let redis: RedisServer;

/** Enough policies that `policies --json` and `which --json` (every one also matched) pass 64 KiB. */
const POLICIES = 300;
const planFile = join(cwd, 'definitions.json');
writeFileSync(
  planFile,
  JSON.stringify({
    policies: [
      {
        vhost,
        name: 'planned',
        pattern: '^q$',
        'apply-to': 'queues',
        priority: 5000,
        definition: { 'message-ttl': 5 },
      },
    ],
  }),
);
const policyName = (i: number) => `p${String(i).padStart(3, '0')}-${'x'.repeat(200)}`;

const env = (more: Record<string, string> = {}): Record<string, string> => {
  const { user, password } = brokerCredentials();
  return { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password, REDIS_URL: redis.url, ...more };
};
const slowly = (args: readonly string[], more: Record<string, string> = {}): Promise<CliRun> =>
  runBuiltRmqSlowly(pkg.bin, args, env(more), cwd);
const atOnce = (args: readonly string[], more: Record<string, string> = {}): Promise<CliRun> =>
  runBuiltRmq(pkg.bin, args, env(more), cwd);

const entry = (n: number): AuditEntry => ({
  id: `a-r-${String(n).padStart(20, '0')}`,
  at: new Date(Date.UTC(2026, 10, 30, 12, 0, n)).toISOString(),
  env: 'default',
  vhost,
  policy: `ttl-${n % 7}`,
  operator: false,
  action: 'edit',
  requester: {
    user: 'U0REQUESTER',
    reason: `INC-${n}: ${'the queue grew past what the consumers take; '.repeat(4)}`,
  },
  approver: { user: 'U0APPROVER', reason: 'ok' },
  before: { pattern: '^orders\\.', applyTo: 'queues', priority: 0, definition: { 'message-ttl': n } },
  after: { pattern: '^orders\\.', applyTo: 'queues', priority: 0, definition: { 'message-ttl': n + 1 } },
  objects: [
    {
      name: `orders.q${n}`,
      kind: 'classic',
      before: `ttl-${n % 7}`,
      after: `ttl-${n % 7}`,
      lost: {},
      gained: {},
      changed: { 'message-ttl': { before: n, after: n + 1 } },
    },
  ],
  unpredictable: 0,
});

/** The record `id` of the trail under `prefix` rewritten by `change`, its seal left as it was. */
async function editInPlace(
  r: Redis,
  prefix: string,
  id: string,
  change: (record: Record<string, unknown>) => void,
) {
  const rows = await r.xrange(`${prefix}:audit`, '-', '+');
  for (const [sid, fields] of rows) {
    const record = JSON.parse(fields[1] as string) as Record<string, unknown>;
    if (record.id !== id) continue;
    change(record);
    // The stream's ids only grow: the whole stream is written again, each record at its own id.
    await r.del(`${prefix}:audit`);
    for (const [s, f] of rows)
      await r.xadd(`${prefix}:audit`, s, 'record', s === sid ? canonicalJson(record) : (f[1] as string));
    return;
  }
  throw new Error(`no record ${id}`);
}

async function removeRecord(r: Redis, prefix: string, id: string) {
  const sid = await r.hget(`${prefix}:audit:ids`, id);
  if (sid) await r.xdel(`${prefix}:audit`, sid);
}

beforeAll(async () => {
  [pkg, redis] = await Promise.all([built(), startRedisServer()]);
  await client.putVhost(vhost);
  await client.putQueue(vhost, 'q', { kind: 'classic' });
  for (let i = 0; i < POLICIES; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, POLICIES - i) }, (_, j) =>
        client.putPolicy('user', {
          vhost,
          name: policyName(i + j),
          pattern: '^q$',
          applyTo: 'queues',
          priority: i + j,
          definition: { 'message-ttl': 1000 + i + j },
        }),
      ),
    );
  }
  const r = new Redis(redis.url);
  try {
    const trail = new AuditTrail(r, 'rmq', { replicationWaitMs: 0 });
    for (let n = 1; n <= 700; n++) await trail.append(entry(n));
  } finally {
    r.disconnect();
  }
}, 180_000);

afterAll(async () => {
  await client.deleteVhost(vhost);
  await client.close();
  await redis?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

describe('bin/rmq.js into a slow reader (issue 28)', () => {
  it('history --json of more than 64 KiB arrives whole, exit 0, as it does at once', async () => {
    const slow = await slowly(['history', '--json']);
    expect(slow.code, slow.err).toBe(0);
    expect(slow.out.length).toBeGreaterThan(256 * 1024);
    expect((JSON.parse(slow.out) as { entries: unknown[] }).entries).toHaveLength(700);
    expect(slow.out).toBe((await atOnce(['history', '--json'])).out);
  });

  it('every terminal command, text and --json, small and large: the slow reader gets all of it', async () => {
    const runs: Record<string, readonly string[]> = {
      help: ['help'],
      policies: ['policies', '--vhost', vhost],
      which: ['which', 'q', '--vhost', vhost],
      preview: ['preview', 'edit', policyName(0), '--priority', '1000', '--vhost', vhost],
      lint: ['lint', '--vhost', vhost],
      plan: ['plan', planFile, '--vhost', vhost],
      requests: ['requests'],
      history: ['history'],
      links: ['links', '--vhost', vhost],
      path: ['path', 'q', '--vhost', vhost],
    };
    // Each command the terminal answers is here: a new one must be added. `import` answers only
    // with a bot to file through (test/e2e/import-flow.test.ts runs it against dist/main.js).
    expect(Object.keys(runs).sort()).toEqual(
      commandsOf('terminal')
        .map((c) => c.name)
        .filter((name) => name !== 'import')
        .sort(),
    );
    let large = 0;
    for (const [name, args] of Object.entries(runs)) {
      // help has text only.
      for (const json of name === 'help' ? [false] : [false, true]) {
        const argv = json ? [...args, '--json'] : args;
        const slow = await slowly(argv);
        expect(slow.code, `${argv.join(' ')}: ${slow.err}`).toBe(0);
        if (json) expect(() => JSON.parse(slow.out), `${name} --json is one JSON document`).not.toThrow();
        else expect(slow.out.endsWith('\n'), name).toBe(true);
        // which, preview and plan carry the live numbers' sampling time, which moves between runs.
        if (name !== 'which' && name !== 'preview' && name !== 'plan')
          expect(slow.out, argv.join(' ')).toBe((await atOnce(argv)).out);
        if (slow.out.length > 64 * 1024) large++;
      }
    }
    // policies and which (--json and text), history (both): past the pipe's buffer.
    expect(large).toBeGreaterThanOrEqual(5);
  });

  it('a reader that leaves early (`| head`) ends the command quietly: no stack trace', async () => {
    const { spawn } = await import('node:child_process');
    const run = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, [pkg.bin, 'history', '--json'], {
        cwd,
        env: { PATH: process.env.PATH ?? '', ...env() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
      child.stdout.once('data', () => child.stdout.destroy());
      child.once('close', (code) => resolve({ code, err }));
    });
    expect(run.err).not.toMatch(/\n\s+at |EPIPE/);
    expect(run.code).toBe(0);
  });
});

describe('history --verify on a keyed chain, read without the key (issue 28)', () => {
  it('an edited keyed record: never "intact"; the links are checked, the rest said unproven, exit 1', async () => {
    // A Redis of this test's own: the compiled CLI reads the production prefix `rmq:`.
    const own = await startRedisServer();
    const r = new Redis(own.url);
    try {
      const trail = new AuditTrail(r, 'rmq', { key: KEY, replicationWaitMs: 0 });
      for (const n of [1, 2, 3]) await trail.append(entry(n));
      const verify = (more: Record<string, string> = {}) =>
        slowly(['history', '--verify', ...(more.JSON ? ['--json'] : [])], { REDIS_URL: own.url, ...more });
      const before = await verify();
      expect(before.code).toBe(1);
      expect(before.out).not.toMatch(/intact/);

      await editInPlace(r, 'rmq', entry(2).id, (record) => {
        (record.approver as { reason: string }).reason = 'approved by the CTO';
      });
      const keyless = await verify();
      expect(keyless.code).toBe(1);
      expect(`${keyless.out}${keyless.err}`).not.toMatch(/intact/);
      expect(keyless.err).toMatch(
        /NOT PROVEN: 3 records of 3 \(the first: a-r-0+1\) are sealed with RMQ_AUDIT_KEY, which this reader does not have\. The links between the records hold/,
      );
      const json = await verify({ JSON: '1' });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.out).verify).toEqual({
        ok: false,
        records: 3,
        broken: entry(1).id,
        why: 'needs-key',
        unproven: 3,
        keyed: false,
      });
      // What can be checked without the key still is: a record taken out breaks the links.
      await removeRecord(r, 'rmq', entry(2).id);
      const cut = await verify();
      expect(cut.code).toBe(1);
      expect(cut.err).toContain(`BROKEN at ${entry(3).id}`);

      const withKey = await verify({ RMQ_AUDIT_KEY: KEY });
      expect(withKey.code).toBe(1);
      expect(withKey.err).toContain('BROKEN at');
    } finally {
      r.disconnect();
      await own.stop();
    }
  });
});
