/**
 * Time-boxed changes end to end on the real broker and Redis, through the same apply job as any
 * change: a `--for 20s` edit reverts at the deadline (audited as a revert of the change, posted
 * where the change was); edited outside the bot in between, it asks for a new approval instead;
 * the bot restarted in between still reverts, once, with two replicas waiting.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { createLogger } from '../../src/log/log.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { revertRequestId } from '../../src/workflow/timebox/timebox.ts';
import type { TimeBoxNotifier } from '../../src/workflow/timebox/timeboxDeadline.ts';
import type { TimeBoxWorker } from '../../src/workflow/timebox/timeboxQueue.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { waitFor, withVhost } from '../support/broker.ts';
import { brokersUp, clientFor } from '../support/brokers.ts';
import { timeBoxReplica } from '../support/timeBoxReplica.ts';
import { APPROVER, REQUESTER, type WorkflowFixture, workflowFixture } from '../support/workflow.ts';

const { up } = await brokersUp();
const BOX_MS = 20_000;
/**
 * Each test's own budget: its waits are bounded (the apply 30 s, the box, the revert up to 40 s
 * after it), and under load they add up past vitest's default minute (seen with four workers).
 */
const TEST_MS = 30_000 + BOX_MS + 40_000 + 30_000;

interface ToldTimeBox {
  warned: string[];
  asked: { request: ChangeRequest; revert: ChangeRequest; why: string }[];
  nothing: string[];
}

