/**
 * `lint`'s durability kinds on each real broker, through the terminal's entry point: one world
 * holding each cause (transient messages in a durable queue, a transient exchange bound to a
 * durable queue (not a cause from 4.3, which keeps it at a restart), a transient queue bound to a
 * durable exchange, an automatic-acknowledgement consumer on a queue with a dead-letter target, a
 * quorum queue whose delivery limit drops for want of a dead-letter target, a quorum queue of one
 * replica, an exchange that routed a message nowhere) and a clean twin of each; every kind finds
 * exactly its objects, with the severity of the contract. `lint FILE` leaves these kinds out.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from 'rabbitmq-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LintResult } from '../../src/commands/lint/index.ts';
import { waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn } from '../support/brokers.ts';
import { runRmq } from '../support/cli.ts';
import { amqpUrl } from '../support/messages.ts';
import { brokerEnv } from '../support/path.ts';

const { up } = await brokersUp();

describe.each(up.map((b) => [b.label, b] as const))('lint durability kinds on %s', (_label, broker) => {
  let vhost = '';
  let done: () => void = () => {};
  const kept = new Promise<void>((resolve) => {
    done = resolve;
  });
  let running: Promise<unknown>;
  const v4 = broker.label !== 'machine';

  beforeAll(async () => {
    await new Promise<void>((resolve, reject) => {
      running = inVhostOn(broker, 'lintdur', async (v) => {
        vhost = v;
        try {
          const conn = new Connection({ url: amqpUrl(broker, v), retryLow: 200, retryHigh: 1000 });
          conn.on('error', () => undefined);
          await conn.onConnect(10_000, true);
          const ch = await conn.acquire();
          await ch.exchangeDeclare({ exchange: 'dlx', type: 'fanout', durable: true });
          // The dead letters routed somewhere: a target with no binding drops them (qq.hollow).
          await ch.queueDeclare({ queue: 'dead', durable: true });
          await ch.queueBind({ queue: 'dead', exchange: 'dlx' });
          await ch.exchangeDeclare({ exchange: 'tx', type: 'direct', durable: false });
          await ch.exchangeDeclare({ exchange: 'dx', type: 'direct', durable: true });
          await ch.exchangeDeclare({ exchange: 'ae', type: 'fanout', durable: true });
          await ch.exchangeDeclare({
            exchange: 'safe',
            type: 'direct',
            durable: true,
            arguments: { 'alternate-exchange': 'ae' },
          });
          // What an alternate exchange takes is routed: 'ae' has a queue bound; 'hollow' none, so
          // 'leaky' drops what it cannot route as surely as without one.
          await ch.queueDeclare({ queue: 'caught', durable: true });
          await ch.queueBind({ queue: 'caught', exchange: 'ae' });
          await ch.exchangeDeclare({ exchange: 'hollow', type: 'fanout', durable: true });
          await ch.exchangeDeclare({
            exchange: 'leaky',
            type: 'direct',
            durable: true,
            arguments: { 'alternate-exchange': 'hollow' },
          });
          await ch.queueDeclare({ queue: 'mixed', durable: true });
          await ch.queueDeclare({ queue: 'persistent', durable: true });
          await ch.queueDeclare({ queue: 'routed', durable: true });
          await ch.queueBind({ queue: 'routed', exchange: 'tx', routingKey: 'k' });
          await ch.queueBind({ queue: 'persistent', exchange: 'dx', routingKey: 'k' });
          // A transient queue on a durable route: a restart takes it on every version.
          await ch.queueDeclare({ queue: 'temp', durable: false });
          await ch.queueBind({ queue: 'temp', exchange: 'dx', routingKey: 'temp' });
          await ch.queueDeclare({
            queue: 'dl.auto',
            durable: true,
            arguments: { 'x-dead-letter-exchange': 'dlx' },
          });
          await ch.queueDeclare({
            queue: 'dl.manual',
            durable: true,
            arguments: { 'x-dead-letter-exchange': 'dlx' },
          });
          await ch.queueDeclare({
            queue: 'qq.nodl',
            durable: true,
            arguments: { 'x-queue-type': 'quorum', ...(v4 ? {} : { 'x-delivery-limit': 3 }) },
          });
          await ch.queueDeclare({
            queue: 'qq.dl',
            durable: true,
            arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'dlx', 'x-delivery-limit': 3 },
          });
          // A dead-letter target that exists and routes nothing: the poison message is dropped.
          await ch.queueDeclare({
            queue: 'qq.hollow',
            durable: true,
            arguments: {
              'x-queue-type': 'quorum',
              'x-dead-letter-exchange': 'hollow',
              'x-delivery-limit': 3,
            },
          });
          await ch.confirmSelect();
          for (let i = 0; i < 2; i++) await ch.basicPublish({ routingKey: 'mixed', durable: false }, 't');
          await ch.basicPublish({ routingKey: 'mixed', durable: true }, 'p');
          await ch.basicPublish({ routingKey: 'persistent', durable: true }, 'p');
          await ch.basicPublish({ exchange: 'dx', routingKey: 'nowhere' }, 'u');
          await ch.basicPublish({ exchange: 'safe', routingKey: 'nowhere', durable: true }, 'u');
          await ch.basicPublish({ exchange: 'leaky', routingKey: 'nowhere' }, 'u');
          const consumers = await conn.acquire();
          await consumers.basicConsume({ queue: 'dl.auto', noAck: true }, () => undefined);
          await consumers.basicQos({ prefetchCount: 5 });
          await consumers.basicConsume({ queue: 'dl.manual', noAck: false }, () => undefined);
          resolve();
          await kept;
          await consumers.close();
          await ch.close();
          await conn.close();
        } catch (e) {
          reject(e);
        }
      });
    });
  }, 60_000);

  afterAll(async () => {
    done();
    await running;
  }, 60_000);

  const lintJson = async (...args: string[]): Promise<LintResult> => {
    const r = await runRmq(brokerEnv(broker), ['lint', ...args, '--json']);
    expect([0, 4], r.err).toContain(r.code);
    return JSON.parse(r.out) as LintResult;
  };

  it('finds each cause once, with its objects and severity, and none in the clean twins', async () => {
    const r = await waitFor(
      async () => {
        const l = await lintJson('--vhost', vhost);
        expect(l.findings.find((f) => f.kind === 'transient-messages')?.objects).toEqual(['mixed']);
        expect(l.findings.find((f) => f.kind === 'auto-ack-dead-letter')?.objects).toEqual(['dl.auto']);
        expect(l.findings.find((f) => f.kind === 'unroutable-dropped')?.objects).toEqual(['dx', 'leaky']);
        return l;
      },
      { deadlineMs: 45_000, intervalMs: 1000, what: 'the statistics of the lint world' },
    );
    const kinds = Object.fromEntries(
      r.findings.filter((f) => f.policy === '').map((f) => [f.kind, [f.severity, f.objects]]),
    );
    expect(kinds).toEqual({
      'poison-dropped': ['error', ['qq.hollow', 'qq.nodl']],
      'transient-messages': ['warning', ['mixed']],
      // 4.3.6 keeps a transient exchange and its bindings at a restart (path-restarts.test.ts).
      'transient-route': ['warning', broker.label === 'rabbitmq-4.3' ? ['temp'] : ['temp', 'tx']],
      'auto-ack-dead-letter': ['warning', ['dl.auto']],
      'replicas-fragile': ['warning', ['qq.dl', 'qq.hollow', 'qq.nodl']],
      'unroutable-dropped': ['warning', ['dx', 'leaky']],
    });
    const transient = r.findings.find((f) => f.kind === 'transient-messages');
    expect(transient).toMatchObject({ lost: 2, operator: false, objectCount: 1 });
    expect(r.findings[0]?.severity).toBe('error');
  });

  it('lint FILE leaves the durability kinds out: a file holds no messages, consumers or counters', async () => {
    const file = join(tmpdir(), `${vhost}.json`);
    writeFileSync(file, JSON.stringify({ policies: [] }));
    const r = await lintJson(file, '--vhost', vhost);
    expect(r.findings.filter((f) => f.policy === '')).toEqual([]);
  });
});
