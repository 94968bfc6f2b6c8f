/**
 * What a change made outside the bot did to the messages, on each real broker: the preview's
 * rules (src/policy/impact/impact.ts) on the state before it. The change is found after the fact, when
 * the statistics may already show its removal; dated by the event exchange, the numbers are the
 * broker's samples from just before it (its length history), so the loss is still counted.
 */
import { describe, expect, it } from 'vitest';
import type { Transition } from '../../src/policy/compare.ts';
import { effectsOfChanges } from '../../src/watch/effect.ts';
import { withVhost } from '../support/broker.ts';
import { brokersUp, clientFor } from '../support/brokers.ts';
import { lengthHistoryHolds, management, messages } from '../support/messages.ts';

const { up } = await brokersUp();

describe.each(up)('an outside change and the messages, on $label', (broker) => {
  it('max-length 10 set outside on 30 messages: 20 lost, counted from the samples before it though the statistics now show 10', async () => {
    const admin = clientFor(broker);
    try {
      await withVhost(
        async (vhost) => {
          const api = management(broker, vhost);
          const amqp = await messages(broker, vhost);
          try {
            await api.queue('subject', 'classic');
            await amqp.publish('subject', 30);
            await lengthHistoryHolds(admin, vhost, 'subject', 30);
            const policy = {
              vhost,
              name: 'cap',
              pattern: '^subject$',
              applyTo: 'queues',
              priority: 0,
              definition: { 'max-length': 10 },
            };
            const at = new Date();
            await admin.putPolicy('user', policy);
            await api.settled('subject', 10);
            const change: Transition = { layer: 'user', vhost, name: 'cap', before: null, after: policy };

            const [dated] = await effectsOfChanges(admin, [change], { asOf: at });
            expect(dated?.impact.totals).toEqual({
              messagesDeadLettered: 0,
              messagesLost: 20,
              queuesDeleted: 0,
              queuesRefusingPublishes: 0,
            });
            expect(dated?.impact.asOf).toBe(at.toISOString());
            expect(dated?.objects.find((o) => o.name === 'subject')?.impact).toEqual([
              { effect: 'drop', messages: 20, fate: 'lost', because: 'max-length', limit: 10 },
            ]);

            // The control: the numbers as read now already show the removal, and count none.
            const [undated] = await effectsOfChanges(admin, [change]);
            expect(undated?.impact.totals.messagesLost).toBe(0);
          } finally {
            await amqp.close();
          }
        },
        { client: admin },
      );
    } finally {
      await admin.close();
    }
  }, 90_000);
});
