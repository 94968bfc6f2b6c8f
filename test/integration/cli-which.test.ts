/**
 * `rmq which` end to end through the CLI entry point, against the lab scenario on the real broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import type { WhichResult } from '../../src/commands/which/which.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { runCli } from '../../src/terminal/cli.ts';
import { adminClient, brokerUrl, uniqueName, waitFor, withUser } from '../support/broker.ts';
import { type CliRun, runRmq } from '../support/cli.ts';
import { startFakeBroker } from '../support/fakeBroker.ts';

const vhost = uniqueName('lab');
const client = adminClient();
const env = { RMQ_URL: brokerUrl(), RMQ_USER: 'guest', RMQ_PASSWORD: 'guest' };

async function rmq(...argv: string[]): Promise<CliRun> {
  return runRmq(env, argv);
}

async function whichJson(name: string, ...flags: string[]): Promise<WhichResult> {
  const r = await rmq('which', name, '--vhost', vhost, '--json', ...flags);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as WhichResult;
}

/** The broker's statistics lag: ask until it reports both layers. */
async function reported(name: string, ...flags: string[]): Promise<WhichResult> {
  return waitFor(
    async () => {
      const r = await whichJson(name, ...flags);
      return r.answer === 'reported' && (r.object.kind === 'exchange' || r.operatorPolicySource === 'broker')
        ? r
        : undefined;
    },
    { deadlineMs: 30_000, intervalMs: 500, what: `the broker to report ${name}` },
  );
}

beforeAll(async () => {
  await setUpLab(client, vhost);
});

afterAll(async () => {
  await client.deleteVhost(vhost);
  await client.close();
});

