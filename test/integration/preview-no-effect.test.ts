import { describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import { preview } from '../../src/preview/preview.ts';
import { previewView } from '../../src/slack/views/preview.ts';
import { previewText } from '../../src/terminal/preview.ts';
import { brokersUp, inVhostOn } from '../support/brokers.ts';
import { renderedText } from '../support/fakeSlack.ts';

/**
 * The lab's `tight` preview (`^orders`, apply-to all, max-length=10): the exchange orders.topic
 * gains max-length, which an exchange takes and does nothing with. The preview says so, by the
 * one rule `which --json` marks `noEffect` with (keyHasEffect, src/policy/risks.ts).
 */

const { up } = await brokersUp();

describe.each(up.map((b) => [b.label, b] as const))(
  'preview: a key with no effect on an exchange (%s)',
  (_l, broker) => {
    it('the tight preview marks max-length on orders.topic as having no effect, in --json, terminal and Slack', async () => {
      await inVhostOn(broker, 'noeff', async (vhost, client) => {
        await setUpLab(client, vhost);
        const r = await preview(
          {
            action: 'create',
            name: 'tight',
            layer: 'user',
            vhost,
            fields: { pattern: '^orders', priority: 20, definition: { 'max-length': 10 } },
          },
          client,
        );
        expect(r.status).toBe('answered');
        if (r.status !== 'answered') return;
        const topic = r.objects.find((o) => o.name === 'orders.topic');
        expect(topic?.gained).toEqual({ 'max-length': 10 });
        expect(topic?.noEffect).toEqual(['max-length']);
        // A queue's max-length does what it says: no mark there.
        expect(r.objects.find((o) => o.name === 'orders.audit')?.noEffect).toBeUndefined();

        const text = previewText(r);
        expect(text).toContain(
          `gains   max-length=10 (no effect on an exchange on RabbitMQ ${r.brokerVersion})`,
        );
        const slack = renderedText({ ...previewView(r) });
        expect(slack).toMatch(/orders\.topic.*`max-length`: no effect on an exchange on RabbitMQ/);
      });
    });
  },
);
