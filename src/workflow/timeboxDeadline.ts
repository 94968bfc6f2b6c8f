import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { formatDuration } from '../duration.ts';
import type { Policy } from '../policy/types.ts';
import { type PreviewInput, preview } from '../preview/preview.ts';
import type { WorkflowBroker } from './broker.ts';
import type { RequestStore } from './store.ts';
import { revertDecision, revertOf } from './timebox.ts';
import type { TimeBoxHandlers } from './timeboxQueue.ts';
import type { ApplyQueue, ChangeRequest, Origin } from './types.ts';
import { snapshotOf } from './workflow.ts';

/**
 * What happens at a time box's deadline (and ten minutes before), run by the time-box worker
 * (timeboxQueue.ts) on whichever replica takes the job:
 *
 * - the policy is as the change left it: a revert request, approved with the change (the
 *   approver approved both together), is queued for the same apply job, which re-checks the
 *   policy before writing, records the revert in the audit trail and posts it where the change
 *   was posted;
 * - it was changed again since (by the bot or outside it): no blind revert; a revert request
 *   that needs a new approval is filed and posted;
 * - it is already back as it was: said, nothing written.
 *
 * Each outcome is idempotent: the approved revert has an id derived from the request's, and an
 * asked revert is remembered, so a retried job does not file twice.
 */

export interface TimeBoxNotifier {
  /** Ten minutes before: what will happen at the deadline, in the request's thread. */
  timeBoxWarning(request: ChangeRequest, deadline: Date, willRevert: boolean): Promise<void>;
  /** At the deadline, the policy changed since: the revert request (already posted for approval) told in the thread. */
  timeBoxAsk(request: ChangeRequest, revert: ChangeRequest, why: string): Promise<void>;
  /** At the deadline, nothing to revert. */
  timeBoxNothing(request: ChangeRequest): Promise<void>;
}

export interface TimeBoxDeadlineDeps {
  readonly store: RequestStore;
  readonly redis: {
    set(key: string, value: string, ex: 'EX', s: number, nx: 'NX'): Promise<'OK' | null>;
    get(key: string): Promise<string | null>;
  };
  readonly keyPrefix: string;
  readonly queue: ApplyQueue;
  /**
   * Files (and posts for approval) a request restoring the before state of audit record
   * `auditId`: the Slack side's ChangeRequests.revert in main.ts, Workflow.revertRequestFor in tests.
   */
  readonly revertRequest: (
    auditId: string,
    user: string,
    origin: Origin,
    reason: string,
  ) => Promise<ChangeRequest>;
  readonly brokerFor: (env: string) => WorkflowBroker;
  readonly notifier: TimeBoxNotifier;
  readonly log: Logger;
  readonly now?: () => Date;
}

const policyOf = (r: ChangeRequest, fields: ChangeRequest['before']): Policy | null =>
  fields && { vhost: r.vhost, name: r.policy, ...fields };

/** The id of the approved revert of request `id`: the same on every replica and every retry. */
export function revertRequestId(id: string): string {
  return `r-${createHash('sha256').update(`timebox-revert:${id}`).digest('hex').slice(0, 20)}`;
}

export function timeBoxHandlers(deps: TimeBoxDeadlineDeps): TimeBoxHandlers {
  const now = deps.now ?? (() => new Date());

  async function boxed(
    id: string,
  ): Promise<(ChangeRequest & { timeBoxMs: number; auditId: string }) | undefined> {
    const r = await deps.store.get(id);
    if (r?.state !== 'applied' || r.timeBoxMs === undefined || r.auditId === undefined) {
      deps.log.warn(
        { requestId: id, state: r?.state },
        'time box: not an applied, time-boxed request; nothing done',
      );
      return undefined;
    }
    return r as ChangeRequest & { timeBoxMs: number; auditId: string };
  }

  return {
    async warn(id) {
      const r = await boxed(id);
      if (!r) return;
      const current = await deps.brokerFor(r.env).getPolicy(r.layer, r.vhost, r.policy);
      const applied = policyOf(r, r.after) as Policy;
      const decision = revertDecision(revertOf(policyOf(r, r.before), applied), current);
      const deadline = new Date(Date.parse(r.appliedAt ?? r.updatedAt) + r.timeBoxMs);
      await deps.notifier.timeBoxWarning(r, deadline, decision.kind === 'revert');
    },

    async revert(id) {
      const r = await boxed(id);
      if (!r) return;
      const log = deps.log.child({ requestId: r.id, env: r.env, vhost: r.vhost, policy: r.policy });
      const broker = deps.brokerFor(r.env);
      const current = await broker.getPolicy(r.layer, r.vhost, r.policy);
      const box = revertOf(policyOf(r, r.before), policyOf(r, r.after) as Policy);
      const decision = revertDecision(box, current);
      if (decision.kind === 'done') {
        log.info('time box: the policy is already as it was; nothing to revert');
        await deps.notifier.timeBoxNothing(r);
        return;
      }
      if (decision.kind === 'ask') {
        const asked = `${deps.keyPrefix}:timebox:${r.id}:asked`;
        if (await deps.redis.get(asked)) return;
        const reason = `The time box of ${formatDuration(r.timeBoxMs)} of ${r.id} ended, but ${decision.why}: restoring the state before it needs a new approval.`;
        const filed = await deps.revertRequest(r.auditId, r.requester.user, r.origin, reason);
        await deps.redis.set(asked, filed.id, 'EX', 8 * 86_400, 'NX');
        log.info({ revert: filed.id, why: decision.why }, 'time box: the policy changed since; revert asked');
        await deps.notifier.timeBoxAsk(r, filed, decision.why);
        return;
      }
      // As the change left it: the revert, approved together with the change, through the apply job.
      const revertId = revertRequestId(r.id);
      const at = now().toISOString();
      if (!(await deps.store.get(revertId))) {
        const input: PreviewInput = {
          action: box.action,
          name: r.policy,
          layer: r.layer,
          vhost: r.vhost,
          env: r.env,
          fields: box.restore
            ? {
                pattern: box.restore.pattern,
                applyTo: box.restore.applyTo,
                priority: box.restore.priority,
                definition: box.restore.definition,
              }
            : {},
        };
        const p = await preview(input, broker);
        if (p.status !== 'answered')
          throw new Error(`time box: the revert could not be previewed (${p.status})`);
        await deps.store.create({
          id: revertId,
          env: r.env,
          vhost: r.vhost,
          layer: r.layer,
          action: 'revert',
          policy: r.policy,
          before: r.after,
          after: r.before,
          preview: snapshotOf(p),
          requester: {
            user: r.requester.user,
            reason: `time box of ${formatDuration(r.timeBoxMs)} ended (${r.id})`,
          },
          origin: r.origin,
          ...(r.approvalsChannel ? { approvalsChannel: r.approvalsChannel } : {}),
          state: 'pending',
          createdAt: at,
          expiresAt: new Date(now().getTime() + 3_600_000).toISOString(),
          updatedAt: at,
          revertOf: r.auditId,
        });
      }
      // Idempotent: a retry after the move finds it approved already ('moved').
      await deps.store.transition(revertId, {
        from: ['pending'],
        to: 'approved',
        set: {
          decision: {
            kind: 'approve',
            by: r.decision?.by ?? r.requester.user,
            reason: `approved with ${r.id}, time-boxed to ${formatDuration(r.timeBoxMs)}${r.decision ? `: ${r.decision.reason}` : ''}`,
            at,
          },
        },
      });
      await deps.queue.enqueue(revertId);
      log.info({ revert: revertId }, 'time box: deadline reached; revert queued');
    },
  };
}
