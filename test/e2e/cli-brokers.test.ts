/**
 * Two wrong answers of the terminal, through the package's `bin/rmq.js` on every broker under test
 * (issue 28):
 * 13. a vhost hidden from the identity was said not to exist: on 4.3.6 a user with the
 *     `management` tag and no permission on `/` got "Vhost "/" does not exist" (the broker answers
 *     404 there, where 3.10.8 and 4.0.5 answer 401);
 * 14. a stream was "unknown (yet)" for ever: streams report their messages, never their bytes;
 *     `now.bytes` is `null` then (INTERFACE.md), the messages known.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WhichResult } from '../../src/commands/which/which.ts';
import { brokerCredentials, waitFor, withUser } from '../support/broker.ts';
import { brokersUp, clientFor, inVhostOn, type TestBroker } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { type CliRun, runBuiltRmq } from '../support/cli.ts';
import { messages } from '../support/messages.ts';

const { up } = await brokersUp();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-cli-brokers-'));
let pkg: Built;

beforeAll(async () => {
  pkg = await built();
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function rmq(broker: TestBroker, args: readonly string[], as = brokerCredentials()): Promise<CliRun> {
  return runBuiltRmq(
    pkg.bin,
    args,
    { RMQ_URL: broker.url, RMQ_USER: as.user, RMQ_PASSWORD: as.password },
    cwd,
  );
}

async function brokerVersion(broker: TestBroker): Promise<string> {
  const client = clientFor(broker);
  try {
    return (await client.overview()).versionText;
  } finally {
    await client.close();
  }
}

describe.each(up.map((b) => [b.label, b] as const))('bin/rmq.js on %s (issue 28)', (_label, broker) => {
  it('a user with the management tag and no permission on "/": never "Vhost "/" does not exist"', async () => {
    const version = await brokerVersion(broker);
    // 4.3 hides a vhost from a user without permissions on it (404); 3.10 and 4.0 refuse (401).
    const hides = /^(4\.([3-9]|\d\d)|[5-9])\./.test(version);
    await withUser({ tags: ['management'], url: broker.url }, async (u) => {
      const as = { user: u.user, password: u.password };
      const runs = {
        which: await rmq(broker, ['which', 'orders.audit', '--vhost', '/'], as),
        whichJson: await rmq(broker, ['which', 'orders.audit', '--vhost', '/', '--json'], as),
        policies: await rmq(broker, ['policies', '--vhost', '/'], as),
        preview: await rmq(broker, ['preview', 'delete', 'nope', '--vhost', '/'], as),
      };
      for (const [name, run] of Object.entries(runs)) {
        const said = `${run.out}${run.err}`;
        expect(said, `${name} on ${version}`).not.toMatch(/[Vv]host "\/" does not exist/);
        if (hides) {
          expect(run.code, `${name}: ${said}`).toBe(2);
          expect(said, name).toContain(
            `roker user "${u.user}" sees no vhost "/": it does not exist, or this user has no permission on it`,
          );
        } else {
          expect(run.code, `${name}: ${said}`).toBe(3);
          expect(said, name).toMatch(/may not read that vhost|not authori[sz]ed/i);
        }
      }
      if (hides) {
        expect(JSON.parse(runs.whichJson.out)).toMatchObject({
          error: { code: 'bad-input', message: expect.stringContaining('sees no vhost "/"') },
        });
      }
      // A vhost that is nowhere: the same sentence for this identity on every broker (it cannot
      // know which of the two it is), and "does not exist" for an administrator.
      const nowhere = `rmqtest-nowhere-${Date.now()}`;
      const hidden = await rmq(broker, ['which', 'q', '--vhost', nowhere], as);
      expect(hidden.code).toBe(2);
      expect(hidden.err).toContain(`Broker user "${u.user}" sees no vhost "${nowhere}"`);
      const admin = await rmq(broker, ['which', 'q', '--vhost', nowhere]);
      expect(admin.code).toBe(2);
      expect(admin.err).toContain(`Vhost "${nowhere}" does not exist.`);
    });
  });

  it('a stream: its messages known, its bytes null (never "unknown" for ever), in which and preview', async () => {
    await inVhostOn(broker, 'cli-stream', async (vhost, client) => {
      await client.putQueue(vhost, 'st', { kind: 'stream' });
      const amqp = await messages(broker, vhost);
      try {
        await amqp.publish('st', 3, 100);
      } finally {
        await amqp.close();
      }
      // The statistics lag: ask until the broker counts what was published.
      const r = await waitFor(
        async () => {
          const run = await rmq(broker, ['which', 'st', '--vhost', vhost, '--json']);
          expect(run.code, run.err).toBe(0);
          const doc = JSON.parse(run.out) as WhichResult;
          return doc.now && doc.now.messages > 0 ? doc : undefined;
        },
        { deadlineMs: 45_000, intervalMs: 500, what: 'the stream to report its messages' },
      );
      expect(r.object.kind).toBe('stream');
      expect(r.now).toMatchObject({ ready: r.now?.messages, unacked: 0, bytes: null, consumers: 0 });
      const text = await rmq(broker, ['which', 'st', '--vhost', vhost]);
      expect(text.code, text.err).toBe(0);
      expect(text.out).toMatch(/Now: \d+ messages? ready, 0 unacked, 0 consumers/);
      expect(text.out).not.toMatch(/Now: unknown/);

      const preview = await rmq(broker, [
        'preview',
        'create',
        'age',
        '--pattern',
        '^st$',
        '--definition',
        '{"max-age":"1h"}',
        '--vhost',
        vhost,
        '--json',
      ]);
      expect(preview.code, preview.err).toBe(0);
      const st = (JSON.parse(preview.out) as { objects: { name: string; now: unknown }[] }).objects.find(
        (o) => o.name === 'st',
      );
      expect(st?.now).toMatchObject({ messages: expect.any(Number), bytes: null });
      const previewText = await rmq(broker, [
        'preview',
        'create',
        'age',
        '--pattern',
        '^st$',
        '--definition',
        '{"max-age":"1h"}',
        '--vhost',
        vhost,
      ]);
      expect(previewText.code, previewText.err).toBe(0);
      expect(previewText.out).not.toMatch(/without statistics/);
    });
  });
});
