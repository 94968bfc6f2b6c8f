/**
 * `path`'s verdicts proven by making each failure happen without a restart
 * (src/policy/durability/verdict.ts), on every broker and the cluster (inside its lock): an
 * automatic-acknowledgement consumer killed mid-batch loses what it held, a manual one's return;
 * an unroutable publish is dropped without an alternate exchange and kept with one; a message
 * returned past the delivery limit (its consumer's channel closed on it) is dropped without a
 * dead-letter target and dead-lettered with one (on 4.x also the default limit of 20, unset); a
 * reject with requeue counts on 3.10.8 and 4.0.5, not 4.3.6. Restarts and a node's loss:
 * path-restarts.test.ts; random worlds: path-differential.test.ts.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { PathResult } from '../../src/commands/path/index.ts';
import { closeSoon, connect, held } from '../support/amqpLab.ts';
import { vhostOnEveryNode, waitFor } from '../support/broker.ts';
import { brokersUp, CLUSTER, inVhostOn, reachable, type TestBroker } from '../support/brokers.ts';
import { CLUSTER_WAIT_MS, lockCluster } from '../support/clusterLock.ts';
import { amqpUrl } from '../support/messages.ts';
import { pathJson, pathWhen } from '../support/path.ts';

const { up } = await brokersUp();
const clusterUp = (await reachable(CLUSTER)) || CLUSTER.required;

/**
 * A consumer in a child process (prefetch 5; automatic acknowledgement or none at all), counting
 * what it is given, until killed with SIGKILL: a crash, as the broker sees one.
 */
