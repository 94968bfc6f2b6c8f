/**
 * `links` on a real federation between the brokers here: 4.0.5 (scripts/broker-4) the upstream,
 * 4.3.6 (scripts/broker-4.3) the downstream. Exchange and queue federation carry messages
 * published upstream to the downstream; every link the bot expects runs, and the failures the
 * runbook names are answered as the broker reports them: an upstream at a port that refuses, at
 * a vhost that does not exist, a policy naming an upstream that does not exist, a shovel whose
 * source queue is deleted. Then the terminal as users run it (`bin/rmq.js`): the exit codes, the
 * `--json` document, and no password on any of it.
 */
import { Connection } from 'rabbitmq-client';
import { describe, expect, it } from 'vitest';
import { links } from '../../src/commands/links/index.ts';
import type { LinkRow } from '../../src/links/index.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn, type TestBroker } from '../support/brokers.ts';
import { built, repoRoot } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { amqpUrl, messages } from '../support/messages.ts';

const { up } = await brokersUp();
const upstreamBroker = up.find((b) => b.label === 'rabbitmq-4');
const downstreamBroker = up.find((b) => b.label === 'rabbitmq-4.3');

/** A password that must never be shown: every URI the test writes carries it. */
const SECRET = 'Hunter2-links-secret';

/** A URI to `broker`'s AMQP port (or `port`), vhost `vhost`, with the SECRET as a second user's password. */
function uriTo(broker: TestBroker, vhost: string, port?: number): string {
  const { user, password } = brokerCredentials();
  const url = new URL(broker.amqpUrl);
  return `amqp://${encodeURIComponent(user)}:${encodeURIComponent(password)}@localhost:${port ?? url.port}/${encodeURIComponent(vhost)}`;
}

const key = (l: LinkRow) => `${l.kind} ${l.object} ${l.upstream ?? ''}`;

async function settledLinks(client: LabClient, vhost: string, done: (rows: LinkRow[]) => boolean) {
  return waitFor(
    async () => {
      const r = await links({ vhost }, client, { env: 'test' });
      return done([...r.links]) ? r : undefined;
    },
    { deadlineMs: 60_000, intervalMs: 1000, what: 'the links to settle' },
  );
}

