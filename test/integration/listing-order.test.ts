/**
 * The order the broker lists a vhost's queues and exchanges in, unasked: by name, byte by byte
 * (the management API's default sort is vhost then name). The bench's management double
 * (bench/fakeManagement.ts) serves its listings in that order, and what a whole-vhost pass costs
 * depends on it (objects of one prefix come together), so the order is checked on each broker
 * rather than assumed: names created in a shuffled order, mixed case, digits and accents.
 */
import { describe, expect, it } from 'vitest';
import { brokersUp, inVhostOn } from '../support/brokers.ts';

const { up } = await brokersUp();

const NAMES = [
  'svc2.orders.10',
  'svc10.orders.1',
  'svc2.orders.9',
  'Svc1.billing',
  'svc1.billing',
  'svc1-billing',
  'svc1_billing',
  'éclair',
  'zeta',
  'a',
  'A.b',
  'svc2.orders.1',
  'svc1.audit',
];

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe.each(up)('listings come in name order ($label)', (broker) => {
  it('queues and exchanges, whatever order they were declared in', async () => {
    await inVhostOn(broker, 'order', async (vhost, client) => {
      for (const name of NAMES) {
        await client.putQueue(vhost, name, { kind: 'classic' });
        await client.putExchange(vhost, `x.${name}`, 'direct');
      }
      const queues: string[] = [];
      for await (const q of client.streamQueuesLive(vhost)) queues.push(q.queue.name);
      const exchanges: string[] = [];
      for await (const e of client.streamExchanges(vhost)) exchanges.push(e.name);
      expect(queues).toEqual([...NAMES].sort(byBytes));
      expect(exchanges.filter((n) => n.startsWith('x.'))).toEqual(NAMES.map((n) => `x.${n}`).sort(byBytes));
      // The broker's own exchanges sort among them too: the whole listing is in order.
      expect(exchanges).toEqual([...exchanges].sort(byBytes));
    });
  });
});