describe('rmq which on the lab', () => {
  it('orders.audit: audit-retention in force, audit-fallback contributes nothing', async () => {
    const r = await reported('orders.audit');
    expect(r.object).toMatchObject({ vhost, name: 'orders.audit', kind: 'classic', exists: true });
    expect(r.inForce).toMatchObject({
      name: 'audit-retention',
      priority: 10,
      definition: { 'dead-letter-exchange': 'audit.dlx' },
    });
    expect(r.alsoMatched).toEqual([
      { name: 'audit-fallback', priority: 1, reason: 'lower-priority', unanchored: false },
      { name: 'orders-cap', priority: 0, reason: 'lower-priority', unanchored: true },
    ]);
    expect(r.operatorPolicy?.name).toBe('orders-ceiling');
    // The fallback's one-hour TTL is nowhere: the TTL comes from the operator ceiling alone.
    expect(r.effective['message-ttl']).toEqual({ value: 600_000, from: 'operator-policy' });
    expect(r.nothingGoverns).toBe(false);
    expect(r.disagreements).toEqual([]);
  });

  it('orders.audit in text: the pattern with the one backslash the broker holds, not JSON-quoted', async () => {
    await reported('orders.audit');
    const text = await rmq('which', 'orders.audit', '--vhost', vhost);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain('audit-retention — pattern "^orders\\.audit$"');
    expect(text.out).not.toContain('\\\\');
  });

  it('orders.processing (quorum): the fallback governs, the operator ceiling holds the stricter TTL', async () => {
    const r = await reported('orders.processing');
    expect(r.object.kind).toBe('quorum');
    expect(r.inForce?.name).toBe('audit-fallback');
    expect(r.effective['message-ttl']).toEqual({ value: 600_000, from: 'both' });
  });

  it('orders.events (stream): nothing governs it, and the policies that match say why', async () => {
    const r = await reported('orders.events');
    expect(r.object.kind).toBe('stream');
    expect(r.inForce).toBeNull();
    expect(r.operatorPolicy).toBeNull();
    expect(r.nothingGoverns).toBe(true);
    expect(r.alsoMatched).toEqual([
      {
        name: 'audit-fallback',
        priority: 1,
        reason: 'refused-key',
        keys: ['message-ttl'],
        unanchored: false,
      },
      { name: 'orders-cap', priority: 0, reason: 'refused-key', keys: ['max-length'], unanchored: true },
    ]);
    const text = await rmq('which', 'orders.events', '--vhost', vhost);
    expect(text.out).toMatch(/Nothing governs this object/);
  });

  it('retry.orders.dlq: caught by the unanchored pattern', async () => {
    const r = await reported('retry.orders.dlq');
    expect(r.inForce).toMatchObject({ name: 'orders-cap', pattern: 'orders', unanchored: true });
    const text = await rmq('which', 'retry.orders.dlq', '--vhost', vhost);
    expect(text.out).toMatch(/unanchored/);
  });

  it('billing.invoices: a tie, the broker picks one and the answer says it is undefined', async () => {
    const r = await reported('billing.invoices');
    expect(['billing-a', 'billing-b']).toContain(r.inForce?.name);
    expect(r.ambiguous).toBe(true);
    expect(r.alsoMatched).toEqual([
      {
        name: r.inForce?.name === 'billing-a' ? 'billing-b' : 'billing-a',
        priority: 5,
        reason: 'same-priority',
        unanchored: false,
      },
    ]);
  });

  it('orders.topic: an exchange, found without --kind', async () => {
    const r = await reported('orders.topic');
    expect(r.object.kind).toBe('exchange');
    expect(r.inForce?.name).toBe('orders-ae');
    expect(r.alsoMatched).toEqual([]);
  });

  it('orders.new: not reported, the matches listed by priority, kind assumed and said', async () => {
    const r = await whichJson('orders.new');
    expect(r.answer).toBe('not-reported');
    expect(r.object).toMatchObject({ exists: false, kindAssumed: true, kind: 'classic' });
    expect(r.inForce?.name).toBe('audit-fallback');
    expect(r.ambiguous).toBe(false);
    const text = await rmq('which', 'orders.new', '--vhost', vhost);
    expect(text.out).toMatch(/did not report which policy is in force/);
    expect(text.out).toMatch(/not a statement about which one applies/);
    expect(text.out).toMatch(/answering as for a classic queue/);
  });

  it('billing.new: not reported, and the first match is marked ambiguous', async () => {
    const r = await whichJson('billing.new');
    expect(r.answer).toBe('not-reported');
    expect(r.ambiguous).toBe(true);
    expect(r.candidates?.sort()).toEqual(['billing-a', 'billing-b']);
  });

  it('a queue declared a moment ago is answered from its record, not left unreported', async () => {
    await client.putQueue(vhost, 'orders.fresh', { kind: 'quorum' });
    const r = await whichJson('orders.fresh');
    expect(r.answer).toBe('reported');
    expect(r.inForce?.name).toBe('audit-fallback');
    expect(r.operatorPolicy?.name).toBe('orders-ceiling');
  });

  it('"" is the default exchange; a queue cannot have that name', async () => {
    const r = await whichJson('');
    expect(r.object).toMatchObject({ name: '', kind: 'exchange', exists: true });
    const q = await rmq('which', '', '--kind', 'quorum', '--vhost', vhost);
    expect(q.code).toBe(2);
    expect(q.err).toMatch(/empty name is the default exchange/);
  });

  it('--kind picks the object type to answer for', async () => {
    const r = await whichJson('orders.audit', '--kind', 'stream');
    expect(r.answer).toBe('not-reported');
    expect(r.object).toMatchObject({ kind: 'stream', exists: false });
  });
});

