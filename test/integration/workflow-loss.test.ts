/**
 * The apply job and the loss an approval accepted, on the real brokers and Redis: the audit
 * record holds the totals the approver accepted and, per touched queue, the messages before and
 * after the write (read by polling the statistics); and a change that would now remove more than
 * was approved is not applied: the request goes stale with the fresh numbers.
 */

import { describe, expect, it } from 'vitest';
import { differences } from '../../src/audit/observed.ts';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import type { PreviewResult } from '../../src/preview/preview.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { historyText } from '../../src/terminal/history.ts';
import type { FileInput } from '../../src/workflow/types.ts';
import { withVhost } from '../support/broker.ts';
import { brokersUp } from '../support/brokers.ts';
import { liveShows, management, messages } from '../support/messages.ts';
import { APPROVER, REQUESTER, settled, type WorkflowFixture, workflowHooks } from '../support/workflow.ts';

const { up } = await brokersUp();

let admin: LabClient;
let fx: WorkflowFixture;
let trail: AuditTrail;

describe.each(up)('the loss an approval accepted, on $label', (broker) => {
  workflowHooks(broker, (a, f) => {
    admin = a;
    fx = f;
    trail = new AuditTrail(f.redis, f.keyPrefix);
  });

  const create = (vhost: string, pattern: string, definition: Record<string, unknown>): FileInput => ({
    vhost,
    layer: 'user',
    action: 'create',
    policy: 'cap',
    fields: { pattern, applyTo: 'queues', priority: 0, definition },
    requester: { user: REQUESTER, reason: 'disk is filling' },
    origin: { channel: 'C0INCIDENT' },
  });

  it('the audit record holds what the approver accepted and what each queue then held', async () => {
    await withVhost(
      async (vhost) => {
        const api = management(broker, vhost);
        const amqp = await messages(broker, vhost);
        try {
          await api.queue('subject', 'classic');
          await api.queue('idle', 'classic');
          await amqp.publish('subject', 30);
          await amqp.publish('idle', 5);
          // subject keeps a consumer (one message unacked): it is trimmed, not deleted.
          const detach = await amqp.attach('subject');
          try {
            await liveShows(admin, vhost, {
              subject: { ready: 29, unacked: 1, consumers: 1 },
              idle: { ready: 5 },
            });
            await fx.worker(admin);
            const wf = fx.workflow();
            const { request } = await wf.file(
              create(vhost, '^(subject|idle)$', { 'max-length': 10, expires: 4000 }),
            );
            const accepted = request.preview.summary.impact?.totals;
            // 29 ready and 1 unacked: max-length 10 removes 19 ready; idle goes with its 5.
            expect(accepted).toEqual({
              messagesDeadLettered: 0,
              messagesLost: 24,
              queuesDeleted: 1,
              queuesRefusingPublishes: 0,
            });
            await wf.decide(request.id, {
              kind: 'approve',
              user: APPROVER,
              reason: 'accepted',
              acknowledgedLoss: true,
            });
            const done = await settled(wf, request.id);
            expect(done.state).toBe('applied');
            const stored = await trail.get(done.auditId as string);
            const record = stored && isChange(stored) ? stored : undefined;
            expect(record?.impact).toEqual(accepted);
            const observed = record?.observed;
            expect(observed?.cutShort).toBeUndefined();
            expect(observed?.queues).toEqual(
              expect.arrayContaining([
                expect.objectContaining({
                  name: 'subject',
                  messagesBefore: 30,
                  predictedRemoved: 19,
                  messagesAfter: 11,
                }),
                expect.objectContaining({
                  name: 'idle',
                  messagesBefore: 5,
                  predictedDeletedInMs: 4000,
                  messagesAfter: null,
                }),
              ]),
            );
            expect(observed && differences(observed)).toEqual([]);
            expect(await api.exists('idle')).toBe(false);
            // The chain holds with the new fields.
            expect((await trail.verify()).ok).toBe(true);
            const text = historyText({ entries: await trail.list({ vhost }), unreadable: 0 });
            expect(text).toContain(
              'Predicted, as the approvers accepted it: 24 messages lost, 1 queue deleted.',
            );
            expect(text).toContain('predicted and observed agree');
            expect(text).toContain(
              '"subject": 30 messages before, 11 messages after (predicted 11 messages)',
            );
            expect(text).toContain(
              '"idle": 5 messages before, deleted after (predicted deleted 4 s after the write)',
            );
          } finally {
            await detach();
          }
        } finally {
          await amqp.close();
        }
      },
      { client: admin },
    );
  }, 120_000);

  it('a change that would now remove more than was approved: not applied, stale with the fresh numbers', async () => {
    await withVhost(
      async (vhost) => {
        const api = management(broker, vhost);
        const amqp = await messages(broker, vhost);
        try {
          await api.queue('subject', 'classic');
          await amqp.publish('subject', 30);
          await liveShows(admin, vhost, { subject: { ready: 30 } });
          await fx.worker(admin);
          const wf = fx.workflow();
          const { request } = await wf.file(create(vhost, '^subject$', { 'max-length': 10 }));
          expect(request.preview.summary.impact?.totals.messagesLost).toBe(20);
          // More messages arrive before the approval: the same change would now remove 40.
          await amqp.publish('subject', 20);
          await liveShows(admin, vhost, { subject: { ready: 50 } });
          await wf.decide(request.id, {
            kind: 'approve',
            user: APPROVER,
            reason: 'accepted 20',
            acknowledgedLoss: true,
          });
          const done = await settled(wf, request.id);
          expect(done).toMatchObject({ state: 'stale', staleBecause: 'loss-grew' });
          expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();
          expect(await api.peek('subject')).toBe(50);
          const told = fx.notifier.told.stale.find((s) => s.request.id === request.id);
          const fresh = told?.fresh as PreviewResult | undefined;
          expect(fresh?.status === 'answered' && fresh.summary.impact.totals.messagesLost).toBe(40);
          expect(await trail.list({ vhost })).toEqual([]);
        } finally {
          await amqp.close();
        }
      },
      { client: admin },
    );
  }, 120_000);
});
