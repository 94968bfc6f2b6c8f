/**
 * A time-boxed set's revert, planned like any set against the broker at the deadline (issue 26,
 * items 2 and 4), on the three real brokers and Redis. The deadline is the time-box job's own
 * handler (timeboxDeadline.ts `revert`), called once the queues hold what the test put in them:
 * the box is an hour, so the delayed job never races the test. Each test files, applies, fills
 * and reverts a set: two minutes each, for a loaded machine.
 *
 * - The set was planned with its queue empty, so its order passed a state with a low cap for
 *   free; at the deadline the queue holds 30 messages, and the reverse of the set's order passes
 *   that state again (25 cut). The planner's order for the revert loses none, sampled over AMQP
 *   through the whole revert; the revert's request and audit carry that order and its figures
 *   (the end state's cut of another queue, approved with the set as a single change's revert is).
 * - Two policies that swap their queues: at the deadline no order of writing the revert spares
 *   both queues. Nothing is written: the revert is filed for a new approval with its figures,
 *   which the approval must acknowledge; acknowledged, it is applied and loses what it said.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { fileImport } from '../../src/commands/import/import.ts';
import { createLogger } from '../../src/log/log.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { isWorkflowError } from '../../src/workflow/errors.ts';
import { derivedRequestId, revertRequestId } from '../../src/workflow/timebox/timebox.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { waitFor, withVhost } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';
import { fewestMessages, liveShows, management, messages } from '../support/messages.ts';
import { exportOf, type P, p, ROWS, type Row } from '../support/planRows.ts';
import { askingNotifier, timeBoxDeadline } from '../support/timeBoxReplica.ts';
import {
  APPROVER,
  REQUESTER,
  settled,
  TEST_ENV,
  type WorkflowFixture,
  workflowFixture,
} from '../support/workflow.ts';

const { up } = await brokersUp();
const BOX_MS = 3_600_000;
const NONE = { messagesDeadLettered: 0, messagesLost: 0, queuesDeleted: 0, queuesRefusingPublishes: 0 };

describe.each(up)(
  'the revert of a time-boxed set, planned at the deadline, on $label',
  (broker: TestBroker) => {
    let client: LabClient;
    let fx: WorkflowFixture;
    const notifier = askingNotifier();
    const { asked } = notifier;
    const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

    beforeAll(async () => {
      client = clientFor(broker);
      fx = workflowFixture(client);
      await fx.worker(client);
    });
    afterAll(async () => {
      await fx.close();
      await client.close();
    });

    /** The deadline's handler, as the time-box worker runs it. */
    const deadline = (wf: ReturnType<WorkflowFixture['workflow']>) =>
      timeBoxDeadline(fx, wf, client, notifier, log);

    /**
     * A fresh vhost with `live` and `queues` (empty), the file filed `--for 1h` (planned now, on
     * empty queues), approved and applied; then `fill` published and seen by the statistics the
     * planner reads, and `fn` run at the deadline.
     */
    async function boxed(
      prefix: string,
      world: {
        live: readonly P[];
        file: readonly P[];
        queues: readonly string[];
        fill: Record<string, number>;
      },
      fn: (ctx: {
        vhost: string;
        applied: ChangeRequest;
        wf: ReturnType<WorkflowFixture['workflow']>;
        api: ReturnType<typeof management>;
      }) => Promise<void>,
    ) {
      await withVhost(
        async (vhost) => {
          const api = management(broker, vhost);
          for (const q of world.queues) await api.queue(q, 'classic');
          for (const x of world.live) await client.putPolicy('user', { ...x, vhost });
          const wf = fx.workflow();
          const outcome = await fileImport(
            { workflow: wf, broker: () => ({ name: TEST_ENV, broker: client }) },
            {
              source: 'definitions.json',
              file: exportOf(vhost, world.file),
              reason: 'for the hour of the migration',
              timeBoxMs: BOX_MS,
            },
            REQUESTER,
            { channel: 'C0CI' },
          );
          if (outcome.status !== 'filed') throw new Error(JSON.stringify(outcome));
          await wf.decide(outcome.request.id, { kind: 'approve', user: APPROVER, reason: 'for the hour' });
          const applied = await settled(wf, outcome.request.id);
          expect(applied.state).toBe('applied');
          const amqp = await messages(broker, vhost);
          try {
            for (const [q, n] of Object.entries(world.fill)) await amqp.publish(q, n);
          } finally {
            await amqp.close();
          }
          await liveShows(
            client,
            vhost,
            Object.fromEntries(Object.entries(world.fill).map(([q, n]) => [q, { ready: n }])),
          );
          await fn({ vhost, applied, wf, api });
        },
        { client, prefix },
      );
    }

    it.concurrent('the revert is written in the order planned at the deadline: the queue the reverse order would cut keeps every message', async () => {
      await boxed(
        'tbr-order',
        {
          live: [
            p('base', '^orders\\.audit$', 10, { 'max-length': 1000 }),
            p('slow', '^orders\\.slow$', 1, { 'max-length': 10 }),
          ],
          // `burst` created under `base`, raised above it; `slow` given room for the hour.
          file: [
            p('base', '^orders\\.audit$', 30, { 'max-length': 1000 }),
            p('burst', '^orders\\.audit$', 20, { 'max-length': 5 }),
            p('slow', '^orders\\.slow$', 1, { 'max-length': 100 }),
          ],
          queues: ['orders.audit', 'orders.slow'],
          fill: { 'orders.audit': 30, 'orders.slow': 60 },
        },
        async ({ vhost, applied, wf, api }) => {
          // With the queue empty, creating `burst` first cost nothing: the set's order. Its reverse
          // (lower `base`, then delete `burst`) leaves orders.audit under `burst`'s cap of 5.
          const forward = (applied.set?.steps ?? []).map((s) => s.name);
          expect(forward.indexOf('burst')).toBeLessThan(forward.indexOf('base'));

          const sampling = await fewestMessages(broker, vhost, ['orders.audit']);
          let fewest: ReadonlyMap<string, number>;
          try {
            await deadline(wf).revert(applied.id);
            const reverted = await settled(wf, revertRequestId(applied.id));
            expect(reverted.state).toBe('applied');
          } finally {
            ({ fewest } = await sampling.stop());
          }
          // Not one message of orders.audit lost on the way back (the reverse order cut it to 5).
          expect(fewest.get('orders.audit')).toBe(30);
          await api.settled('orders.audit', 30);
          expect(await api.peek('orders.audit')).toBe(30);
          // orders.slow back under its cap of 10: the end state's loss, predicted, approved with the set.
          await api.settled('orders.slow', 10);

          const revert = (await wf.get(revertRequestId(applied.id))) as ChangeRequest;
          const order = (revert.set?.steps ?? []).map((s) => s.name);
          expect(order.indexOf('burst')).toBeLessThan(order.indexOf('base'));
          expect(revert.set?.transitional).toBeUndefined();
          expect(revert.preview.summary.impact?.totals).toEqual({ ...NONE, messagesLost: 50 });
          expect(revert.preview.summary.impact?.queues).toEqual(['orders.slow']);
          expect(revert.decision).toMatchObject({ kind: 'approve', by: APPROVER });

          // The audit: the revert's records in the planned order, each undoing its step of the set,
          // the predicted figures on the first.
          const records = (await new AuditTrail(fx.redis, fx.keyPrefix).list())
            .filter(isChange)
            .filter((r) => r.requestId === revert.id)
            .sort((a, b) => (a.set?.index ?? 0) - (b.set?.index ?? 0));
          expect(records.map((r) => r.policy)).toEqual(order);
          const index = new Map((applied.set?.steps ?? []).map((s, i) => [s.name, i]));
          expect(records.map((r) => [r.action, r.revertOf])).toEqual(
            order.map((name) => ['revert', `a-${applied.id}-${index.get(name)}`]),
          );
          expect(records[0]?.impact).toEqual({ ...NONE, messagesLost: 50 });
        },
      );
    }, 120_000);

    it.concurrent('a revert no order spares: nothing written at the deadline; asked for with its figures, applied once acknowledged', async () => {
      // The plan's row of a loss no order avoids: p1 and p2 swap their queues over a floor of 5.
      // Filed on empty queues it costs nothing; its revert, with both queues full, cuts one of them.
      const row = ROWS.find((r) => r.what.startsWith('a loss on the way that no order avoids')) as Row;
      await boxed(
        'tbr-ask',
        { live: row.live, file: row.file, queues: Object.keys(row.queues), fill: { ...row.queues } },
        async ({ vhost, applied, wf, api }) => {
          await deadline(wf).revert(applied.id);
          const ask = asked.find((a) => a.request.id === applied.id);
          expect(ask?.why).toBe(
            'restoring it would cost 25 messages lost on the way in every order of writing, which its approval did not acknowledge',
          );
          const revert = ask?.revert as ChangeRequest;
          expect(revert).toMatchObject({
            id: derivedRequestId('timebox-ask', applied.id),
            state: 'pending',
            action: 'revert',
            revertOf: applied.auditId,
          });
          expect(revert.set?.transitional).toEqual({ ...NONE, messagesLost: 25 });
          expect(revert.preview.summary.impact?.totals).toEqual({ ...NONE, messagesLost: 25 });
          // Nothing written, nothing approved on the set's approval.
          expect(await wf.get(revertRequestId(applied.id))).toBeUndefined();
          expect((await client.getPolicy('user', vhost, 'p1'))?.pattern).toBe('^y$');

          // The loss is acknowledged like any other: refused without it, applied with it.
          const refused = await wf
            .decide(revert.id, { kind: 'approve', user: APPROVER, reason: 'back' })
            .catch((e: unknown) => e);
          expect(isWorkflowError(refused, 'loss-not-acknowledged')).toBe(true);
          await wf.decide(revert.id, {
            kind: 'approve',
            user: APPROVER,
            reason: 'back, 25 lost',
            acknowledgedLoss: true,
          });
          expect((await settled(wf, revert.id)).state).toBe('applied');
          expect((await client.getPolicy('user', vhost, 'p1'))?.pattern).toBe('^x$');
          // What it said: one queue cut to the floor on the way, the other whole.
          await waitFor(
            async () =>
              [(await api.count('x')) ?? 0, (await api.count('y')) ?? 0].sort((a, b) => a - b).join() ===
              '5,30',
            { what: 'x and y to hold 5 and 30' },
          );
        },
      );
    }, 120_000);
  },
);