function consumerProcess(
  url: string,
  queue: string,
  noAck: boolean,
): { got: () => number; kill: () => void } {
  const script = `
    import { Connection } from 'rabbitmq-client';
    const conn = new Connection(${JSON.stringify(url)});
    conn.on('error', () => {});
    const ch = await conn.acquire();
    await ch.basicQos({ prefetchCount: 5 });
    await ch.basicConsume({ queue: ${JSON.stringify(queue)}, noAck: ${noAck} }, () => process.stdout.write('m\\n'));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let got = 0;
  child.stdout?.on('data', (d: Buffer) => {
    got += d
      .toString()
      .split('\n')
      .filter((l) => l === 'm').length;
  });
  return { got: () => got, kill: () => child.kill('SIGKILL') };
}

/**
 * A vhost of this test's own on `broker`; on the cluster, inside its lock (other suites stop its
 * nodes) and started on every node before the test's first connection.
 */
async function inVhost(
  broker: TestBroker,
  prefix: string,
  fn: (vhost: string) => Promise<void>,
): Promise<void> {
  if (broker !== CLUSTER) return inVhostOn(broker, prefix, fn);
  const release = await lockCluster();
  try {
    await inVhostOn(broker, prefix, async (vhost) => {
      await vhostOnEveryNode(CLUSTER.urls as readonly string[], vhost);
      await fn(vhost);
    });
  } finally {
    release();
  }
}

describe.each([...up, ...(clusterUp ? [CLUSTER] : [])].map((b) => [b.label, b] as const))(
  'failures made to happen on %s',
  (_label, broker) => {
    const v4 = broker.label !== 'machine';
    // A reject with requeue counts toward the delivery limit before 4.3 (the cluster runs 4.3.6).
    const rejectCounts = broker.label !== 'rabbitmq-4.3' && broker !== CLUSTER;

    it(
      'a consumer crash: automatic acknowledgement loses what it held, manual acknowledgement gets it back',
      async () => {
        await inVhost(broker, 'crash', async (vhost) => {
          const conn = await connect(broker, vhost);
          try {
            const ch = await conn.acquire();
            for (const q of ['auto', 'manual']) {
              await ch.queueDeclare({ queue: q, durable: true });
              await ch.confirmSelect();
              for (let i = 0; i < 20; i++) await ch.basicPublish({ routingKey: q, durable: true }, `m${i}`);
            }
            // Each consumer in a process of its own, killed (SIGKILL) mid-batch as a crash kills it.
            const consumers = ['auto', 'manual'].map((q) =>
              consumerProcess(amqpUrl(broker, vhost), q, q === 'auto'),
            );
            await waitFor(() => consumers.every((c) => c.got() >= 5), {
              what: 'deliveries to both consumers',
            });
            const auto = await pathWhen(broker, vhost, 'auto', 0, (p) => p.out.autoAck === 1);
            const manual = await waitFor(
              async () => {
                const p = await pathJson(broker, vhost, 'manual');
                return p.out.consumers === 1 ? p : undefined;
              },
              { what: 'the manual consumer in path' },
            );
            expect(auto.survives['consumer-crash']).toMatchObject({ holds: false, lost: null });
            expect(manual.survives['consumer-crash']).toMatchObject({ holds: true, lost: 0 });
            for (const c of consumers) c.kill();
            // Nothing was acknowledged by hand: the manual queue has all 20 back, the automatic one none.
            expect(await waitFor(async () => ((await held(conn, 'manual')) === 20 ? 20 : undefined))).toBe(
              20,
            );
            expect(await held(conn, 'auto')).toBe(0);
          } finally {
            await closeSoon(conn);
          }
        });
      },
      CLUSTER_WAIT_MS + 120_000,
    );

    it(
      'an unroutable publish: dropped without an alternate exchange, kept with one',
      async () => {
        await inVhost(broker, 'unrt', async (vhost) => {
          const conn = await connect(broker, vhost);
          try {
            const ch = await conn.acquire();
            await ch.exchangeDeclare({ exchange: 'ae', type: 'fanout', durable: true });
            await ch.queueDeclare({ queue: 'caught', durable: true });
            await ch.queueBind({ queue: 'caught', exchange: 'ae' });
            await ch.exchangeDeclare({ exchange: 'bare', type: 'direct', durable: true });
            await ch.exchangeDeclare({
              exchange: 'safe',
              type: 'direct',
              durable: true,
              arguments: { 'alternate-exchange': 'ae' },
            });
            await ch.queueDeclare({ queue: 'target', durable: true });
            await ch.queueBind({ queue: 'target', exchange: 'bare', routingKey: 'k' });
            await ch.queueBind({ queue: 'target', exchange: 'safe', routingKey: 'k' });
            // A fanout exchange with a binding routes every message, whatever its key; one without, none.
            await ch.exchangeDeclare({ exchange: 'fan', type: 'fanout', durable: true });
            await ch.exchangeDeclare({ exchange: 'lonely', type: 'fanout', durable: true });
            await ch.queueDeclare({ queue: 'fanned', durable: true });
            await ch.queueBind({ queue: 'fanned', exchange: 'fan' });
            const bare = await pathJson(broker, vhost, 'bare', '--kind', 'exchange');
            const safe = await pathJson(broker, vhost, 'safe', '--kind', 'exchange');
            expect(bare.survives.unroutable.holds).toBe(false);
            expect(safe.survives.unroutable.holds).toBe(true);
            const fan = await pathJson(broker, vhost, 'fan', '--kind', 'exchange');
            const lonely = await pathJson(broker, vhost, 'lonely', '--kind', 'exchange');
            const fanned = await pathJson(broker, vhost, 'fanned');
            expect(fan.survives.unroutable).toMatchObject({ holds: true, lost: 0 });
            expect(fanned.survives.unroutable.holds, fanned.survives.unroutable.why).toBe(true);
            expect(lonely.survives.unroutable.holds).toBe(false);
            await ch.confirmSelect();
            await ch.basicPublish({ exchange: 'bare', routingKey: 'nowhere', durable: true }, 'lost');
            await ch.basicPublish({ exchange: 'safe', routingKey: 'nowhere', durable: true }, 'kept');
            expect(await waitFor(async () => ((await held(conn, 'caught')) === 1 ? 1 : undefined))).toBe(1);
            expect(await held(conn, 'target')).toBe(0);
            // Whatever the key, the fanout exchange routes it; the lonely one drops it.
            await ch.basicPublish({ exchange: 'fan', routingKey: 'nowhere', durable: true }, 'routed');
            await ch.basicPublish({ exchange: 'lonely', routingKey: 'nowhere', durable: true }, 'dropped');
            expect(await waitFor(async () => ((await held(conn, 'fanned')) === 1 ? 1 : undefined))).toBe(1);
            // The exchange's own counters show what it routed nowhere, as path reads them.
            const after = await waitFor(
              async () => {
                const p = await pathJson(broker, vhost, 'bare', '--kind', 'exchange');
                return p.in.exchanges[0]?.unrouted === 1 ? p : undefined;
              },
              { what: "bare's unrouted counter" },
            );
            expect(after.in.exchanges[0]).toMatchObject({
              name: 'bare',
              alternateExchange: null,
              unrouted: 1,
            });
          } finally {
            await closeSoon(conn);
          }
        });
      },
      CLUSTER_WAIT_MS + 120_000,
    );

    it(
      'a poison message: dropped past the delivery limit without a dead-letter target, dead-lettered with one',
      async () => {
        await inVhost(broker, 'poison', async (vhost) => {
          const conn = await connect(broker, vhost);
          try {
            const ch = await conn.acquire();
            await ch.exchangeDeclare({ exchange: 'dlx', type: 'fanout', durable: true });
            await ch.queueDeclare({ queue: 'dead', durable: true });
            await ch.queueBind({ queue: 'dead', exchange: 'dlx' });
            const quorum = { 'x-queue-type': 'quorum' };
            const queues: Record<string, Record<string, unknown>> = {
              'limit.nodl': { ...quorum, 'x-delivery-limit': 2 },
              'limit.dl': { ...quorum, 'x-delivery-limit': 2, 'x-dead-letter-exchange': 'dlx' },
              // Nothing sets a limit: 4.x's default of 20, 3.x's none.
              unset: quorum,
            };
            await ch.confirmSelect();
            for (const [q, args] of Object.entries(queues)) {
              await ch.queueDeclare({ queue: q, durable: true, arguments: args });
              await ch.basicPublish({ routingKey: q, durable: true }, 'poison');
            }
            const predicted: Record<string, PathResult> = {};
            for (const q of Object.keys(queues)) predicted[q] = await pathWhen(broker, vhost, q, 1);
            expect(predicted['limit.nodl']?.queue).toMatchObject({ deliveryLimit: 2, poison: 'dropped' });
            expect(predicted['limit.dl']?.queue).toMatchObject({ deliveryLimit: 2, poison: 'dead-lettered' });
            expect(predicted.unset?.queue).toMatchObject(
              v4 ? { deliveryLimit: 20, poison: 'dropped' } : { deliveryLimit: null, poison: 'redelivered' },
            );
            // Returned again and again, as by a consumer that crashes on it: taken, its channel closed unacknowledged.
            // A return reaches the quorum queue's log a moment after the channel closed, so an empty get is asked
            // again for a while before the message counts as gone (dropped or dead-lettered).
            const returnAll = async (q: string, times: number) => {
              let returned = 0;
              for (let i = 0; i < times; i++) {
                const c = await conn.acquire();
                let m = await c.basicGet({ queue: q });
                for (const until = Date.now() + 3_000; !m && Date.now() < until; ) {
                  await new Promise((resolve) => setTimeout(resolve, 100));
                  m = await c.basicGet({ queue: q });
                }
                await c.close();
                if (!m) break;
                returned++;
              }
              return returned;
            };
            expect(await returnAll('limit.nodl', 10)).toBe(3);
            expect(await returnAll('limit.dl', 10)).toBe(3);
            expect(await held(conn, 'limit.nodl')).toBe(0);
            expect(await waitFor(async () => ((await held(conn, 'dead')) === 1 ? 1 : undefined))).toBe(1);
            const unset = await returnAll('unset', 25);
            if (v4) {
              expect(unset).toBe(21);
              expect(await held(conn, 'unset')).toBe(0);
            } else {
              expect(unset).toBe(25);
              // The last return reaches the quorum queue's log a moment after its channel closed.
              expect(await waitFor(async () => ((await held(conn, 'unset')) === 1 ? 1 : undefined))).toBe(1);
            }
            // A reject with requeue: counted toward the limit on 3.10.8 and 4.0.5, not on 4.3.6.
            await ch.queueDeclare({
              queue: 'nacked',
              durable: true,
              arguments: { 'x-queue-type': 'quorum' as const, 'x-delivery-limit': 2 },
            });
            await ch.basicPublish({ routingKey: 'nacked', durable: true }, 'poison');
            const nacked = await pathWhen(broker, vhost, 'nacked', 1);
            let rejected = 0;
            for (let i = 0; i < 10; i++) {
              const m = await ch.basicGet({ queue: 'nacked' });
              if (!m) break;
              ch.basicNack({ deliveryTag: m.deliveryTag, requeue: true });
              rejected++;
            }
            const counts = rejectCounts;
            expect(rejected).toBe(counts ? 3 : 10);
            expect(nacked.survives.poison.why.includes('a reject with requeue does not')).toBe(!counts);
            expect(await held(conn, 'dead')).toBe(1);
          } finally {
            await closeSoon(conn);
          }
        });
      },
      CLUSTER_WAIT_MS + 180_000,
    );
  },
);
