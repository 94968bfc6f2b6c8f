/**
 * A policy's consumer-timeout on the running brokers: which queue types it times a consumer out
 * on, by version, and what `which` says about it there.
 *
 * 4.0 checks each channel's oldest unacknowledged delivery against the queue's consumer timeout
 * on the channel's tick, whatever the queue type, and closes the channel. 4.3 checks nothing on
 * the channel: a quorum queue times its consumer out itself (basic.cancel), and a classic queue
 * or a stream never does. The tick is 60 s by default; the chroot brokers run it at 1 s
 * (CHANNEL_TICK_MS in scripts/lib/chroot-broker.bash), so 4.0's check bites within about 2 s of
 * a 1 s timeout, and a consumer that holds its delivery for 10 s on 4.3 has outlived five of
 * those windows while, on the same broker under the same policy, a quorum queue's consumer is
 * cancelled: the policy is in force there and the timeout is live.
 */
import { describe, expect, it } from 'vitest';
import type { WhichResult } from '../../src/commands/which/which.ts';
import { WHICH_WORDS } from '../../src/commands/words.ts';
import { formatVersion } from '../../src/policy/types.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, reportedWhich } from '../support/broker.ts';
import { brokersUp, inVhostOn, type TestBroker } from '../support/brokers.ts';
import { built, repoRoot } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { holdOneDelivery } from '../support/messages.ts';

const { up } = await brokersUp();
const four = up.find((b) => b.label === 'rabbitmq-4');
const fourThree = up.find((b) => b.label === 'rabbitmq-4.3');

const TIMEOUT_MS = 1000;
/** How long a consumer 4.3 leaves alone is watched: five times 4.0's tick plus the timeout. */
const WATCH_MS = 10_000;
/** Long enough for a check that does come, on a loaded machine. */
const DEADLINE_MS = 20_000;

const QUEUES = [
  ['held.cq', 'classic'],
  ['held.qq', 'quorum'],
  ['held.sq', 'stream'],
] as const;

/** One policy with consumer-timeout over a queue of each type. */
async function setUp(client: LabClient, vhost: string): Promise<void> {
  await client.putPolicy('user', {
    vhost,
    name: 'ct',
    pattern: '^held\\.',
    applyTo: 'queues',
    priority: 0,
    definition: { 'consumer-timeout': TIMEOUT_MS },
  });
  for (const [name, kind] of QUEUES) await client.putQueue(vhost, name, { kind });
}

/** Each queue's consumer watched at once: `watchMs` per queue name. */
function holdAll(broker: TestBroker, vhost: string, watchMs: (name: string) => number) {
  return Promise.all(
    QUEUES.map(async ([name, kind]) => [
      name,
      await holdOneDelivery(broker, vhost, name, kind, watchMs(name)),
    ]),
  ).then(Object.fromEntries);
}

/** What the built `rmq which` prints about the queue's consumer-timeout, as text and as JSON. */
async function whatRmqSays(broker: TestBroker, vhost: string, name: string) {
  const { bin } = await built();
  const { user, password } = brokerCredentials();
  const env = { RMQ_URL: broker.url, RMQ_USER: user, RMQ_PASSWORD: password };
  const run = (more: string[]) => runBuiltRmq(bin, ['which', name, '--vhost', vhost, ...more], env, repoRoot);
  const [text, json] = await Promise.all([run([]), run(['--json'])]);
  expect([text.code, json.code]).toEqual([0, 0]);
  const effective = (JSON.parse(json.out) as WhichResult).effective['consumer-timeout'];
  const line = text.out.split('\n').find((l) => l.includes('Effective:'));
  return { effective, line };
}

const timedOut = { outcome: 'channel-closed', reason: expect.stringMatching(/timed out/) };

describe.skipIf(!four)('consumer-timeout on 4.0: the channel checks every queue type', () => {
  it('closes the channel of a classic, a quorum and a stream consumer that holds a delivery past the timeout', async () => {
    await inVhostOn(four!, 'ct40', async (vhost, client) => {
      await setUp(client, vhost);
      const outcomes = await holdAll(four!, vhost, () => DEADLINE_MS);
      expect(outcomes).toEqual({ 'held.cq': timedOut, 'held.qq': timedOut, 'held.sq': timedOut });
      // The bot says the key does what it does there, on every type.
      for (const [name] of QUEUES) {
        const { effective, line } = await whatRmqSays(four!, vhost, name);
        expect(effective).toEqual({ value: TIMEOUT_MS, from: 'policy' });
        expect(line).toContain(`consumer-timeout=${TIMEOUT_MS} (policy)`);
      }
    });
  }, 60_000);
});

describe.skipIf(!fourThree)('consumer-timeout on 4.3: quorum queues only', () => {
  it('cancels the quorum queue consumer and leaves the classic and stream consumers holding their deliveries', async () => {
    await inVhostOn(fourThree!, 'ct43', async (vhost, client) => {
      await setUp(client, vhost);
      // The policy governs all three: no type refuses the key.
      for (const [name] of QUEUES)
        expect((await reportedWhich(client, vhost, name)).inForce?.name).toBe('ct');
      const outcomes = await holdAll(fourThree!, vhost, (name) =>
        name === 'held.qq' ? DEADLINE_MS : WATCH_MS,
      );
      expect(outcomes).toEqual({
        'held.cq': { outcome: 'held' },
        'held.qq': { outcome: 'cancelled' },
        'held.sq': { outcome: 'held' },
      });
      // The bot says so: in force on all three, of no effect on the classic queue and the stream.
      const version = (await client.overview()).version;
      for (const [name, kind] of QUEUES) {
        const { effective, line } = await whatRmqSays(fourThree!, vhost, name);
        if (kind === 'quorum') {
          expect(effective).toEqual({ value: TIMEOUT_MS, from: 'policy' });
          expect(line).toContain(`consumer-timeout=${TIMEOUT_MS} (policy)`);
        } else {
          expect(effective).toEqual({ value: TIMEOUT_MS, from: 'policy', noEffect: true });
          expect(line).toContain(
            `consumer-timeout=${TIMEOUT_MS} (policy; ${WHICH_WORDS.noEffect(kind, formatVersion(version))})`,
          );
        }
      }
    });
  }, 90_000);
});