describe('rmq which refusals', () => {
  it('a name of 256 bytes: exit 2, nothing asked', async () => {
    const r = await rmq('which', 'a'.repeat(256), '--vhost', vhost, '--json');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/256 bytes/);
  });

  it.each([
    [['which'], /needs the name/],
    [['which', 'a', 'b'], /one name/],
    [['which', 'a', '--kind', 'topic'], /--kind/],
    [['which', 'a', '--colour', 'red'], /Unknown flag --colour/],
    [['which', 'a', '--vhost'], /--vhost needs a value/],
    [['frobnicate'], /Unknown command/],
    [['which', 'a', '--env', 'nope'], /Unknown environment nope/],
  ])('%j: exit 2 with what to fix', async (argv, message) => {
    const r = await rmq(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('an unreachable broker: exit 3, not-asked, nothing claimed', async () => {
    let out = '';
    const code = await runCli(
      ['which', 'orders.audit', '--json'],
      { RMQ_URL: 'http://127.0.0.1:9' },
      { out: (s) => (out += s), err: () => {} },
    );
    expect(code).toBe(3);
    const r = JSON.parse(out) as WhichResult;
    expect(r).toMatchObject({
      answer: 'not-asked',
      why: 'unreachable',
      inForce: null,
      operatorPolicy: null,
      alsoMatched: [],
      nothingGoverns: false,
    });
    expect(r.effective).toEqual({});
  });

  it("an identity that may not read the vhost: exit 3, and the broker's reason", async () => {
    await withUser({ tags: ['management'] }, async ({ user, password }) => {
      let out = '';
      const code = await runCli(
        ['which', 'orders.audit', '--vhost', vhost, '--json'],
        { ...env, RMQ_USER: user, RMQ_PASSWORD: password },
        { out: (s) => (out += s), err: () => {} },
      );
      expect(code).toBe(3);
      expect(JSON.parse(out)).toMatchObject({
        answer: 'not-asked',
        why: 'forbidden',
        detail: expect.stringMatching(/not authorised/),
        inForce: null,
      });
    });
  });

  it('the operator policies are readable by any identity that may read the object (both brokers here)', async () => {
    // Measured on 3.10.8 and 4.0.5: listing a vhost's operator policies takes a management tag and
    // a permission entry there, as reading its queues does. The 401 below comes from elsewhere.
    await withUser({ tags: ['policymaker'], vhost }, async ({ user, password }) => {
      const other = new ManagementClient({ url: brokerUrl(), user, password });
      try {
        expect((await other.listOperatorPolicies(vhost)).map((p) => p.name)).toEqual(['orders-ceiling']);
      } finally {
        await other.close();
      }
    });
  });

  it('a 401 on the operator policies list alone: answered with what the broker reports, and told what could not be read', async () => {
    const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
    fake.setRoute((url) => url.startsWith('/api/operator-policies/'), {
      kind: 'respond',
      status: 401,
      body: { error: 'not_authorised', reason: 'Not administrator user' },
    });
    const ask = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runCli(
        ['which', 'orders.audit', '--vhost', vhost, ...argv],
        { ...env, RMQ_URL: fake.url },
        { out: (s) => (out += s), err: (s) => (err += s) },
      );
      expect(code, err).toBe(0);
      return out;
    };
    try {
      const r = await waitFor(
        async () => {
          const j = JSON.parse(await ask('--json')) as WhichResult;
          return j.answer === 'reported' && j.operatorPolicySource === 'broker' ? j : undefined;
        },
        { deadlineMs: 30_000, intervalMs: 500, what: 'the broker to report orders.audit' },
      );
      expect(r.inForce?.name).toBe('audit-retention');
      // The broker reports the operator policy by name, though its definition could not be listed.
      expect(r.operatorPolicy?.name).toBe('orders-ceiling');
      expect(r.operatorPoliciesNotRead).toBe('Not administrator user');
      expect(r.effective['message-ttl']).toEqual({ value: 600_000, from: 'operator-policy' });
      expect(r.disagreements).toEqual([]);
      expect(await ask()).toMatch(/Not read: The operator policies could not be read/);
    } finally {
      await fake.close();
    }
  });

  it('refused credentials: exit 3', async () => {
    const code = await runCli(
      ['which', 'x'],
      { ...env, RMQ_PASSWORD: 'wrong' },
      { out: () => {}, err: () => {} },
    );
    expect(code).toBe(3);
  });

  it('a vhost that does not exist: refused (exit 2), not "nothing governs", naming the close one', async () => {
    const r = await rmq('which', 'x', '--vhost', `${vhost}-missing`);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`Vhost "${vhost}-missing" does not exist; did you mean "${vhost}"?`);
  });
});
