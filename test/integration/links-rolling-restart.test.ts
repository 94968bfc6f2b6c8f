/**
 * What the three-node 4.3.6 cluster (`scripts/cluster`) does to federation links across a rolling
 * restart (`scripts/cluster restart`), and that `links` says what the broker reports: an exchange
 * and a quorum queue on the cluster federated from 4.0.5 (`scripts/broker-4`). After the restart,
 * whatever the broker did to each link (restarted, moved, lost), the bot's answer agrees with the
 * broker's listing, and a link the bot calls running carries a message published upstream.
 * The cluster to this suite alone (clusterLock.ts); docs/broker-facts.md records what was seen.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { links } from '../../src/commands/links/index.ts';
import { linkKey } from '../../src/links/index.ts';
import { vhostOnEveryNode, waitFor } from '../support/broker.ts';
import { brokersUp, CLUSTER, inVhostOn, type TestBroker } from '../support/brokers.ts';
import { repoRoot } from '../support/built.ts';
import { aloneOnCluster } from '../support/clusterHooks.ts';
import { amqpUrl, messages } from '../support/messages.ts';

const { up } = await brokersUp({ cluster: true });
const upstreamBroker = up.find((b) => b.label === 'rabbitmq-4');
const cluster = up.find((b) => b.label === CLUSTER.label);

function rollingRestart(): Promise<{ code: number; out: string }> {
  return new Promise((done) =>
    execFile(join(repoRoot, 'scripts/cluster'), ['restart'], { timeout: 600_000 }, (err, out, errOut) =>
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: out + errOut }),
    ),
  );
}

describe.skipIf(!upstreamBroker || !cluster)('links across a rolling restart of the cluster', () => {
  aloneOnCluster(true);
  const upB = upstreamBroker as TestBroker;
  const downB = cluster as TestBroker;

  it("the bot's answer agrees with the broker's listing and with the messages, after every node restarted", async () => {
    await inVhostOn(upB, 'links-roll-up', async (upVhost, upClient) => {
      await inVhostOn(downB, 'links-roll', async (vhost, client) => {
        await vhostOnEveryNode(
          ['http://127.0.0.1:15691', 'http://127.0.0.1:15692', 'http://127.0.0.1:15693'],
          vhost,
        );
        await upClient.putExchange(upVhost, 'orders', 'fanout');
        await upClient.putQueue(upVhost, 'work', { kind: 'classic' });
        await client.putParameter({
          component: 'federation-upstream',
          vhost: vhost,
          name: 'dc1',
          value: {
            uri: amqpUrl(upB, upVhost),
          },
        });
        await client.putPolicy('user', {
          vhost,
          name: 'fed',
          pattern: '^(orders|work)$',
          applyTo: 'all',
          priority: 0,
          definition: { 'federation-upstream': 'dc1' },
        });
        await client.putExchange(vhost, 'orders', 'fanout');
        await client.putQueue(vhost, 'work', { kind: 'quorum' });
        const running = () =>
          waitFor(
            async () => {
              const r = await links({ vhost }, client, { env: 'test' });
              return r.counts.running === 2 && r.counts.expected === 2 ? r : undefined;
            },
            { deadlineMs: 120_000, intervalMs: 1000, what: 'both links to run' },
          );
        const before = await running();
        const nodesBefore = Object.fromEntries(before.links.map((l) => [linkKey(l), l.node]));

        const restart = await rollingRestart();
        expect(restart.code, restart.out).toBe(0);

        // Settled: the same answer twice, 5 s apart. Whatever it is, the bot and the broker agree.
        let last = '';
        const settled = await waitFor(
          async () => {
            const [r, listed] = await Promise.all([
              links({ vhost }, client, { env: 'test' }),
              client.federationLinkList(vhost),
            ]);
            const now = JSON.stringify(r.links.map((l) => [linkKey(l), l.state, l.node]));
            const same = now === last;
            last = now;
            if (!Array.isArray(listed)) return false;
            const reported = listed.map((l) => `${l.kind} ${l.object} ${l.status} ${l.node}`).sort();
            const said = r.links
              .filter((l) => l.state !== 'missing')
              .map((l) => `${l.kind} ${l.object} ${l.status} ${l.node}`)
              .sort();
            expect(said).toEqual(reported);
            return same ? r : undefined;
          },
          { deadlineMs: 180_000, intervalMs: 5000, what: 'the links to settle after the rolling restart' },
        );
        const after = Object.fromEntries(settled.links.map((l) => [linkKey(l), `${l.state} on ${l.node}`]));
        console.log(
          `links before the rolling restart: ${JSON.stringify(nodesBefore)}; after: ${JSON.stringify(after)}`,
        );

        // A link the bot calls running carries a message published upstream.
        const queueLink = settled.links.find((l) => l.kind === 'queue');
        if (queueLink?.state === 'running') {
          const upM = await messages(upB, upVhost);
          const { Connection } = await import('rabbitmq-client');
          const conn = new Connection({ url: amqpUrl(downB, vhost) });
          conn.on('error', () => undefined);
          const received: string[] = [];
          try {
            await conn.onConnect(10_000, true);
            // The queue link fetches from upstream only for a consumer of the downstream queue.
            const consumer = conn.createConsumer(
              { queue: 'work', queueOptions: { queue: 'work', passive: true } },
              (msg) => {
                received.push(String(msg.body));
              },
            );
            try {
              await upM.publish('work', 1);
              await waitFor(() => received.length > 0, {
                deadlineMs: 30_000,
                what: 'a message of the upstream queue through the running queue link',
              });
            } finally {
              await consumer.close();
            }
          } finally {
            await conn.close();
            await upM.close();
          }
        }
        const exchangeLink = settled.links.find((l) => l.kind === 'exchange');
        if (exchangeLink?.state === 'running') {
          const down = await messages(downB, vhost);
          const upM = await messages(upB, upVhost);
          try {
            await client.putQueue(vhost, 'seen', { kind: 'quorum' });
            const { Connection } = await import('rabbitmq-client');
            const conn = new Connection({
              url: (await import('../support/messages.ts')).amqpUrl(downB, vhost),
            });
            conn.on('error', () => undefined);
            await conn.onConnect(10_000, true);
            await conn.queueBind({ queue: 'seen', exchange: 'orders', routingKey: '' });
            await conn.close();
            await waitFor(
              async () => {
                await upM.tryPublish('orders', '');
                return (await down.count('seen')) > 0;
              },
              { deadlineMs: 30_000, intervalMs: 500, what: 'a message through the running exchange link' },
            );
          } finally {
            await down.close();
            await upM.close();
          }
        }
      });
    });
  }, 900_000);
});
