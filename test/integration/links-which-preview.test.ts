/**
 * `which` and `preview` on links, on 4.3.6 (scripts/broker-4.3): `which` names the object's links
 * (should run, runs, on which node); `preview` says which links a change starts, beside those it
 * stops. The upstream is another vhost of the same broker.
 */
import { describe, expect, it } from 'vitest';
import { parsePreview } from '../../src/commands/preview/index.ts';
import { which } from '../../src/commands/which/index.ts';
import { preview } from '../../src/preview/index.ts';
import { brokerCredentials, waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn, type TestBroker } from '../support/brokers.ts';

const { up } = await brokersUp();
const broker = up.find((b) => b.label === 'rabbitmq-4.3');

describe.skipIf(!broker)('links in which and preview (4.3.6)', () => {
  const b = broker as TestBroker;

  it('which names the links of a federated exchange; preview names the links a change starts and stops', async () => {
    await inVhostOn(b, 'links-wp-up', async (upVhost, upClient) => {
      await inVhostOn(b, 'links-wp', async (vhost, client) => {
        const { user, password } = brokerCredentials();
        const port = new URL(b.amqpUrl).port;
        await upClient.putExchange(upVhost, 'orders', 'fanout');
        await client.putParameter('federation-upstream', vhost, 'dc1', {
          uri: `amqp://${user}:${password}@localhost:${port}/${encodeURIComponent(upVhost)}`,
        });
        await client.putExchange(vhost, 'orders', 'fanout');
        await client.putExchange(vhost, 'refunds', 'fanout');

        const create = await preview(
          parsePreview(
            [
              'create',
              'fed',
              '--pattern',
              '^orders$',
              '--apply-to',
              'exchanges',
              '--definition',
              '{"federation-upstream":"dc1"}',
              '--vhost',
              vhost,
            ],
            {},
          ),
          client,
        );
        if (create.status !== 'answered') throw new Error(JSON.stringify(create));
        expect(create.objects.find((o) => o.name === 'orders')?.impact).toContainEqual({
          effect: 'link-starts',
          key: 'federation-upstream',
          upstream: 'dc1',
        });
        expect(create.summary.impact.links?.starts).toEqual({ count: 1, names: ['orders'] });
        // Starting a link is nothing to fear.
        expect(create.summary.impact.count).toBe(0);

        await client.putPolicy('user', {
          vhost,
          name: 'fed',
          pattern: '^orders$',
          applyTo: 'exchanges',
          priority: 0,
          definition: { 'federation-upstream': 'dc1' },
        });
        const asked = await waitFor(
          async () => {
            const r = await which({ name: 'orders', vhost }, client);
            return r.links?.[0]?.state === 'running' ? r : undefined;
          },
          { deadlineMs: 30_000, what: 'the link of orders to run' },
        );
        expect(asked.links).toEqual([
          expect.objectContaining({
            kind: 'exchange',
            object: 'orders',
            upstream: 'dc1',
            policy: 'fed',
            expected: true,
            node: expect.stringMatching(/@/),
          }),
        ]);
        expect((await which({ name: 'refunds', vhost }, client)).links).toBeUndefined();

        const widen = await preview(
          parsePreview(['edit', 'fed', '--pattern', '^refunds$', '--vhost', vhost], {}),
          client,
        );
        if (widen.status !== 'answered') throw new Error(JSON.stringify(widen));
        expect(widen.summary.impact.links).toEqual({
          starts: { count: 1, names: ['refunds'] },
          stops: { count: 1, names: ['orders'] },
        });
      });
    });
  }, 90_000);
});