describe.each(up)('time-boxed changes on $label', (broker) => {
  let client: LabClient;
  let fx: WorkflowFixture;
  const timeBoxWorkers: TimeBoxWorker[] = [];
  const told: ToldTimeBox = { warned: [], asked: [], nothing: [] };
  const notifier: TimeBoxNotifier = {
    async timeBoxWarning(r) {
      told.warned.push(r.id);
    },
    async timeBoxAsk(request, revert, why) {
      told.asked.push({ request, revert, why });
    },
    async timeBoxNothing(r) {
      told.nothing.push(r.id);
    },
  };
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

  beforeAll(() => {
    client = clientFor(broker);
    fx = workflowFixture(client);
  });
  afterAll(async () => {
    await Promise.allSettled(timeBoxWorkers.map((w) => w.close()));
    await fx.close();
    await client.close();
  });

  /**
   * One bot replica's background half: the apply worker (scheduling deadlines) and the time-box
   * worker. Every replica allows break-glass: the replicas of the file's tests share one queue, so
   * whichever takes a break-glass change's deadline must be configured as the one that applied it.
   */
  async function replica() {
    const bot = await timeBoxReplica(fx, client, notifier, log, {
      env: { breakGlass: { reviewWithinMs: 3_600_000 } },
    });
    timeBoxWorkers.push(bot.worker);
    return bot;
  }

  const limits = (vhost: string, maxLength: number) => ({
    vhost,
    name: 'orders-limit',
    pattern: '^orders\\.',
    applyTo: 'queues',
    priority: 1,
    definition: { 'max-length': maxLength },
  });

  async function editFor20s(
    wf: Awaited<ReturnType<typeof replica>>['wf'],
    vhost: string,
    timeBoxMs = BOX_MS,
  ): Promise<ChangeRequest> {
    const { request } = await wf.file({
      vhost,
      layer: 'user',
      action: 'edit',
      policy: 'orders-limit',
      fields: { definition: { 'max-length': 1000 } },
      requester: { user: REQUESTER, reason: 'incident 42: orders backing up' },
      origin: { channel: 'C0INCIDENT', threadTs: '1700000000.000100' },
      timeBoxMs,
    });
    expect(request.timeBoxMs).toBe(timeBoxMs);
    await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok for the incident' });
    await waitFor(async () => (await wf.get(request.id))?.state === 'applied', {
      deadlineMs: 30_000,
      what: 'applied',
    });
    expect((await client.getPolicy('user', vhost, 'orders-limit'))?.definition).toEqual({
      'max-length': 1000,
    });
    return (await wf.get(request.id)) as ChangeRequest;
  }

  /** In a fresh vhost with orders-limit at max-length 10, edited to 1000 --for 20s and applied by one replica. */
  async function boxedEdit(
    prefix: string,
    fn: (vhost: string, applied: ChangeRequest) => Promise<void>,
  ): Promise<void> {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', limits(vhost, 10));
        const bot = await replica();
        try {
          await fn(vhost, await editFor20s(bot.wf, vhost));
        } finally {
          await bot.stop();
        }
      },
      { client, prefix },
    );
  }

  const revertsOf = async (auditId: string) =>
    (await new AuditTrail(fx.redis, fx.keyPrefix).list())
      .filter(isChange)
      .filter((r) => r.action === 'revert' && r.revertOf === auditId);

  it.concurrent(
    'a --for 20s edit reverts at the deadline, audited as its revert and posted where the change was',
    async () => {
      await boxedEdit('tb-revert', async (vhost, applied) => {
        await waitFor(
          async () =>
            (await client.getPolicy('user', vhost, 'orders-limit'))?.definition['max-length'] === 10,
          { deadlineMs: BOX_MS + 30_000, what: 'the policy back as it was' },
        );
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(applied.appliedAt ?? '') + BOX_MS);
        await waitFor(async () => (await revertsOf(applied.auditId ?? '')).length === 1, {
          what: 'the revert recorded',
        });
        const [revert] = await revertsOf(applied.auditId ?? '');
        expect(revert).toMatchObject({
          before: { definition: { 'max-length': 1000 } },
          after: { definition: { 'max-length': 10 } },
          approver: { user: APPROVER },
        });
        // The record is appended before the request is marked applied and the Notifier told: wait for it.
        const posted = await waitFor(() => fx.notifier.told.applied.find((a) => a.record.id === revert?.id), {
          what: 'the revert posted',
        });
        expect(posted?.request.origin).toEqual(applied.origin);
        expect(posted?.request.approvalsChannel).toBe(applied.approvalsChannel);
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'edited outside the bot in between: no revert; a revert request asks for a new approval',
    async () => {
      await boxedEdit('tb-ask', async (vhost, applied) => {
        await client.putPolicy('user', limits(vhost, 500));
        await waitFor(() => told.asked.some((a) => a.request.id === applied.id), {
          deadlineMs: BOX_MS + 30_000,
          what: 'the revert asked for',
        });
        const asked = told.asked.find((a) => a.request.id === applied.id);
        expect(asked?.why).toBe('the policy was changed again since the change');
        expect(asked?.revert).toMatchObject({
          state: 'pending',
          action: 'revert',
          revertOf: applied.auditId,
        });
        expect((await client.getPolicy('user', vhost, 'orders-limit'))?.definition).toEqual({
          'max-length': 500,
        });
        expect(await revertsOf(applied.auditId ?? '')).toEqual([]);
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'the approved revert goes through the rules: no revert is approved in the name of an approver no longer among them',
    async () => {
      await withVhost(
        async (vhost) => {
          await client.putPolicy('user', limits(vhost, 10));
          const bot = await replica();
          try {
            // An hour's box: its deadline never comes during the test; the revert is asked for directly.
            const applied = await editFor20s(bot.wf, vhost, 3_600_000);
            const revertId = revertRequestId(applied.id);
            const removed = fx.workflow({ approvers: [] });
            await expect(removed.approveTimeBoxRevert(applied)).rejects.toMatchObject({
              code: 'not-approver',
            });
            expect(await bot.wf.get(revertId)).toBeUndefined();

            // Its requester since removed from the requesters: the revert was asked for with the change.
            const requesterGone = fx.workflow({ requesters: ['U0SOMEONEELSE'] });
            const revert = await requesterGone.approveTimeBoxRevert(applied);
            expect(revert).toMatchObject({
              id: revertId,
              state: 'approved',
              action: 'revert',
              revertOf: applied.auditId,
              requester: { user: REQUESTER },
              decision: { kind: 'approve', by: APPROVER },
            });
            // Again (a retried job): the same request, approved once, queued again to no effect.
            expect((await bot.wf.approveTimeBoxRevert(applied)).id).toBe(revertId);
            await waitFor(async () => (await revertsOf(applied.auditId ?? '')).length === 1, {
              what: 'the revert applied',
            });
            expect((await client.getPolicy('user', vhost, 'orders-limit'))?.definition).toEqual({
              'max-length': 10,
            });
          } finally {
            await bot.stop();
          }
        },
        { client, prefix: 'tb-rules' },
      );
    },
    TEST_MS,
  );

  it.concurrent(
    'a break-glass change --for 10s is reverted at its deadline, under the same break-glass (issue 28, item 2)',
    async () => {
      await withVhost(
        async (vhost) => {
          await client.putPolicy('user', limits(vhost, 10));
          const bot = await replica();
          try {
            const { request } = await bot.wf.file({
              vhost,
              layer: 'user',
              action: 'edit',
              policy: 'orders-limit',
              fields: { definition: { 'max-length': 1000 } },
              requester: { user: REQUESTER, reason: 'INC-28: orders backing up, no approver awake' },
              origin: { channel: 'C0INCIDENT' },
              timeBoxMs: 10_000,
              breakGlass: true,
            });
            const applied = await waitFor(
              async () => {
                const r = await bot.wf.get(request.id);
                return r?.state === 'applied' && r;
              },
              { deadlineMs: 30_000, what: 'the break-glass change applied' },
            );
            expect(applied.decision).toBeUndefined();
            await waitFor(
              async () =>
                (await client.getPolicy('user', vhost, 'orders-limit'))?.definition['max-length'] === 10,
              { deadlineMs: 40_000, what: 'the policy back as it was' },
            );
            await waitFor(async () => (await revertsOf(applied.auditId ?? '')).length === 1, {
              what: 'the revert recorded',
            });
            const [revert] = await revertsOf(applied.auditId ?? '');
            expect(revert?.breakGlass).toMatchObject({
              user: REQUESTER,
              reason: expect.stringMatching(/^applied by break-glass with r-.*time-boxed to 10s: INC-28/),
            });
            expect(revert?.approver).toBeUndefined();
            expect(told.asked.filter((a) => a.request.id === applied.id)).toEqual([]);
          } finally {
            await bot.stop();
          }
        },
        { client, prefix: 'tb-glass' },
      );
    },
    TEST_MS,
  );

  it.concurrent(
    'the bot restarted before the deadline still reverts, once, with two replicas waiting',
    async () => {
      await withVhost(
        async (vhost) => {
          await client.putPolicy('user', limits(vhost, 10));
          const first = await replica();
          const applied = await editFor20s(first.wf, vhost);
          await first.stop();
          const [a, b] = await Promise.all([replica(), replica()]);
          try {
            await waitFor(async () => (await revertsOf(applied.auditId ?? '')).length >= 1, {
              deadlineMs: BOX_MS + 40_000,
              what: 'the revert after the restart',
            });
            expect((await client.getPolicy('user', vhost, 'orders-limit'))?.definition).toEqual({
              'max-length': 10,
            });
            expect(await revertsOf(applied.auditId ?? '')).toHaveLength(1);
          } finally {
            await Promise.all([a.stop(), b.stop()]);
          }
        },
        { client, prefix: 'tb-restart' },
      );
    },
    TEST_MS,
  );
});