describe.skipIf(!upstreamBroker || !downstreamBroker)('links: a federation from 4.0.5 into 4.3.6', () => {
  const upB = upstreamBroker as TestBroker;
  const downB = downstreamBroker as TestBroker;

  it('carries messages by exchange and queue federation; every expected link runs; each failure is named', async () => {
    await inVhostOn(upB, 'links-up', async (upVhost, upClient) => {
      await inVhostOn(downB, 'links-down', async (vhost, client) => {
        await upClient.putExchange(upVhost, 'orders', 'fanout');
        await upClient.putQueue(upVhost, 'work', { kind: 'classic' });
        await client.putParameter({
          component: 'federation-upstream',
          vhost: vhost,
          name: 'dc1',
          value: { uri: uriTo(upB, upVhost) },
        });
        // Port 1 refuses; the vhost does not exist on the upstream.
        await client.putParameter({
          component: 'federation-upstream',
          vhost: vhost,
          name: 'refused',
          value: {
            uri: `amqp://guest:${SECRET}@localhost:1/${encodeURIComponent(upVhost)}`,
          },
        });
        await client.putParameter({
          component: 'federation-upstream',
          vhost: vhost,
          name: 'novhost',
          value: {
            uri: uriTo(upB, 'rmqtest-no-such-vhost'),
          },
        });
        const policy = (
          name: string,
          pattern: string,
          applyTo: string,
          definition: Record<string, unknown>,
        ) => client.putPolicy('user', { vhost, name, pattern, applyTo, priority: 0, definition });
        await policy('fed-x', '^orders$', 'exchanges', { 'federation-upstream': 'dc1' });
        await policy('fed-q', '^work$', 'queues', { 'federation-upstream': 'dc1' });
        await policy('fed-all', '^bad$', 'exchanges', { 'federation-upstream-set': 'all' });
        await policy('fed-ghost', '^ghost$', 'exchanges', { 'federation-upstream': 'ghost' });
        for (const x of ['orders', 'bad', 'ghost']) await client.putExchange(vhost, x, 'fanout');
        await client.putQueue(vhost, 'work', { kind: 'classic' });
        await client.putQueue(vhost, 'seen', { kind: 'classic' });

        const r = await settledLinks(client, vhost, (rows) => {
          const state = new Map(rows.map((l) => [key(l), l.state]));
          return (
            state.get('exchange orders dc1') === 'running' &&
            state.get('queue work dc1') === 'running' &&
            state.get('exchange bad dc1') === 'running' &&
            state.get('exchange bad refused') === 'stopped' &&
            state.get('exchange bad novhost') === 'stopped'
          );
        });
        const byKey = new Map(r.links.map((l) => [key(l), l]));
        expect(byKey.get('exchange ghost ghost')).toMatchObject({
          state: 'missing',
          policy: 'fed-ghost',
          reason: 'the upstream "ghost" does not exist',
        });
        expect(byKey.get('exchange bad refused')?.reason).toBe('econnrefused');
        expect(byKey.get('exchange bad novhost')?.reason).toBe('not_allowed');
        expect(byKey.get('exchange orders dc1')?.node).toMatch(/@/);
        expect(r.counts).toMatchObject({ expected: 6, running: 3, missing: 1, stopped: 2, unexpected: 0 });

        // Messages published upstream arrive downstream: through the exchange's link to a queue
        // bound downstream, and through the queue's link to a consumer of the downstream queue.
        const down = new Connection({ url: amqpUrl(downB, vhost) });
        down.on('error', () => undefined);
        try {
          await down.onConnect(10_000, true);
          await down.queueBind({ queue: 'seen', exchange: 'orders', routingKey: '' });
          const received: string[] = [];
          const consumer = down.createConsumer({ queue: 'work', queueOptions: { durable: true } }, (msg) => {
            received.push(String(msg.body));
          });
          const upMessages = await messages(upB, upVhost);
          try {
            const downMessages = await messages(downB, vhost);
            try {
              // The exchange's binding reaches the upstream once the link has bound its queue.
              await waitFor(
                async () => {
                  await upMessages.tryPublish('orders', '');
                  return (await downMessages.count('seen')) > 0;
                },
                {
                  deadlineMs: 30_000,
                  intervalMs: 500,
                  what: 'a message published upstream to arrive through the exchange link',
                },
              );
            } finally {
              await downMessages.close();
            }
            await upMessages.publish('work', 1);
            await waitFor(() => received.length > 0, {
              what: 'a message of the upstream queue to reach the downstream consumer',
            });
          } finally {
            await upMessages.close();
            await consumer.close();
          }
        } finally {
          await down.close();
        }

        // Through what users run: exit 1 (some do not run), the document whole, no password anywhere.
        const { bin } = await built();
        const { user, password } = brokerCredentials();
        const env = { RMQ_URL: downB.url, RMQ_USER: user, RMQ_PASSWORD: password };
        const text = await runBuiltRmq(bin, ['links', '--vhost', vhost], env, repoRoot);
        expect(text.code, text.err).toBe(1);
        expect(text.out).toContain('MISSING    exchange "ghost" <- upstream "ghost"');
        const json = await runBuiltRmq(bin, ['links', '--vhost', vhost, '--json'], env, repoRoot);
        expect(json.code, json.err).toBe(1);
        const doc = JSON.parse(json.out) as Record<string, unknown>;
        expect(Object.keys(doc)).toEqual(
          expect.arrayContaining(['env', 'vhosts', 'links', 'risks', 'advisories', 'counts']),
        );
        expect(doc.risks).toContainEqual(
          expect.objectContaining({
            kind: 'upstream',
            name: 'refused',
            key: 'uri',
            value: `amqp://guest:***@localhost:1/${encodeURIComponent(upVhost)}`,
          }),
        );
        const failOn = await runBuiltRmq(
          bin,
          ['links', '--vhost', vhost, '--fail-on', 'missing'],
          env,
          repoRoot,
        );
        expect(failOn.code).toBe(4);
        const bad = await runBuiltRmq(bin, ['links', '--vhost', vhost, '--fail-on', 'never'], env, repoRoot);
        expect(bad.code).toBe(2);
        const away = await runBuiltRmq(
          bin,
          ['links', '--vhost', vhost],
          { ...env, RMQ_URL: 'http://127.0.0.1:1' },
          repoRoot,
        );
        expect(away.code).toBe(3);
        for (const run of [text, json, failOn, bad, away]) expect(run.out + run.err).not.toContain(SECRET);
        expect(text.out + json.out).not.toContain(password === 'guest' ? SECRET : password);
      });
    });
  }, 180_000);

  it('a shovel into the upstream broker: moves messages; its source queue deleted, the bot says what the broker does', async () => {
    const shovels = await fetch(new URL('/api/shovels', downB.url), {
      headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` },
    });
    // scripts/broker-4.3 enables rabbitmq_shovel_management: without it this proof would prove nothing.
    expect(shovels.status, 'GET /api/shovels on 4.3.6').toBe(200);
    await inVhostOn(upB, 'links-sh-up', async (upVhost, upClient) => {
      await inVhostOn(downB, 'links-sh', async (vhost, client) => {
        await upClient.putQueue(upVhost, 'landed', { kind: 'classic' });
        await client.putQueue(vhost, 'outbox', { kind: 'classic' });
        await client.putParameter({
          component: 'shovel',
          vhost: vhost,
          name: 'to-dc1',
          value: {
            'src-uri': uriTo(downB, vhost),
            'src-queue': 'outbox',
            'dest-uri': uriTo(upB, upVhost),
            'dest-queue': 'landed',
          },
        });
        await client.putParameter({
          component: 'shovel',
          vhost: vhost,
          name: 'broken',
          value: {
            'src-uri': `amqp://guest:${SECRET}@localhost:1`,
            'src-queue': 'outbox',
            'dest-uri': 'amqp://',
            'dest-queue': 'nowhere',
          },
        });
        await settledLinks(
          client,
          vhost,
          (rows) =>
            rows.some((l) => l.object === 'to-dc1' && l.state === 'running') &&
            rows.some((l) => l.object === 'broken' && l.state === 'stopped'),
        );
        const m = await messages(downB, vhost);
        await m.publish('outbox', 3);
        await m.close();
        const landed = await messages(upB, upVhost);
        await waitFor(async () => (await landed.count('landed')) === 3, {
          what: 'the shovel to move 3 messages',
        });
        await landed.close();

        // Its source queue deleted: whatever the broker does with the shovel, the bot says the same.
        await client.deleteQueue(vhost, 'outbox');
        await waitFor(
          async () => {
            const [reported, answer] = await Promise.all([
              client.shovelList(vhost),
              links({ vhost }, client, { env: 'test' }),
            ]);
            if (!Array.isArray(reported)) return false;
            const broker = reported.find((s) => s.name === 'to-dc1');
            const bot = answer.links.find((l) => l.object === 'to-dc1');
            if (!broker) return bot?.state === 'missing';
            const same = { running: 'running', starting: 'starting', terminated: 'stopped' }[broker.state];
            return (
              bot !== undefined && (bot.state === same || (same === 'starting' && bot.state === 'stuck'))
            );
          },
          { deadlineMs: 30_000, what: "the bot's answer to agree with the broker's report" },
        );
        const r = await links({ vhost }, client, { env: 'test' });
        expect(JSON.stringify(r)).not.toContain(SECRET);
        expect(r.links.find((l) => l.object === 'broken')).toMatchObject({
          kind: 'shovel',
          state: 'stopped',
          expected: true,
        });
      });
    });
  }, 120_000);
});
