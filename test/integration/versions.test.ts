/**
 * The same policies, explained by the rules of the version the bot reads from each broker: the
 * machine's 3.10, the 4.0 of scripts/broker-4 and the 4.3 of scripts/broker-4.3. Then what 4.3
 * does differently, each release-note claim checked on the running 4.3 (and, where 4.0 differs,
 * on 4.0 beside it). Where a note and the broker disagreed, the broker is what is asserted.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { which } from '../../src/commands/which/which.ts';
import { acceptedApplyTo } from '../../src/policy/keys.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, reportedWhich, uniqueName } from '../support/broker.ts';
import { BROKERS, brokersUp, clientFor, inVhostOn, type TestBroker } from '../support/brokers.ts';
import { built, repoRoot } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { holdOneDelivery } from '../support/messages.ts';

const { up } = await brokersUp();
const three = up.find((b) => b.label === 'machine');
const four = up.find((b) => b.label === 'rabbitmq-4');
const fourThree = up.find((b) => b.label === 'rabbitmq-4.3');

async function explainOn(broker: (typeof BROKERS)[number]) {
  const client = clientFor(broker);
  const vhost = uniqueName('ver');
  await client.putVhost(vhost);
  try {
    const { version } = await client.overview();
    const put = (name: string, priority: number, definition: Record<string, unknown>, applyTo = 'queues') =>
      client.putPolicy('user', { vhost, name, pattern: '^cq$', applyTo, priority, definition });
    // 3.x vetoes queue-leader-locator for classic queues; 4.0 uses it. 3.12.7+ vetoes max-in-memory-length.
    await put('lead', 5, { 'queue-leader-locator': 'client-local' });
    await put('mem', 3, { 'max-in-memory-length': 10 });
    await put('base', 0, { 'max-length': 1 });
    let scoped: string;
    try {
      await put('classic-only', -1, { 'max-length': 2 }, 'classic_queues');
      scoped = 'accepted';
    } catch (err) {
      scoped = err instanceof RabbitError && err.code === 'refused-by-broker' ? 'refused' : 'error';
    }
    await client.putQueue(vhost, 'cq', { kind: 'classic' });
    const answer = await reportedWhich(client, vhost, 'cq');
    return { version, answer, scoped };
  } finally {
    await client.deleteVhost(vhost);
    await client.close();
  }
}

describe.skipIf(!three || !four)('one set of policies, two broker versions', () => {
  it('3.10 and 4.0 govern the same classic queue with different policies, and the bot explains each', async () => {
    const [old, neu] = await Promise.all([explainOn(three!), explainOn(four!)]);
    expect(old.version.major).toBe(3);
    expect(neu.version.major).toBe(4);

    // 3.10: queue-leader-locator refuses `lead` for a classic queue; `mem` wins.
    expect(old.answer.inForce?.name).toBe('mem');
    expect(old.answer.alsoMatched).toEqual([
      { name: 'lead', priority: 5, reason: 'refused-key', keys: ['queue-leader-locator'], unanchored: false },
      { name: 'base', priority: 0, reason: 'lower-priority', unanchored: false },
    ]);
    expect(old.answer.disagreements).toEqual([]);
    // 4.0: classic queues take queue-leader-locator and refuse max-in-memory-length.
    expect(neu.answer.inForce?.name).toBe('lead');
    expect(neu.answer.alsoMatched).toEqual([
      { name: 'mem', priority: 3, reason: 'refused-key', keys: ['max-in-memory-length'], unanchored: false },
      { name: 'base', priority: 0, reason: 'lower-priority', unanchored: false },
      { name: 'classic-only', priority: -1, reason: 'lower-priority', unanchored: false },
    ]);
    expect(neu.answer.disagreements).toEqual([]);

    // apply-to classic_queues: refused by 3.10, accepted by 4.0 — as the bot's table says.
    expect(old.scoped).toBe(acceptedApplyTo(old.version).includes('classic_queues') ? 'accepted' : 'refused');
    expect(neu.scoped).toBe(acceptedApplyTo(neu.version).includes('classic_queues') ? 'accepted' : 'refused');
    expect([old.scoped, neu.scoped]).toEqual(['refused', 'accepted']);
  }, 90_000);
});

describe.skipIf(!four || !fourThree)('4.3 beside 4.0: the same set of policies', () => {
  it('4.3 governs the classic queue as 4.0 does, and the bot explains it the same way', async () => {
    const [neu, latest] = await Promise.all([explainOn(four!), explainOn(fourThree!)]);
    expect(latest.version).toMatchObject({ major: 4, minor: 3 });
    expect(latest.answer.inForce?.name).toBe('lead');
    expect(latest.answer.alsoMatched).toEqual(neu.answer.alsoMatched);
    expect(latest.answer.disagreements).toEqual([]);
    expect(latest.scoped).toBe('accepted');
  }, 90_000);
});

if (!three || !four) {
  describe('one set of policies, two broker versions', () => {
    it.skip(`SKIPPED: needs both brokers up (${BROKERS.map((b) => b.url).join(', ')})`, () => {});
  });
}

// --- what 4.3 does differently, on the running 4.3 -------------------------------------------

/** A management GET as it comes, for the fields the bot's client does not ask for. */
async function getRaw(broker: TestBroker, path: string): Promise<unknown> {
  const { user, password } = brokerCredentials();
  const res = await request(new URL(`/api${path}`, broker.url), {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${await res.body.text()}`);
  return res.body.json();
}

/** null when the broker took the policy, its reason when it refused. */
async function brokerRefusal(put: () => Promise<unknown>): Promise<string | null> {
  try {
    await put();
    return null;
  } catch (err) {
    if (err instanceof RabbitError && err.code === 'refused-by-broker') return err.reason ?? 'refused';
    throw err;
  }
}

/** The parts of the CLI's --json documents these tests read (INTERFACE.md section 2). */
interface CliJson {
  refusals?: { code: string; key?: string; message: string }[];
  warnings?: { code: string; message: string }[];
  inForce?: { name: string } | null;
  effective?: Record<string, { value: unknown; from: string }>;
  summary?: { risks: { risk: string; count: number; keys: string[] }[] };
}

/** The built CLI (bin/rmq.js) against this broker, --json, parsed. */
async function rmqJson(
  broker: TestBroker,
  argv: readonly string[],
): Promise<{ code: number; json: CliJson }> {
  const { bin } = await built();
  const { user, password } = brokerCredentials();
  const run = await runBuiltRmq(
    bin,
    [...argv, '--json'],
    { RMQ_URL: broker.url, RMQ_USER: user, RMQ_PASSWORD: password },
    repoRoot,
  );
  return { code: run.code, json: JSON.parse(run.out) as CliJson };
}

const QML = { 'queue-master-locator': 'client-local' };

/** `rmq preview create` of a policy setting queue-master-locator, through the built CLI. */
const previewQml = (broker: TestBroker, vhost: string) =>
  rmqJson(broker, [
    'preview',
    'create',
    'qml-new',
    '--vhost',
    vhost,
    '--pattern',
    '^q',
    '--definition',
    JSON.stringify(QML),
  ]);

describe.skipIf(!fourThree)('RabbitMQ 4.3, measured on the running broker', () => {
  const latest = fourThree!;

  it('refuses queue-master-locator in user and operator policies; the preview refuses it too and names queue-leader-locator', async () => {
    await inVhostOn(latest, 'v43', async (vhost, client) => {
      for (const layer of ['user', 'operator'] as const) {
        const reason = await brokerRefusal(() =>
          client.putPolicy(layer, {
            vhost,
            name: `qml-${layer}`,
            pattern: '^q',
            applyTo: 'queues',
            priority: 0,
            definition: QML,
          }),
        );
        expect(reason).toMatch(/deprecated queue-master-locator argument is not permitted/);
      }
      const { code, json } = await previewQml(latest, vhost);
      expect(code).toBe(2);
      expect(json.refusals).toEqual([
        expect.objectContaining({
          code: 'deprecated-key',
          key: 'queue-master-locator',
          message: expect.stringMatching(/use queue-leader-locator \("client-local" or "balanced"\) instead/),
        }),
      ]);
      // What to use instead is taken: both of its values, in a user policy (never an operator one).
      for (const value of ['client-local', 'balanced']) {
        const definition = { 'queue-leader-locator': value };
        expect(
          await brokerRefusal(() =>
            client.putPolicy('user', {
              vhost,
              name: `qll-${value}`,
              pattern: '^q',
              applyTo: 'queues',
              priority: 0,
              definition,
            }),
          ),
        ).toBeNull();
      }
    });
  }, 90_000);

  it.skipIf(!four)(
    '4.0 takes queue-master-locator, and the preview only warns that 4.3 refuses it',
    async () => {
      await inVhostOn(four!, 'v43', async (vhost, client) => {
        expect(
          await brokerRefusal(() =>
            client.putPolicy('user', {
              vhost,
              name: 'qml',
              pattern: '^q',
              applyTo: 'queues',
              priority: 0,
              definition: QML,
            }),
          ),
        ).toBeNull();
        const { code, json } = await previewQml(four!, vhost);
        expect(code).toBe(0);
        expect(json.warnings).toEqual(
          expect.arrayContaining([
            expect.objectContaining({
              code: 'deprecated-key',
              message: expect.stringMatching(/RabbitMQ 4\.3 and later refuse it by default/),
            }),
          ]),
        );
      });
    },
    90_000,
  );

  it('classic queue version 1 is gone from queue arguments; x-queue-mode is still taken (the note says refused), and the policy keys pass', async () => {
    const declare = (client: LabClient, vhost: string, name: string, args: Record<string, unknown>) =>
      brokerRefusal(() => client.putQueue(vhost, name, { kind: 'classic', arguments: args }));
    await inVhostOn(latest, 'v43', async (vhost, client) => {
      expect(await declare(client, vhost, 'v1', { 'x-queue-version': 1 })).toMatch(
        /unsupported queue version '1'/,
      );
      expect(await declare(client, vhost, 'v2', { 'x-queue-version': 2 })).toBeNull();
      expect(await declare(client, vhost, 'lazy', { 'x-queue-mode': 'lazy' })).toBeNull();
      expect(await declare(client, vhost, 'qml', { 'x-queue-master-locator': 'client-local' })).toMatch(
        /queue_master_locator.*deprecated/s,
      );
      for (const definition of [{ 'queue-mode': 'lazy' }, { 'queue-version': 1 }]) {
        expect(
          await brokerRefusal(() =>
            client.putPolicy('user', {
              vhost,
              name: Object.keys(definition)[0]!,
              pattern: '^none$',
              applyTo: 'queues',
              priority: 0,
              definition,
            }),
          ),
        ).toBeNull();
      }
    });
    if (four) {
      await inVhostOn(four, 'v43', async (vhost, client) => {
        expect(await declare(client, vhost, 'v1', { 'x-queue-version': 1 })).toBeNull();
        expect(await declare(client, vhost, 'qml', { 'x-queue-master-locator': 'client-local' })).toBeNull();
      });
    }
  }, 90_000);

  it('with statistics disabled, the queue record carries policy, operator policy and effective definition ({} under no policy); 4.0 leaves them out', async () => {
    const setUp = async (broker: TestBroker, vhost: string, client: LabClient) => {
      await client.putPolicy('operator', {
        vhost,
        name: 'cap',
        pattern: '^capped$',
        applyTo: 'queues',
        priority: 0,
        definition: { 'max-length': 7 },
      });
      await client.putQueue(vhost, 'capped', { kind: 'quorum' });
      await client.putQueue(vhost, 'bare', { kind: 'classic' });
      const list = (await getRaw(
        broker,
        `/queues/${encodeURIComponent(vhost)}?disable_stats=true`,
      )) as Record<string, unknown>[];
      return new Map(list.map((q) => [q.name, q]));
    };
    await inVhostOn(latest, 'v43', async (vhost, client) => {
      // Read once, at once: the record, not statistics, so no waiting.
      const queues = await setUp(latest, vhost, client);
      expect(queues.get('capped')).toMatchObject({
        policy: null,
        operator_policy: 'cap',
        effective_policy_definition: { 'max-length': 7 },
      });
      expect(queues.get('bare')).toMatchObject({
        policy: null,
        operator_policy: null,
        effective_policy_definition: {},
      });
    });
    if (four) {
      await inVhostOn(four, 'v43', async (vhost, client) => {
        const queues = await setUp(four, vhost, client);
        for (const q of queues.values()) {
          expect(q).not.toHaveProperty('operator_policy');
          expect(q).not.toHaveProperty('effective_policy_definition');
        }
      });
    }
  }, 90_000);

  it('a change of delivery-limit alone reaches an existing quorum queue at once (its record)', async () => {
    await inVhostOn(latest, 'v43', async (vhost, client) => {
      const put = (limit: number) =>
        client.putPolicy('user', {
          vhost,
          name: 'dl',
          pattern: '^qq$',
          applyTo: 'quorum_queues',
          priority: 0,
          definition: { 'delivery-limit': limit },
        });
      await put(5);
      await client.putQueue(vhost, 'qq', { kind: 'quorum' });
      const limitNow = async () => {
        const list = (await getRaw(latest, `/queues/${encodeURIComponent(vhost)}?disable_stats=true`)) as {
          delivery_limit?: number;
        }[];
        return list[0]?.delivery_limit;
      };
      expect(await limitNow()).toBe(5);
      await put(2);
      expect(await limitNow()).toBe(2);
      const r = await which({ name: 'qq', vhost }, client);
      expect(r.effective['delivery-limit']).toEqual({ value: 2, from: 'policy' });
    });
  }, 60_000);

  it('equal priorities under Khepri: the broker picks one, the bot says the tie is undefined and names both', async () => {
    await inVhostOn(latest, 'v43', async (vhost, client) => {
      for (const name of ['tie-a', 'tie-b', 'tie-c'])
        await client.putPolicy('user', {
          vhost,
          name,
          pattern: '^shared$',
          applyTo: 'queues',
          priority: 4,
          definition: { 'max-length': 10 },
        });
      await client.putQueue(vhost, 'shared', { kind: 'classic' });
      const r = await reportedWhich(client, vhost, 'shared');
      expect(r.ambiguous).toBe(true);
      const picked = r.inForce?.name;
      expect(['tie-a', 'tie-b', 'tie-c']).toContain(picked);
      expect(r.alsoMatched.map((m) => [m.name, m.reason]).sort()).toEqual(
        ['tie-a', 'tie-b', 'tie-c'].filter((n) => n !== picked).map((n) => [n, 'same-priority']),
      );
      expect(r.disagreements).toEqual([]);
    });
  }, 60_000);

  it('the 4.3 quorum keys: which explains them, a quorum queue times its consumer out, and a preview of losing them names their risks', async () => {
    await inVhostOn(latest, 'v43', async (vhost, client) => {
      const definition = {
        'delayed-retry-type': 'failed',
        'delayed-retry-min': 1000,
        'delayed-retry-max': 60_000,
        'consumer-timeout': 1000,
        'consumer-disconnected-timeout': 30_000,
      };
      await client.putPolicy('user', {
        vhost,
        name: 'retry',
        pattern: '^work\\.',
        applyTo: 'queues',
        priority: 1,
        definition,
      });
      await client.putQueue(vhost, 'work.qq', { kind: 'quorum' });
      await client.putQueue(vhost, 'work.cq', { kind: 'classic' });
      const { json: explained } = await rmqJson(latest, ['which', 'work.qq', '--vhost', vhost]);
      expect(explained.inForce?.name).toBe('retry');
      expect(explained.effective).toMatchObject(
        Object.fromEntries(Object.entries(definition).map(([k, value]) => [k, { value, from: 'policy' }])),
      );
      // No type refuses these keys: the classic queue is governed by the same policy.
      const { json: classic } = await rmqJson(latest, ['which', 'work.cq', '--vhost', vhost]);
      expect(classic.inForce?.name).toBe('retry');

      // The quorum queue applies consumer-timeout: its unacknowledged consumer is cancelled.
      expect(await holdOneDelivery(latest, vhost, 'work.qq', 'quorum', 30_000)).toEqual({
        outcome: 'cancelled',
      });

      const { code, json: preview } = await rmqJson(latest, ['preview', 'delete', 'retry', '--vhost', vhost]);
      expect(code).toBe(0);
      const risks = Object.fromEntries((preview.summary?.risks ?? []).map((r) => [r.risk, r]));
      expect(risks['retry-delay']).toMatchObject({
        count: 1,
        keys: ['delayed-retry-max', 'delayed-retry-min', 'delayed-retry-type'],
      });
      // 4.3 times out consumers of quorum queues only: the classic queue loses no consumer timeout.
      expect(risks['consumer-timeout']).toMatchObject({
        count: 1,
        keys: ['consumer-disconnected-timeout', 'consumer-timeout'],
      });
    });
  }, 90_000);
});
