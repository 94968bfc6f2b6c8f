/**
 * Break-glass on the real Redis and broker: a pending request applied by its requester without an
 * approval, once across two replicas and through a freeze, by the same apply job; refused where it
 * is not allowed or by anyone else; reviewed once by an approver (recorded in the audit trail, whose
 * chain still verifies); reverted on review through the revert's own approval; and reminded of,
 * once, when it is still unreviewed past its review deadline.
 */

import { describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange, type ReviewRecord } from '../../src/audit/types.ts';
import { history, parseHistory } from '../../src/commands/history/history.ts';
import { requests } from '../../src/commands/requests/requests.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import type { ChangeRequest, FileInput, Workflow, WorkflowEnvironment } from '../../src/workflow/types.ts';
import { waitFor, withVhost } from '../support/broker.ts';
import { brokersUp } from '../support/brokers.ts';
import {
  APPROVER,
  APPROVER_2,
  refusalCode as codeOf,
  policyWritesCounted,
  REQUESTER,
  settled,
  type WorkflowFixture,
  workflowHooks,
} from '../support/workflow.ts';

const { up } = await brokersUp();
const broker = up[0];
if (!broker) throw new Error('no broker up');

let admin: LabClient;
let fx: WorkflowFixture;

workflowHooks(broker, (a, f) => {
  admin = a;
  fx = f;
});

const ALLOWED: Partial<WorkflowEnvironment> = { breakGlass: { reviewWithinMs: 3_600_000 } };
const BECAUSE = 'INC-7: orders piling up, nobody awake to approve';

const input = (vhost: string, over: Partial<FileInput> = {}): FileInput => ({
  vhost,
  layer: 'user',
  action: 'create',
  policy: 'cap',
  fields: { pattern: '^x', definition: { 'max-length': 3 } },
  requester: { user: REQUESTER, reason: 'incident 7' },
  origin: { channel: 'C0INCIDENT' },
  ...over,
});

/** A change filed with `--break-glass` on `wf` and applied: the request as applied. */
async function brokenAndApplied(
  wf: Workflow,
  vhost: string,
  over: Partial<FileInput> = {},
): Promise<ChangeRequest> {
  const { request } = await wf.file(
    input(vhost, { breakGlass: true, requester: { user: REQUESTER, reason: BECAUSE }, ...over }),
  );
  const done = await settled(wf, request.id);
  expect(done.state).toBe('applied');
  return done;
}

