/**
 * A change request filed while the queues' statistics cannot be read, on the real brokers and
 * Redis: it is filed, its approval message (and the requester's reply) leads with "Loss unknown",
 * and the apply never writes on a loss nobody was shown: a loss found before the write makes the
 * request stale (filed again with the numbers), and a reading that fails again writes nothing.
 * The statistics' failure is a fault (the broker's answer replaced by a timeout), the rest real.
 */

import { describe, expect, it } from 'vitest';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { RabbitError } from '../../src/rabbit/errors.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { filedView, requestMessage } from '../../src/slack/views/request.ts';
import { prepareOne } from '../../src/workflow/apply/applyOne.ts';
import type { FileInput } from '../../src/workflow/types.ts';
import { brokerCredentials, withVhost } from '../support/broker.ts';
import { brokersUp, urlsOf } from '../support/brokers.ts';
import { liveShows, management, messages } from '../support/messages.ts';
import { APPROVER, REQUESTER, settled, type WorkflowFixture, workflowHooks } from '../support/workflow.ts';

const { up } = await brokersUp();

let admin: LabClient;
let fx: WorkflowFixture;

/** A client whose every reading of the queues' statistics times out (the records still read). */
class StatisticsTimeOut extends ManagementClient {
  private fail(): never {
    throw new RabbitError({
      code: 'timeout',
      method: 'GET',
      path: '/api/queues/…',
      message: 'no answer within 15000 ms',
    });
  }
  override streamQueueStats(): never {
    return this.fail();
  }
  override findQueueStats(): never {
    return this.fail();
  }
}

describe.each(up)('a request whose loss could not be read, on $label', (broker) => {
  workflowHooks(broker, (a, f) => {
    admin = a;
    fx = f;
  });
  const blind = () => new StatisticsTimeOut({ url: urlsOf(broker), ...brokerCredentials() });

  const create = (vhost: string): FileInput => ({
    vhost,
    layer: 'user',
    action: 'create',
    policy: 'cap',
    fields: { pattern: '^subject$', applyTo: 'queues', priority: 0, definition: { 'max-length': 10 } },
    requester: { user: REQUESTER, reason: 'disk is filling' },
    origin: { channel: 'C0INCIDENT' },
  });

  it('filed saying so first; approved, the apply finds the loss: stale, nothing written', async () => {
    await withVhost(
      async (vhost) => {
        const api = management(broker, vhost);
        const amqp = await messages(broker, vhost);
        const client = blind();
        try {
          await api.queue('subject', 'classic');
          await amqp.publish('subject', 30);
          await liveShows(admin, vhost, { subject: { ready: 30 } });
          const { request } = await fx.workflow({ client }).file(create(vhost));
          expect(request.preview.unread?.map((u) => [u.what, u.why])).toEqual([
            ['queue-statistics', 'timeout'],
          ]);
          // No loss known, none accepted.
          expect(request.preview.summary.impact?.totals.messagesLost).toBe(0);
          for (const m of [requestMessage(request), filedView(request, 'C0APPROVALS', { ok: true })]) {
            expect(m.text.startsWith('Loss unknown: ')).toBe(true);
            expect(JSON.stringify(m.blocks[0])).toContain('Loss unknown: ');
          }
          expect(requestMessage(request).text).toContain('if it finds any loss the request goes stale');

          // The apply reads the statistics again, through a client that can: 20 messages removed, not accepted.
          await fx.worker(admin);
          const wf = fx.workflow();
          await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
          const done = await settled(wf, request.id);
          expect(done).toMatchObject({ state: 'stale', staleBecause: 'loss-grew' });
          expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();
        } finally {
          await amqp.close();
          await client.close();
        }
      },
      { client: admin },
    );
  }, 120_000);

  it('before the write, statistics that cannot be read again: nothing written', async () => {
    await withVhost(
      async (vhost) => {
        const api = management(broker, vhost);
        const client = blind();
        try {
          await api.queue('subject', 'classic');
          const { request } = await fx.workflow({ client }).file(create(vhost));
          await expect(prepareOne(request, client as never, {}, new Date())).rejects.toMatchObject({
            code: 'timeout',
            message: expect.stringContaining('the loss could not be read, nothing written'),
          });
          expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();
        } finally {
          await client.close();
        }
      },
      { client: admin },
    );
  }, 60_000);
});
