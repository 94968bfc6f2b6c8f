/**
 * `path NAME` against each real broker, through the terminal's entry point: a chain set up over
 * AMQP (a durable exchange bound to a transient one bound to a durable classic queue holding
 * transient and persistent messages, a missing dead-letter target; a quorum queue with an
 * automatic-acknowledgement consumer; an unroutable publish), and every figure `path` gives
 * compared with what the broker reports or does. The failures themselves are made to happen in
 * path-failures.test.ts.
 */
import { Connection } from 'rabbitmq-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerCredentials, waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn, type TestBroker } from '../support/brokers.ts';
import { runRmq } from '../support/cli.ts';
import { amqpUrl } from '../support/messages.ts';
import { brokerEnv, pathJson } from '../support/path.ts';

const { up } = await brokersUp();

describe.each(up.map((b) => [b.label, b] as const))('path on %s', (_label, broker) => {
  let vhost = '';
  let conn: Connection;
  let done: () => void = () => {};
  const kept = new Promise<void>((resolve) => {
    done = resolve;
  });
  let running: Promise<unknown>;

  beforeAll(async () => {
    const ready = new Promise<void>((resolve, reject) => {
      running = inVhostOn(broker, 'path', async (v) => {
        vhost = v;
        try {
          conn = new Connection({ url: amqpUrl(broker, v), retryLow: 200, retryHigh: 1000 });
          conn.on('error', () => undefined);
          await conn.onConnect(10_000, true);
          const ch = await conn.acquire();
          await ch.exchangeDeclare({ exchange: 'top', type: 'fanout', durable: true });
          await ch.exchangeDeclare({ exchange: 'mid', type: 'direct', durable: false });
          await ch.exchangeBind({ destination: 'mid', source: 'top', routingKey: '' });
          await ch.queueDeclare({
            queue: 'orders',
            durable: true,
            arguments: { 'x-dead-letter-exchange': 'gone' },
          });
          await ch.queueBind({ queue: 'orders', exchange: 'mid', routingKey: 'k' });
          await ch.queueDeclare({ queue: 'quorum', durable: true, arguments: { 'x-queue-type': 'quorum' } });
          await ch.confirmSelect();
          for (let i = 0; i < 3; i++)
            await ch.basicPublish({ exchange: 'top', routingKey: 'k', durable: false }, 't');
          for (let i = 0; i < 2; i++)
            await ch.basicPublish({ exchange: 'mid', routingKey: 'k', durable: true }, 'p');
          await ch.basicPublish({ exchange: 'mid', routingKey: 'nowhere' }, 'u');
          const consumer = await conn.acquire();
          await consumer.basicConsume({ queue: 'quorum', noAck: true }, () => undefined);
          resolve();
          await kept;
          await consumer.close();
          await ch.close();
          await conn.close();
        } catch (e) {
          reject(e);
        }
      });
    });
    await ready;
  }, 60_000);

  afterAll(async () => {
    done();
    await running;
  }, 60_000);

  it('reads the chain of a classic queue: transient messages, a transient exchange, a missing dead-letter target', async () => {
    const r = await waitFor(
      async () => {
        const p = await pathJson(broker, vhost, 'orders');
        // Every figure here is a statistic, and they lag: asked until all are out.
        expect(p.queue.messages).toBe(5);
        expect(p.queue.transient).toBe(3);
        expect(p.in.exchanges.find((x) => x.name === 'mid')?.unrouted).toBe(1);
        if (broker.label !== 'machine') expect(p.in.unroutable.dropped).toBe(1);
        // The publishing channels and their confirm mode are statistics too.
        expect(p.in.publishers.channels).toBeGreaterThanOrEqual(1);
        expect(p.in.publishers.confirming).toBe(p.in.publishers.channels);
        return p;
      },
      { deadlineMs: 45_000, intervalMs: 500, what: 'the statistics of orders' },
    );
    expect(r.object).toMatchObject({ name: 'orders', kind: 'classic', durable: true, type: 'classic' });
    expect(r.queue.transient).toBe(3);
    expect(r.in.exchanges.map((x) => [x.name, x.durable])).toEqual([
      ['', true],
      ['mid', false],
      ['top', true],
    ]);
    expect(r.queue.deadLetter).toEqual({ exchange: 'gone', exists: false, routes: false });
    expect(r.survives.restart).toMatchObject({ holds: false, lost: 3 });
    expect(r.survives.restart.why).toContain('"mid" is transient');
    expect(r.survives.unroutable.holds).toBe(false);
    expect(r.survives.poison).toMatchObject({ holds: true });
    expect(r.queue.poison).toBe('redelivered');
    expect(
      Object.keys(r.survives)
        .slice(0, 3)
        .every((f) => r.survives[f as 'restart'].holds === false),
    ).toBe(true);
    // The vhost's counters: 3.10.8 leaves drop_unroutable at 0 after a drop (so: unknown); 4.x counts it.
    const { json } = await vhostStats(broker, vhost);
    if (broker.label === 'machine') {
      expect(json.message_stats?.drop_unroutable ?? 0).toBe(0);
      expect(r.in.unroutable.dropped).toBeNull();
    } else {
      expect(r.in.unroutable.dropped).toBe(1);
    }
    expect(r.in.publishers.channels).toBeGreaterThanOrEqual(1);
    expect(r.in.publishers.confirming).toBe(r.in.publishers.channels);
  });

  it('reads a quorum queue: its replicas, its automatic-acknowledgement consumer, its delivery limit', async () => {
    const r = await waitFor(
      async () => {
        const p = await pathJson(broker, vhost, 'quorum');
        expect(p.out.consumers).toBe(1);
        expect(p.queue.messages).not.toBeNull();
        return p;
      },
      { deadlineMs: 45_000, intervalMs: 500, what: 'the consumer of quorum' },
    );
    expect(r.out).toEqual({ consumers: 1, autoAck: 1, unlimitedPrefetch: 0 });
    expect(r.survives['consumer-crash']).toMatchObject({ holds: false, lost: null });
    expect(r.queue).toMatchObject({ replicas: 1, online: 1, transient: 0 });
    expect(r.survives.restart).toMatchObject({ holds: true, lost: 0 });
    expect(r.survives['node-loss'].holds).toBe(false);
    if (broker.label === 'machine') {
      expect(r.queue).toMatchObject({ deliveryLimit: null, poison: 'redelivered' });
    } else {
      expect(r.queue).toMatchObject({ deliveryLimit: 20, poison: 'dropped' });
      expect(r.survives.poison.holds).toBe(false);
    }
  });

  it('which ends with the one line pointing at what path flags, only where something is flagged', async () => {
    const which = async (name: string) => {
      const r = await runRmq(brokerEnv(broker), ['which', name, '--vhost', vhost, '--json']);
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.out) as { pathLine?: string };
    };
    const orders = await waitFor(async () => (await which('orders')).pathLine, {
      what: 'the line of orders',
    });
    expect(orders).toBe('3 transient messages: `path` for the whole chain');
    const text = await runRmq(brokerEnv(broker), ['which', 'orders', '--vhost', vhost]);
    expect(text.out).toContain('3 transient messages: `path` for the whole chain');
    const quorum = await which('quorum');
    expect(quorum.pathLine).toBe(
      broker.label === 'machine'
        ? 'Does not hold: node-loss, consumer-crash: `path` for the whole chain'
        : 'Does not hold: node-loss, consumer-crash, poison: `path` for the whole chain',
    );
    expect((await which('top')).pathLine).toBeUndefined();
  });

  it('reads an exchange, and says a name nothing has is missing', async () => {
    const x = await pathJson(broker, vhost, 'top', '--kind', 'exchange');
    expect(x.object).toMatchObject({ name: 'top', kind: 'exchange', durable: true });
    expect(x.survives.restart).toMatchObject({ holds: true, lost: 0 });
    const missing = await pathJson(broker, vhost, 'ordres');
    expect(missing.answer).toBe('missing');
    expect(missing.didYouMean?.map((d) => d.name)).toContain('orders');
  });
});

async function vhostStats(b: TestBroker, vhost: string) {
  const { user, password } = brokerCredentials();
  const res = await fetch(new URL(`/api/vhosts/${encodeURIComponent(vhost)}`, b.url), {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    signal: AbortSignal.timeout(10_000),
  });
  return { json: (await res.json()) as { message_stats?: { drop_unroutable?: number } } };
}
