/**
 * An answer that could not read what it depends on is not an answer: `plan`, `preview` and `lint`
 * through the built `bin/rmq.js`, against the real broker behind a fault server
 * (test/support/fakeBroker.ts) that makes one reading hang or be refused and passes the rest
 * through. The text leads with what could not be read, why and what to do; the exit code is 3
 * (with `--detailed-exitcode` too); `--json` carries the document and `incomplete`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { BROKERS } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeBehavior, type FakeBroker, startFakeBroker } from '../support/fakeBroker.ts';
import { management, messages } from '../support/messages.ts';

const vhost = uniqueName('incomplete');
const client = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-cli-incomplete-'));
let pkg: Built;
let fake: FakeBroker;

const rmq = (args: readonly string[], extra: Record<string, string> = {}) => {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    args,
    { RMQ_URL: fake.url, RMQ_USER: user, RMQ_PASSWORD: password, RMQ_TIMEOUT: '3s', ...extra },
    cwd,
  );
};

/** The queues' statistics: every queue listing or page that does not disable them. */
const statistics = (u: string) => u.startsWith('/api/queues/') && !u.includes('disable_stats=true');
const HANG: FakeBehavior = { kind: 'hang' };
const FORBIDDEN: FakeBehavior = {
  kind: 'respond',
  status: 403,
  body: { error: 'not_authorised', reason: 'Not monitor user' },
};

const file = join(cwd, 'rename.yaml');
const LEADS = /^INCOMPLETE, not an answer: the queues' statistics \(messages, consumers\) of vhost "/;

beforeAll(async () => {
  pkg = await built();
  fake = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
  await client.putVhost(vhost);
  const broker = BROKERS[0];
  if (!broker) throw new Error('no broker');
  const api = management(broker, vhost);
  await api.policy('keep', '^orders\\.audit$', { 'max-length': 1000 }, { priority: 10 });
  await api.policy('fallback', '^orders\\.', { 'max-length': 5 }, { priority: 1 });
  await api.queue('orders.audit', 'classic');
  const amqp = await messages(broker, vhost);
  await amqp.publish('orders.audit', 30);
  await amqp.close();
  await api.settled('orders.audit', 30);
  // And as the listing the plan reads says it (the broker caches a vhost's listing a while).
  await waitFor(
    async () => {
      for await (const q of client.streamQueueStats(vhost)) if (q.live?.messages === 30) return true;
      return false;
    },
    { what: 'the listing to count 30 messages', deadlineMs: 30_000, intervalMs: 250 },
  );
  // Deleting `keep` moves 30 messages under `fallback`'s max-length 5: a loss the statistics decide.
  writeFileSync(
    file,
    JSON.stringify({
      policies: [
        {
          vhost,
          name: 'fallback',
          pattern: '^orders\\.',
          'apply-to': 'queues',
          priority: 1,
          definition: { 'max-length': 5 },
        },
      ],
    }),
  );
}, 120_000);

