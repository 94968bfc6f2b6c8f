import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import { which } from '../../src/commands/which/which.ts';
import { whichView } from '../../src/slack/views/which.ts';
import { whichText } from '../../src/terminal/which.ts';
import { brokerCredentials, reportedWhich, waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn, type TestBroker } from '../support/brokers.ts';
import { renderedText } from '../support/fakeSlack.ts';

/**
 * The lab's stream `orders.events`: the operator policy `orders-ceiling` (^orders\., queues)
 * matches its name and sets only keys a stream refuses (message-ttl, max-length). The broker
 * reports no operator policy on it — on every broker, measured here — and `which` says why:
 * the operator policy matched and does not apply, as it says of the user policies.
 */

const { up } = await brokersUp();

/** The management API's own record of the queue, as it sends it. */
async function rawQueue(broker: TestBroker, vhost: string, name: string): Promise<Record<string, unknown>> {
  const { user, password } = brokerCredentials();
  const res = await request(
    `${broker.url.replace(/\/+$/, '')}/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}`,
    { headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } },
  );
  expect(res.statusCode).toBe(200);
  return (await res.body.json()) as Record<string, unknown>;
}

describe.each(up.map((b) => [b.label, b] as const))(
  'which: an operator policy a stream refuses (%s)',
  (_label, broker) => {
    it('the broker reports no operator policy on the stream; which names orders-ceiling and its refused keys', async () => {
      await inVhostOn(broker, 'opref', async (vhost, client) => {
        await setUpLab(client, vhost);
        // The quorum queue beside it reports orders-ceiling: the statistics carry the operator layer.
        const quorum = await reportedWhich(client, vhost, 'orders.processing');
        expect(quorum.operatorPolicy?.name).toBe('orders-ceiling');

        // The statistics carry the policy fields a few seconds after the stream is declared.
        const raw = await waitFor(
          async () => {
            const q = await rawQueue(broker, vhost, 'orders.events');
            return 'operator_policy' in q ? q : undefined;
          },
          { deadlineMs: 30_000, intervalMs: 500, what: 'the broker to report the policies of orders.events' },
        );
        expect(raw).toHaveProperty('operator_policy', null);
        expect(raw).toHaveProperty('policy', null);
        const r = await which({ name: 'orders.events', vhost }, client);
        expect(r.answer).toBe('reported');
        expect(r.object.kind).toBe('stream');
        expect(r.operatorPolicySource).toBe('broker');
        expect(r.operatorPolicy).toBeNull();
        expect(r.nothingGoverns).toBe(true);
        expect(r.disagreements).toEqual([]);
        expect(r.operatorAlsoMatched).toEqual([
          {
            name: 'orders-ceiling',
            priority: 0,
            reason: 'refused-key',
            keys: ['max-length', 'message-ttl'],
            unanchored: false,
          },
        ]);

        const text = whichText(r);
        expect(text).toContain('Operator policies that match it, and do not apply:');
        expect(text).toContain(
          '- orders-ceiling (priority 0): sets a key a stream refuses, so it never governs it (max-length, message-ttl)',
        );
        expect(text).toContain(
          'Nothing governs this object: no user policy and no operator policy applies to it.',
        );
        expect(text).not.toContain('matches it.');

        const slack = renderedText({ ...whichView(r) });
        expect(slack).toContain('*Operator policies that match it, and do not apply:*');
        expect(slack).toMatch(
          /orders-ceiling.*priority 0.*sets a key a stream refuses.*max-length.*message-ttl/,
        );
        expect(slack).not.toContain('no operator policy matches it');
      });
    });
  },
);
