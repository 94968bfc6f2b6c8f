/**
 * What a queue does when its own x-argument and its policy set the same limit: the preview says
 * which value holds (src/policy/simulate/simulate.ts, argumentRule/valueInUse). Proven by behaviour on each
 * real broker: messages published past the limit, then counted by taking them off the queue.
 */
import { describe, expect, it } from 'vitest';
import { argumentRule, valueInUse } from '../../src/policy/arguments.ts';
import type { ObjectKind } from '../../src/policy/types.ts';
import { brokerCredentials, uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';

const { up } = await brokersUp();

function api(broker: TestBroker) {
  const { user, password } = brokerCredentials();
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return async (path: string, body: unknown): Promise<unknown> => {
    const res = await fetch(new URL(path, broker.url), {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
}

const CASES: { kind: Exclude<ObjectKind, 'exchange' | 'stream'>; argument: number; policy: number }[] = [
  { kind: 'classic', argument: 3, policy: 5 },
  { kind: 'classic', argument: 5, policy: 3 },
  { kind: 'quorum', argument: 3, policy: 5 },
  { kind: 'quorum', argument: 5, policy: 3 },
];

describe.each(up)('x-max-length beside a policy max-length ($label)', (broker) => {
  it.each(CASES)(
    '$kind queue, argument $argument, policy $policy: the bot says which holds, the queue agrees',
    async ({ kind, argument, policy }) => {
      const client = clientFor(broker);
      const post = api(broker);
      const vhost = uniqueName('args');
      const v = encodeURIComponent(vhost);
      await client.putVhost(vhost);
      try {
        const { version } = await client.overview();
        const rule = argumentRule('max-length', kind, version);
        expect(rule).toBeDefined();
        const predicted = valueInUse(rule!, 'max-length', argument, policy, version).value as number;
        await client.putQueue(vhost, 'q', { kind, arguments: { 'x-max-length': argument } });
        await client.putPolicy('user', {
          vhost,
          name: 'cap',
          pattern: '^q$',
          applyTo: 'queues',
          priority: 0,
          definition: { 'max-length': policy },
        });
        // The queue record takes the policy at once; the queue process applies it a moment later.
        const held = await waitFor(
          async () => {
            await post(`/api/queues/${v}/q/get`, {
              count: 100,
              ackmode: 'ack_requeue_false',
              encoding: 'auto',
            });
            for (let i = 0; i < 8; i++) {
              await post(`/api/exchanges/${v}/amq.default/publish`, {
                properties: {},
                routing_key: 'q',
                payload: `m${i}`,
                payload_encoding: 'string',
              });
            }
            const got = (await post(`/api/queues/${v}/q/get`, {
              count: 100,
              ackmode: 'ack_requeue_false',
              encoding: 'auto',
            })) as unknown[];
            return got.length === predicted ? got.length : undefined;
          },
          { deadlineMs: 20_000, intervalMs: 500, what: `the queue to hold ${predicted} messages` },
        );
        expect(held).toBe(Math.min(argument, policy));
      } finally {
        await client.deleteVhost(vhost);
        await client.close();
      }
    },
    60_000,
  );
});