afterAll(async () => {
  fake.setRoute(null);
  await fake.close();
  await client.deleteVhost(vhost);
  await client.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe('plan, the queue statistics not read', () => {
  it('read: exit 0, or 4 with --detailed-exitcode, the loss known and no incomplete key', async () => {
    fake.setRoute(null);
    const text = await rmq(['plan', file, '--prune']);
    expect(text.code, text.err).toBe(0);
    expect(text.out).not.toContain('INCOMPLETE');
    expect(text.out).not.toContain('without statistics');
    expect((await rmq(['plan', file, '--prune', '--detailed-exitcode'])).code).toBe(4);
    const json = await rmq(['plan', file, '--prune', '--json']);
    expect(json.code, json.err).toBe(0);
    const doc = JSON.parse(json.out);
    expect(doc).not.toHaveProperty('incomplete');
    expect(doc.impact.messagesLost).toBe(25);
  });

  it('timed out: the text leads with what, why and what to do; exit 3, with --detailed-exitcode too', async () => {
    fake.setRoute(statistics, HANG);
    try {
      const text = await rmq(['plan', file, '--prune']);
      expect(text.code, text.out).toBe(3);
      const first = text.out.split('\n')[0] ?? '';
      expect(first).toMatch(LEADS);
      expect(first).toContain(`of vhost "${vhost}" could not be read — timeout after 3 s`);
      expect(first).toContain(
        'so what the change loses is not known. Raise RMQ_TIMEOUT above 3s and ask again.',
      );
      // The plan as now, after the sentence.
      expect(text.out).toContain(`Plan for vhost "${vhost}"`);
      expect(text.out).toContain('1. delete policy "keep"');
      expect(text.err).toMatch(/^rmq: INCOMPLETE, not an answer: /);
      const detailed = await rmq(['plan', file, '--prune', '--detailed-exitcode']);
      expect(detailed.code, detailed.out).toBe(3);
      expect(detailed.out).toMatch(LEADS);
    } finally {
      fake.setRoute(null);
    }
  });

  it('--json: the document as now, with incomplete; exit 3 (timed out, and refused: not permitted)', async () => {
    fake.setRoute(statistics, HANG);
    try {
      const run = await rmq(['plan', file, '--prune', '--json', '--detailed-exitcode']);
      expect(run.code, run.err).toBe(3);
      const doc = JSON.parse(run.out);
      expect(doc.changes.map((c: { action: string; policy: string }) => `${c.action} ${c.policy}`)).toEqual([
        'delete keep',
      ]);
      expect(doc).toHaveProperty('impact');
      expect(doc.incomplete).toMatchObject({
        what: ['queue-statistics'],
        why: 'timeout',
        unread: [{ what: 'queue-statistics', vhost, why: 'timeout', budgetMs: 3000 }],
      });
      expect(doc.incomplete.message).toMatch(LEADS);
    } finally {
      fake.setRoute(null);
    }
    fake.setRoute(statistics, FORBIDDEN);
    try {
      const run = await rmq(['plan', file, '--prune', '--json']);
      expect(run.code, run.err).toBe(3);
      const doc = JSON.parse(run.out);
      expect(doc.incomplete).toMatchObject({ what: ['queue-statistics'], why: 'forbidden' });
      expect(doc.incomplete.message).toContain("not permitted: the bot's broker user may not read them");
      expect(doc.incomplete.message).toContain("Check that user's permissions");
    } finally {
      fake.setRoute(null);
    }
  });
});

describe('plan, a queue the broker lists without statistics', () => {
  it('says so, counts nothing for it, and is an answer (exit 0)', async () => {
    // The page of the changed patterns' queues, the queue in it with no numbers (a queue's first seconds).
    fake.setRoute((u) => statistics(u) && u.includes('page='), {
      kind: 'respond',
      status: 200,
      body: { filtered_count: 1, item_count: 1, page: 1, page_count: 1, items: [{ name: 'orders.audit' }] },
    });
    try {
      const json = await rmq(['plan', file, '--prune', '--json']);
      expect(json.code, json.err).toBe(0);
      const doc = JSON.parse(json.out);
      expect(doc).not.toHaveProperty('incomplete');
      expect(doc.impact.messagesLost).toBe(0);
      const audit = doc.objects.find((o: { name: string }) => o.name === 'orders.audit');
      expect(audit.now).toBeNull();
      const text = await rmq(['plan', file, '--prune']);
      expect(text.out).toContain('1 queue without statistics: their messages are unknown, not counted.');
    } finally {
      fake.setRoute(null);
    }
  });
});

describe('preview delete, the queue statistics not read', () => {
  it('read: exit 0 and no incomplete key; not read: leads with the sentence, exit 3, --json incomplete', async () => {
    fake.setRoute(null);
    const read = await rmq(['preview', 'delete', 'keep', '--vhost', vhost, '--json']);
    expect(read.code, read.err).toBe(0);
    expect(JSON.parse(read.out)).not.toHaveProperty('incomplete');
    fake.setRoute(statistics, HANG);
    try {
      const text = await rmq(['preview', 'delete', 'keep', '--vhost', vhost]);
      expect(text.code, text.out).toBe(3);
      expect(text.out.split('\n')[0]).toMatch(LEADS);
      expect(text.out).toContain('Preview: delete policy "keep"');
      const json = await rmq(['preview', 'delete', 'keep', '--vhost', vhost, '--json']);
      expect(json.code, json.err).toBe(3);
      const doc = JSON.parse(json.out);
      expect(doc.change).toMatchObject({ action: 'delete', policy: 'keep' });
      expect(doc.objects.map((o: { name: string }) => o.name)).toEqual(['orders.audit']);
      expect(doc.incomplete).toMatchObject({ what: ['queue-statistics'], why: 'timeout' });
    } finally {
      fake.setRoute(null);
    }
  });
});

describe('lint, the federation upstreams a policy names not read', () => {
  it('leads with the sentence, exit 3; --json carries incomplete; read, exit 0', async () => {
    const { user, password } = brokerCredentials();
    const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    // The broker's policies, and one naming a federation upstream (answered by the fake in front
    // of the broker, whatever plugins the broker runs): lint's missing-target reads the upstreams for it.
    const res = await fetch(`${brokerUrl()}/api/policies/${encodeURIComponent(vhost)}`, {
      headers: { authorization: auth },
    });
    const policies = [
      ...((await res.json()) as unknown[]),
      {
        vhost,
        name: 'federate',
        pattern: '^fed\\.',
        'apply-to': 'exchanges',
        priority: 0,
        definition: { 'federation-upstream': 'up' },
      },
    ];
    const withPolicies = (u: string) => u.startsWith(`/api/policies/${encodeURIComponent(vhost)}`);
    fake.setRoute((u) => (withPolicies(u) ? { kind: 'respond', status: 200, body: policies } : false));
    try {
      const read = await rmq(['lint', '--vhost', vhost, '--json']);
      expect(read.code, read.err).toBe(0);
      expect(JSON.parse(read.out)).not.toHaveProperty('incomplete');
    } finally {
      fake.setRoute(null);
    }
    fake.setRoute((u) =>
      withPolicies(u)
        ? { kind: 'respond', status: 200, body: policies }
        : u.startsWith('/api/parameters/federation-upstream')
          ? FORBIDDEN
          : false,
    );
    try {
      const text = await rmq(['lint', '--vhost', vhost]);
      expect(text.code, text.out).toBe(3);
      expect(text.out.split('\n')[0]).toMatch(
        /^INCOMPLETE, not an answer: the federation upstreams of vhost ".*" could not be read — not permitted/,
      );
      expect(text.out).toContain('what they would find is not claimed either way');
      const failOn = await rmq(['lint', '--vhost', vhost, '--fail-on', 'warning']);
      expect(failOn.code).toBe(3);
      const json = await rmq(['lint', '--vhost', vhost, '--json']);
      expect(json.code, json.err).toBe(3);
      const doc = JSON.parse(json.out);
      expect(doc).toMatchObject({
        answer: 'linted',
        incomplete: { what: ['federation-upstreams'], why: 'forbidden' },
      });
      expect(doc).toHaveProperty('findings');
    } finally {
      fake.setRoute(null);
    }
  });
});

describe('plan, the numbers its findings count of queues no change reaches not read', () => {
  // `idle` sets `expires` on a.1 and a.2; the file gives a.2 a policy of its own, so `idle`'s
  // expires-idle tally changes and the plan asks for a.1's numbers (no change reaches a.1).
  const v2 = uniqueName('incomplete-findings');
  const file2 = join(cwd, 'findings.json');
  /** The request for a.1's numbers alone: a page of statistics whose name filter is a.1's. */
  const untouchedPage = (u: string) =>
    statistics(u) &&
    u.includes('page=') &&
    decodeURIComponent(u).includes('a\\.1') &&
    !decodeURIComponent(u).includes('a\\.2');

  beforeAll(async () => {
    await client.putVhost(v2);
    const broker = BROKERS[0];
    if (!broker) throw new Error('no broker');
    const api = management(broker, v2);
    await api.policy('idle', '^a\\.', { expires: 3_600_000 }, { priority: 1 });
    await api.queue('a.1', 'classic');
    await api.queue('a.2', 'classic');
    const amqp = await messages(broker, v2);
    await amqp.publish('a.1', 4);
    await amqp.publish('a.2', 3);
    await amqp.close();
    await api.settled('a.1', 4);
    await api.settled('a.2', 3);
    await waitFor(
      async () => {
        const n = new Map<string, number | undefined>();
        for await (const q of client.streamQueueStats(v2)) n.set(q.name, q.live?.messages);
        return n.get('a.1') === 4 && n.get('a.2') === 3;
      },
      { what: 'the listing to count the messages', deadlineMs: 30_000, intervalMs: 250 },
    );
    const policy = (name: string, pattern: string, priority: number, expires: number) => ({
      vhost: v2,
      name,
      pattern,
      'apply-to': 'queues',
      priority,
      definition: { expires },
    });
    writeFileSync(
      file2,
      JSON.stringify({
        policies: [policy('idle', '^a\\.', 1, 3_600_000), policy('own', '^a\\.2$', 5, 1_800_000)],
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await client.deleteVhost(v2);
  });

  it('read: the findings count both queues, no note; not read: a note says how many and why, the plan stands', async () => {
    fake.setRoute(null);
    const before = fake.requests.length;
    const read = await rmq(['plan', file2, '--json']);
    expect(read.code, read.err).toBe(0);
    expect(fake.requests.slice(before).some((r) => untouchedPage(r.url))).toBe(true);
    expect(read.out).not.toContain('could not be read');
    fake.setRoute(untouchedPage, FORBIDDEN);
    try {
      const text = await rmq(['plan', file2]);
      expect(text.code, text.err).toBe(0);
      expect(text.out).toContain('1. create policy "own"');
      expect(text.out).toMatch(
        /^The numbers of 1 queue the findings count could not be read \(forbidden: .*Not monitor user\): what they find of those queues' messages is not known\.$/m,
      );
      // The plan's own reading was whole: an answer, its loss known.
      expect(text.out).not.toContain('INCOMPLETE');
      expect(text.out).toContain('end state: 3 messages lost, 1 queue deleted');
    } finally {
      fake.setRoute(null);
    }
  });
});
