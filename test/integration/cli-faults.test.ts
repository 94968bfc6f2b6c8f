/**
 * The terminal against brokers that misbehave (fault servers of test/support/fakeBroker.ts) and
 * against addresses the HTTP API cannot take (the real broker): every failure ends, within the
 * question's budget, with the exit code and `--json` document of INTERFACE.md. Twice: the
 * sources in this process (undici), and `bin/rmq.js` after the build as a process (its bundle
 * talks HTTP through src/rabbit/nodeHttpPool.ts instead).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, brokerUrl, uniqueName } from '../support/broker.ts';
import { built } from '../support/built.ts';
import { type CliRun, runBuiltRmq, runRmq } from '../support/cli.ts';
import { closedPortUrl, type FakeBroker, startBlackHole, startFakeBroker } from '../support/fakeBroker.ts';

const cwd = mkdtempSync(join(tmpdir(), 'rmq-cli-faults-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const runners: readonly [string, (env: Record<string, string>, argv: string[]) => Promise<CliRun>][] = [
  ['the sources', (env, argv) => runRmq(env, argv)],
  ['bin/rmq.js after the build', async (env, argv) => runBuiltRmq((await built()).bin, argv, env, cwd)],
];

describe.each(runners)('%s', (_, run) => {
  async function rmq(env: Record<string, string>, ...argv: string[]): Promise<CliRun> {
    return run(env, argv);
  }

  const real = { RMQ_URL: brokerUrl(), RMQ_USER: 'guest', RMQ_PASSWORD: 'guest' };

  describe('a broker that misbehaves', () => {
    let fake: FakeBroker;
    beforeAll(async () => {
      fake = await startFakeBroker();
    });
    afterAll(async () => {
      await fake.close();
    });

    it('an endless 200 body is refused at the size limit: not-asked, exit 3', async () => {
      fake.setFallback({ kind: 'endless' });
      const r = await rmq({ RMQ_URL: fake.url }, 'which', 'orders', '--json');
      expect(r.code, r.err).toBe(3);
      const doc = JSON.parse(r.out) as { answer: string; why: string };
      expect(doc).toMatchObject({ answer: 'not-asked', why: 'too-large' });
    });

    it('an endless listing is refused at its limit in preview: exit 3', async () => {
      // The small answers are real (proxied), the queue listing never ends.
      fake.setFallback({ kind: 'proxy', target: brokerUrl() });
      const vhost = uniqueName('endless');
      const admin = adminClient();
      await admin.putVhost(vhost);
      try {
        await admin.putPolicy('user', {
          vhost,
          name: 'p',
          pattern: '^',
          applyTo: 'queues',
          priority: 0,
          definition: { 'max-length': 1 },
        });
        // The listing is the one request carrying `columns=`.
        // Queues with 4 KB of arguments each, without end.
        const item = JSON.stringify({
          name: 'q',
          type: 'classic',
          arguments: { 'x-note': 'n'.repeat(4096) },
        });
        fake.setRoute((u) => u.includes('/api/queues/') && u.includes('columns='), { kind: 'endless', item });
        // An 8 MiB listing limit (RMQ_MAX_LISTING) and a budget long enough that the limit, not the clock, ends it.
        const r = await rmq(
          { ...real, RMQ_URL: fake.url, RMQ_MAX_LISTING: '8MiB', RMQ_TIMEOUT: '2m' },
          'preview',
          'delete',
          'p',
          '--vhost',
          vhost,
          '--json',
        );
        expect(r.code, r.err).toBe(3);
        expect(JSON.parse(r.out), r.out).toMatchObject({ error: { code: 'too-large' } });
      } finally {
        fake.setRoute(null);
        await admin.deleteVhost(vhost);
        await admin.close();
      }
    });

    it('a broker that sends one byte a second is given up at RMQ_TIMEOUT: exit 3, did not answer in time', async () => {
      fake.setFallback({ kind: 'drip', body: '{"rabbitmq_version":"3.10.8"}', intervalMs: 200 });
      const r = await rmq({ RMQ_URL: fake.url, RMQ_TIMEOUT: '1500ms' }, 'which', 'orders');
      expect(r.code).toBe(3);
      expect(r.out).toMatch(/did not answer in time/);
    });
  });

  describe('a black-holed broker', () => {
    it('costs one budget (RMQ_TIMEOUT), not three header timeouts: exit 3', async () => {
      const hole = await startBlackHole();
      try {
        const r = await rmq({ RMQ_URL: hole.url, RMQ_TIMEOUT: '1s' }, 'which', 'orders', '--json');
        expect(r.code).toBe(3);
        expect(JSON.parse(r.out)).toMatchObject({ answer: 'not-asked', why: 'timeout' });
      } finally {
        await hole.close();
      }
    });
  });

  describe('addresses the HTTP API cannot take (real broker)', () => {
    it.each([
      ['which', 'x', '--vhost', '.'],
      ['which', 'x', '--vhost', '..'],
      ['preview', 'delete', 'P', '--vhost', '.'],
      ['preview', 'delete', 'P', '--vhost', '..'],
    ])('%s %s … --vhost %s: refused before any call, exit 2', async (...argv) => {
      const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
      try {
        const r = await rmq({ ...real, RMQ_URL: fake.url }, ...argv);
        expect(r.code, r.out).toBe(2);
        expect(r.err).toMatch(/HTTP API cannot address a vhost named/);
        expect(fake.requests.filter((q) => /%2E|\/\.\.?(\/|$)/i.test(q.url))).toEqual([]);
      } finally {
        await fake.close();
      }
    });

    it.each(['.', '..'])(
      'which %s (an object name): exit 2, not "the broker answered with an error"',
      async (name) => {
        const r = await rmq(real, 'which', name, '--json');
        expect(r.code).toBe(2);
        expect(JSON.parse(r.out)).toMatchObject({ error: { code: 'bad-input' } });
      },
    );

    it('a missing vhost is refused (exit 2), naming a close one the identity can see', async () => {
      const admin = adminClient();
      const vhost = uniqueName('typo');
      await admin.putVhost(vhost);
      try {
        const typo = `${vhost.slice(0, -1)}${vhost.endsWith('x') ? 'y' : 'x'}`;
        const r = await rmq(real, 'which', 'x', '--vhost', typo, '--json');
        expect(r.code).toBe(2);
        const doc = JSON.parse(r.out) as { error: { message: string } };
        expect(doc.error.message).toBe(`Vhost "${typo}" does not exist; did you mean "${vhost}"?`);
        const p = await rmq(real, 'preview', 'delete', 'P', '--vhost', typo);
        expect(p.code).toBe(2);
        expect(p.out).toContain(`did you mean "${vhost}"?`);
      } finally {
        await admin.deleteVhost(vhost);
        await admin.close();
      }
    });

    it('a 10 KB vhost name (the broker answers 414) exits 3 with the broker’s reason, in --json too', async () => {
      const r = await rmq(real, 'which', 'x', '--vhost', 'v'.repeat(10_000), '--json');
      expect(r.code, r.err).toBe(3);
      const doc = JSON.parse(r.out) as { answer?: string; why?: string; error?: unknown };
      expect(doc).toMatchObject({ answer: 'not-asked', why: 'refused-by-broker' });
    });

    it('credentials inside RMQ_URL are a configuration error: exit 2, naming the variable, never echoing the password', async () => {
      const r = await rmq({ RMQ_URL: 'http://guest:s3cret@127.0.0.1:15672' }, 'which', 'x', '--json');
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/RMQ_URL: must not carry credentials/);
      expect(r.err + r.out).not.toContain('s3cret');
    });

    it('`--` ends the options: a queue named --x can be asked', async () => {
      const admin = adminClient();
      const vhost = uniqueName('dashes');
      await admin.putVhost(vhost);
      try {
        await admin.putQueue(vhost, '--x', { kind: 'classic' });
        const r = await rmq(real, 'which', '--vhost', vhost, '--json', '--', '--x');
        expect(r.code, r.err).toBe(0);
        expect(JSON.parse(r.out)).toMatchObject({ object: { name: '--x', exists: true } });
      } finally {
        await admin.deleteVhost(vhost);
        await admin.close();
      }
    });
  });

  describe("a cluster's nodes in RMQ_URL, the first one down", () => {
    it('which, policies and lint answer through the next node, and --json names it; one node: no node key', async () => {
      const env = { ...real, RMQ_URL: `${await closedPortUrl()},${brokerUrl()}` };
      for (const argv of [
        ['which', 'orders', '--json'],
        ['policies', '--json'],
        ['lint', '--json'],
      ]) {
        const r = await rmq(env, ...argv);
        expect(r.code, `${argv[0]}: ${r.err}`).toBe(0);
        expect((JSON.parse(r.out) as { node?: string }).node, argv[0]).toBe(brokerUrl());
      }
      const one = await rmq(real, 'which', 'orders', '--json');
      expect(one.code, one.err).toBe(0);
      expect(JSON.parse(one.out)).not.toHaveProperty('node');
    });
  });
});
