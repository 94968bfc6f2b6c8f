/**
 * The definitions exports as each real broker writes them, read by src/definitions/read.ts: a
 * vhost given one policy and one operator policy (and a queue, which is counted, not managed),
 * exported whole (GET /api/definitions) and alone (GET /api/definitions/VHOST). The facts the
 * reader relies on are asserted on the raw export first, so a broker that writes otherwise
 * fails here, not in a plan.
 */
import { describe, expect, it } from 'vitest';
import { readDefinitions } from '../../src/definitions/read.ts';
import { brokerCredentials, uniqueName } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';
import { management } from '../support/messages.ts';

const { up } = await brokersUp();

async function exported(
  broker: TestBroker,
  path: string,
): Promise<{ text: string; json: Record<string, unknown> }> {
  const { user, password } = brokerCredentials();
  const res = await fetch(new URL(path, broker.url), {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return { text, json: JSON.parse(text) as Record<string, unknown> };
}

type Entry = Record<string, unknown>;

describe.each(up.map((b) => [b.label, b] as [string, TestBroker]))(
  'definitions exports on %s',
  (_label, broker) => {
    it('the one-vhost and the whole export read to the same policy and operator policy', async () => {
      const client = clientFor(broker);
      const vhost = uniqueName('defs');
      await client.putVhost(vhost);
      try {
        const api = management(broker, vhost);
        await api.policy('px', '^a', { 'max-length': 3 }, { priority: 1 });
        const e = encodeURIComponent;
        const { user, password } = brokerCredentials();
        const put = await fetch(new URL(`/api/operator-policies/${e(vhost)}/opx`, broker.url), {
          method: 'PUT',
          headers: {
            authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            pattern: '^a',
            'apply-to': 'queues',
            priority: 1,
            definition: { 'max-length': 3 },
          }),
          signal: AbortSignal.timeout(30_000),
        });
        expect(put.status).toBeLessThan(300);
        await api.queue('a1', 'classic');

        const one = await exported(broker, `/api/definitions/${e(vhost)}`);
        const version = String(one.json.rabbit_version);
        const policies = one.json.policies as Entry[];
        const parameters = one.json.parameters as Entry[];
        // The facts: operator policies are parameters; 3.10 writes vhost on a one-vhost export, 4.x does not.
        expect(parameters.find((p) => p.name === 'opx')?.component).toBe('operator_policy');
        if (version.startsWith('3.')) {
          expect(policies[0]?.vhost).toBe(vhost);
        } else {
          expect(policies[0]).not.toHaveProperty('vhost');
          expect(parameters[0]).not.toHaveProperty('vhost');
          expect(one.json.original_vhost_name).toBe(vhost);
        }

        const want = [
          ['user', vhost, 'px', '^a', 'queues', 1, { 'max-length': 3 }],
          ['operator', vhost, 'opx', '^a', 'queues', 1, { 'max-length': 3 }],
        ];
        const shape = (text: string, v?: string) => {
          const r = readDefinitions(text, v === undefined ? {} : { vhost: v });
          if (!r.ok) throw new Error(r.problem);
          return {
            policies: r.file.policies.map((p) => [
              p.layer,
              p.policy.vhost,
              p.policy.name,
              p.policy.pattern,
              p.policy.applyTo,
              p.policy.priority,
              p.policy.definition,
            ]),
            ignored: r.file.ignored,
          };
        };
        expect(shape(one.text, vhost)).toEqual({ policies: want, ignored: { queues: 1 } });
        // Without --vhost: the 3.10 export names it on each policy, 4.x in original_vhost_name.
        expect(shape(one.text).policies).toEqual(want);

        const whole = await exported(broker, '/api/definitions');
        const mine = shape(whole.text, vhost);
        expect(mine.policies).toEqual(want);
        expect(mine.ignored.queues ?? 0).toBeGreaterThanOrEqual(1);
      } finally {
        await client.deleteVhost(vhost);
        await client.close();
      }
    });
  },
);