describe(`break-glass (${broker.label})`, () => {
  it('the requester on two replicas at once, in a frozen environment: applied once, by the same job, recorded as break-glass', async () => {
    await withVhost(
      async (vhost) => {
        const puts: string[] = [];
        const clientA = policyWritesCounted(broker, puts);
        const clientB = policyWritesCounted(broker, puts);
        try {
          await fx.worker(clientA);
          await fx.worker(clientB);
          const a = fx.workflow({ env: ALLOWED });
          const b = fx.workflow({ env: ALLOWED });
          await a.freeze({ user: APPROVER, forMs: 3_600_000, reason: 'INC-7 freeze' });
          const { request } = await a.file(input(vhost));
          expect(request.breakGlassOffered).toBe(true);
          // Anyone but the requester is refused, an approver too.
          expect(await codeOf(b.breakGlass(request.id, { user: APPROVER, reason: 'I can' }))).toBe(
            'break-glass-not-requester',
          );
          expect(await codeOf(b.breakGlass(request.id, { user: REQUESTER, reason: '  ' }))).toBe(
            'reason-required',
          );
          const results = await Promise.all([
            a.breakGlass(request.id, { user: REQUESTER, reason: BECAUSE }),
            b.breakGlass(request.id, { user: REQUESTER, reason: BECAUSE }),
          ]);
          expect(results.map((x) => x.outcome).sort()).toEqual(['already-decided', 'decided']);

          const done = await settled(a, request.id);
          expect(done.state).toBe('applied');
          expect(done.breakGlass).toMatchObject({ by: REQUESTER, reason: BECAUSE });
          expect(done.decision).toBeUndefined();
          expect(puts).toHaveLength(1);
          expect((await admin.getPolicy('user', vhost, 'cap'))?.definition).toEqual({ 'max-length': 3 });
          const trail = new AuditTrail(fx.redis, fx.keyPrefix);
          const records = (await trail.list({ vhost })).filter(isChange);
          expect(records).toHaveLength(1);
          expect(records[0]?.breakGlass).toEqual({ user: REQUESTER, reason: BECAUSE });
          expect(records[0]?.approvers).toBeUndefined();
          expect((await trail.verify()).ok).toBe(true);
          expect(fx.notifier.told.applied.filter((x) => x.request.id === request.id)).toHaveLength(1);
          // Unreviewed: `requests` keeps it, marked.
          const listed = await requests(
            {},
            {
              listOpen: (e) => a.listOpen(e),
              listUnreviewed: (e) => a.listUnreviewed(e),
            },
          );
          expect(listed.requests.find((q) => q.id === request.id)).toMatchObject({
            state: 'applied',
            unreviewed: true,
            breakGlass: { by: REQUESTER, reason: BECAUSE },
          });
        } finally {
          await clientA.close();
          await clientB.close();
        }
      },
      { client: admin },
    );
  });

  it('not allowed: --break-glass is refused before anything is filed, and a pending request cannot break it', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow();
        expect(
          await codeOf(
            wf.file(input(vhost, { breakGlass: true, requester: { user: REQUESTER, reason: BECAUSE } })),
          ),
        ).toBe('break-glass-not-allowed');
        expect(await wf.listOpen()).toEqual([]);
        const { request } = await wf.file(input(vhost));
        expect(request.breakGlassOffered).toBeUndefined();
        expect(await codeOf(wf.breakGlass(request.id, { user: REQUESTER, reason: BECAUSE }))).toBe(
          'break-glass-not-allowed',
        );
        expect((await wf.get(request.id))?.state).toBe('pending');
        // Allowed, --break-glass without a reason: refused, nothing filed.
        const allowed = fx.workflow({ env: ALLOWED });
        expect(
          await codeOf(allowed.file(input(vhost, { breakGlass: true, requester: { user: REQUESTER } }))),
        ).toBe('reason-required');
        expect((await allowed.listOpen()).map((r) => r.id)).toEqual([request.id]);
      },
      { client: admin },
    );
  });

  it('--break-glass files and applies at once; reviewed once by an approver, recorded, and history shows the review', async () => {
    await withVhost(
      async (vhost) => {
        await fx.worker(admin);
        const a = fx.workflow({ env: ALLOWED });
        const b = fx.workflow({ env: ALLOWED });
        const { request } = await a.file(
          input(vhost, { breakGlass: true, requester: { user: REQUESTER, reason: BECAUSE } }),
        );
        expect(request.state).toBe('approved');
        const done = await settled(a, request.id);
        expect(done.state).toBe('applied');
        expect(
          await codeOf(a.review(request.id, { user: REQUESTER, reason: 'mine', outcome: 'reviewed' })),
        ).toBe('self-review');
        expect(
          await codeOf(a.review(request.id, { user: 'U0STRANGER', reason: 'hm', outcome: 'reviewed' })),
        ).toBe('not-approver');
        const reviewed = await b.review(request.id, {
          user: APPROVER,
          reason: 'had to be done',
          outcome: 'reviewed',
        });
        expect(reviewed.outcome).toBe('reviewed');
        expect(reviewed.request.review).toMatchObject({
          outcome: 'reviewed',
          by: APPROVER,
          reason: 'had to be done',
        });
        expect(
          await codeOf(a.review(request.id, { user: APPROVER_2, reason: 'also', outcome: 'reverted' })),
        ).toBe('already-reviewed');
        expect(fx.notifier.told.reviewed.map((r) => r.id)).toEqual([request.id]);
        expect(await a.listUnreviewed()).toEqual([]);

        const trail = new AuditTrail(fx.redis, fx.keyPrefix);
        const shown = await history(parseHistory(['cap', '--vhost', vhost, '--verify']), trail);
        expect(shown.verify?.ok).toBe(true);
        const change = shown.entries.filter(isChange).find((e) => e.action === 'create');
        expect(change?.breakGlass).toEqual({
          user: REQUESTER,
          reason: BECAUSE,
          reviewedBy: APPROVER,
          reviewReason: 'had to be done',
          reviewOutcome: 'reviewed',
        });
        const review = shown.entries.find((e) => e.action === 'review');
        expect(review).toMatchObject({
          actor: APPROVER,
          reviewOf: change?.id,
          review: { outcome: 'reviewed' },
        });
        // The change's own record is as sealed: the review is folded in for reading only.
        const sealed = await trail.get(change?.id ?? '');
        expect(sealed && isChange(sealed) && sealed.breakGlass).toEqual({ user: REQUESTER, reason: BECAUSE });
      },
      { client: admin },
    );
  });

  it('reverted on review: the revert is a request of its own, approved like every revert', async () => {
    await withVhost(
      async (vhost) => {
        await fx.worker(admin);
        const wf = fx.workflow({ env: ALLOWED });
        const done = await brokenAndApplied(wf, vhost);
        const result = await wf.review(done.id, {
          user: APPROVER,
          reason: 'too broad',
          outcome: 'reverted',
        });
        const revert = result.revert?.request;
        expect(revert).toMatchObject({ action: 'revert', revertOf: done.auditId, state: 'pending' });
        expect(revert?.requester.user).toBe(APPROVER);
        expect(result.request.review).toMatchObject({ outcome: 'reverted', revertRequestId: revert?.id });
        // The reviewer filed it: another approver decides it.
        expect(
          await codeOf(wf.decide(revert?.id ?? '', { kind: 'approve', user: APPROVER, reason: 'mine' })),
        ).toBe('self-approval');
        await wf.decide(revert?.id ?? '', { kind: 'approve', user: APPROVER_2, reason: 'agreed' });
        expect((await settled(wf, revert?.id ?? '')).state).toBe('applied');
        expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();
      },
      { client: admin },
    );
  });

  it('an approver who is not among the requesters reverts it on review (issue 28, item 7)', async () => {
    await withVhost(
      async (vhost) => {
        await fx.worker(admin);
        const wf = fx.workflow({ env: ALLOWED, requesters: [REQUESTER] });
        const done = await brokenAndApplied(wf, vhost);
        // Filing is still the requesters' alone.
        expect(
          await codeOf(wf.file(input(vhost, { policy: 'mine', requester: { user: APPROVER, reason: 'x' } }))),
        ).toBe('not-requester');
        const result = await wf.review(done.id, { user: APPROVER, reason: 'too broad', outcome: 'reverted' });
        expect(result.outcome).toBe('reviewed');
        expect(result.revert?.request).toMatchObject({
          action: 'revert',
          revertOf: done.auditId,
          state: 'pending',
          requester: { user: APPROVER },
        });
      },
      { client: admin },
    );
  });

  it('reverted by two approvers at once, on two replicas: one revert request, posted once, named by the one review', async () => {
    await withVhost(
      async (vhost) => {
        await fx.worker(admin);
        const a = fx.workflow({ env: ALLOWED });
        const b = fx.workflow({ env: ALLOWED });
        const done = await brokenAndApplied(a, vhost);
        const results = await Promise.all([
          a.review(done.id, { user: APPROVER, reason: 'too broad', outcome: 'reverted' }),
          b.review(done.id, { user: APPROVER_2, reason: 'too broad too', outcome: 'reverted' }),
        ]);
        const reverts = (await a.listOpen()).filter((r) => r.revertOf === done.auditId);
        expect(reverts).toHaveLength(1);
        const [revert] = reverts;
        // Only the approver who filed it has it to post; both reviews name it, and one review is kept.
        expect(results.flatMap((r) => (r.revert ? [r.revert.request.id] : []))).toEqual([revert?.id]);
        expect(results.map((r) => r.outcome).sort()).toEqual(['already-reviewed', 'reviewed']);
        const kept = (await a.get(done.id))?.review;
        expect(kept).toMatchObject({ outcome: 'reverted', revertRequestId: revert?.id });
        // Filed by the approver whose review holds, and by no one else.
        expect(revert?.requester.user).toBe(kept?.by);
        expect(fx.notifier.told.reviewed.map((r) => r.id)).toEqual([done.id]);
      },
      { client: admin },
    );
  });

  it('Review and Revert at once, on two replicas: one review holds, and a revert exists only where it reverts (issue 28, item 6)', async () => {
    await withVhost(
      async (vhost) => {
        await fx.worker(admin);
        const a = fx.workflow({ env: ALLOWED });
        const b = fx.workflow({ env: ALLOWED });
        const seen: string[] = [];
        // Rounds, each with the two clicks in the other order: a race, so which one wins varies;
        // the invariant holds whichever does.
        for (let round = 0; round < 4; round++) {
          const policy = `cap${round}`;
          const done = await brokenAndApplied(a, vhost, {
            policy,
            fields: { pattern: `^x${round}`, definition: { 'max-length': 3 } },
          });
          const keep = () =>
            a.review(done.id, { user: APPROVER, reason: 'looks right', outcome: 'reviewed' });
          const back = () =>
            b.review(done.id, { user: APPROVER_2, reason: 'too broad', outcome: 'reverted' });
          const results = await Promise.all(round % 2 === 0 ? [keep(), back()] : [back(), keep()]);
          const kept = (await a.get(done.id))?.review;
          if (!kept) throw new Error('no review held');
          seen.push(kept.outcome);
          expect(results.map((r) => r.outcome).sort()).toEqual(['already-reviewed', 'reviewed']);
          const reverts = (await a.listOpen()).filter((r) => r.revertOf === done.auditId);
          const handed = results.flatMap((r) => (r.revert ? [r.revert.request.id] : []));
          if (kept.outcome === 'reviewed') {
            // Kept: no revert request, none handed to be posted.
            expect(reverts).toEqual([]);
            expect(handed).toEqual([]);
            expect(kept.revertRequestId).toBeUndefined();
          } else {
            expect(reverts.map((r) => r.id)).toEqual([kept.revertRequestId]);
            expect(handed).toEqual([kept.revertRequestId]);
            expect(reverts[0]?.requester.user).toBe(APPROVER_2);
          }
          // The one review the change holds is the one the trail recorded.
          const records = (await new AuditTrail(fx.redis, fx.keyPrefix).list({ name: policy, vhost })).filter(
            (r): r is ReviewRecord => r.action === 'review',
          );
          const reviews = records.filter((r) => r.reviewOf === done.auditId);
          expect(reviews.map((r) => r.review.outcome)).toEqual([kept.outcome]);
          for (const r of reverts)
            await a.decide(r.id, { user: APPROVER, kind: 'reject', reason: 'round over' });
        }
        expect(seen).toHaveLength(4);
      },
      { client: admin },
    );
  });

  it('unreviewed past its review deadline: the approvals channel is reminded once across replicas, and it stays unreviewed', async () => {
    await withVhost(
      async (vhost) => {
        const soon: Partial<WorkflowEnvironment> = { breakGlass: { reviewWithinMs: 1_500 } };
        await fx.worker(admin, { sweepIntervalMs: 250 });
        await fx.worker(admin, { sweepIntervalMs: 250 });
        const wf = fx.workflow({ env: soon });
        const { request } = await wf.file(
          input(vhost, { breakGlass: true, requester: { user: REQUESTER, reason: BECAUSE } }),
        );
        await settled(wf, request.id);
        const reminded = await waitFor(
          () => fx.notifier.told.reviewReminders.find((r) => r.id === request.id),
          { what: 'the review reminder', deadlineMs: 30_000 },
        );
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(reminded.breakGlass?.reviewBy ?? ''));
        // Sweeps run on after it (a second change's reminder comes later): the first is reminded once.
        const second = await wf.file(
          input(vhost, {
            policy: 'cap2',
            fields: { pattern: '^y', definition: { 'max-length': 4 } },
            breakGlass: true,
            requester: { user: REQUESTER, reason: BECAUSE },
          }),
        );
        await settled(wf, second.request.id);
        await waitFor(() => fx.notifier.told.reviewReminders.find((r) => r.id === second.request.id), {
          what: 'the second review reminder',
          deadlineMs: 30_000,
        });
        expect(fx.notifier.told.reviewReminders.map((r) => r.id)).toEqual([request.id, second.request.id]);
        expect((await wf.get(request.id))?.reviewRemindedAt).toBeDefined();
        expect((await wf.listUnreviewed()).map((r) => r.id)).toEqual([request.id, second.request.id]);
      },
      { client: admin },
    );
  });
});
