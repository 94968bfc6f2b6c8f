import type { Logger } from 'pino';
import { formatDuration } from '../../core/index.ts';
import type { Policy } from '../../policy/index.ts';
import type { WorkflowBroker } from '../broker.ts';
import { policySteps } from '../changeSet.ts';
import { isWorkflowError } from '../errors.ts';
import type { ChangeRequest, Origin, Workflow } from '../types.ts';
import { type RevertDecision, revertDecision, revertOf, setRevertDecision } from './timebox.ts';
import type { TimeBoxHandlers } from './timeboxQueue.ts';

/**
 * What happens at a time box's deadline (and ten minutes before), run by the time-box worker
 * (timeboxQueue.ts) on whichever replica takes the job:
 *
 * - the policy is as the change left it: a revert request, approved with the change (the
 *   approver approved both together, or who broke the glass applied both together: rules.ts
 *   `timeBoxRevertAuthority`; Workflow.approveTimeBoxRevert, through the rules), is
 *   queued for the same apply job, which re-checks the policy before writing, records the
 *   revert in the audit trail and posts it where the change was posted; should the rules no
 *   longer let that approver approve, the revert is asked for as below;
 * - it was changed again since (by the bot or outside it): no blind revert; a revert request
 *   that needs a new approval is filed and posted;
 * - it is already back as it was: said, nothing written.
 *
 * A time-boxed set (`import --for`) is the same, over every policy it touched: all as the set
 * left them, the revert is one set, planned like any set against the broker as it is now (its order
 * of writing the planner's, its figures on the request), approved with the set; any changed since,
 * or a loss on the revert's way that no order avoids (rules.ts `revertWayRefusal`), that set is
 * filed for a new approval, showing its figures.
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
  /** Reads the change; files and queues its approved revert. */
  readonly workflow: Pick<Workflow, 'get' | 'approveTimeBoxRevert' | 'revertSetFor'>;
  readonly redis: {
    set(key: string, value: string, ex: 'EX', s: number, nx: 'NX'): Promise<'OK' | null>;
    get(key: string): Promise<string | null>;
  };
  readonly keyPrefix: string;
  /**
   * Files (and posts for approval) a request restoring the before state of audit record
   * `auditId`: the Slack side's ChangeRequests.revert in src/bot/bot.ts, Workflow.revertRequestFor in tests.
   */
  readonly revertRequest: (
    auditId: string,
    user: string,
    origin: Origin,
    reason: string,
  ) => Promise<ChangeRequest>;
  /**
   * Posts for approval a set's revert that `Workflow.revertSetFor` filed (the Slack side's
   * ChangeRequests.postSet); absent: filed, not posted (tests).
   */
  readonly postRevertSet?: (revert: ChangeRequest) => Promise<void>;
  readonly brokerFor: (env: string) => WorkflowBroker;
  readonly notifier: TimeBoxNotifier;
  readonly log: Logger;
}

type Boxed = ChangeRequest & { timeBoxMs: number; auditId: string };

const policyOf = (r: ChangeRequest, fields: ChangeRequest['before']): Policy | null =>
  fields && { vhost: r.vhost, name: r.policy, ...fields };

export function timeBoxHandlers(deps: TimeBoxDeadlineDeps): TimeBoxHandlers {
  async function boxed(id: string): Promise<Boxed | undefined> {
    const r = await deps.workflow.get(id);
    if (r?.state !== 'applied' || r.timeBoxMs === undefined || r.auditId === undefined) {
      deps.log.warn(
        { requestId: id, state: r?.state },
        'time box: not an applied, time-boxed request; nothing done',
      );
      return undefined;
    }
    return r as Boxed;
  }

  const askedKey = (id: string) => `${deps.keyPrefix}:timebox:${id}:asked`;

  /** The policy changed since (or the approver may no longer approve): a revert that needs a new approval. */
  async function ask(r: Boxed, why: string, log: Logger): Promise<void> {
    const asked = askedKey(r.id);
    if (await deps.redis.get(asked)) return;
    const reason = `The time box of ${formatDuration(r.timeBoxMs)} of ${r.id} ended, but ${why}: restoring the state before it needs a new approval.`;
    const filed = r.set
      ? await deps.workflow.revertSetFor(r, reason)
      : await deps.revertRequest(r.auditId, r.requester.user, r.origin, reason);
    if (r.set) await deps.postRevertSet?.(filed);
    await deps.redis.set(asked, filed.id, 'EX', 8 * 86_400, 'NX');
    log.info({ revert: filed.id, why }, 'time box: revert asked');
    await deps.notifier.timeBoxAsk(r, filed, why);
  }

  /** Where the change stands on the broker now: one policy, or every policy of a set. */
  async function decisionOf(r: Boxed): Promise<RevertDecision> {
    const broker = deps.brokerFor(r.env);
    if (r.set) {
      // A set holding parameters is never time-boxed (changeSet.ts): its steps are policies.
      const steps = policySteps(r.set.steps);
      const now = await Promise.all(steps.map((s) => broker.getPolicy(s.layer, s.vhost, s.name)));
      return setRevertDecision(steps, (s) => now[steps.indexOf(s)] ?? null);
    }
    const current = await broker.getPolicy(r.layer, r.vhost, r.policy);
    return revertDecision(revertOf(policyOf(r, r.before), policyOf(r, r.after) as Policy), current);
  }

  return {
    async warn(id) {
      const r = await boxed(id);
      if (!r) return;
      const decision = await decisionOf(r);
      const deadline = new Date(Date.parse(r.appliedAt ?? r.updatedAt) + r.timeBoxMs);
      await deps.notifier.timeBoxWarning(r, deadline, decision.kind === 'revert');
    },

    async revert(id) {
      const r = await boxed(id);
      if (!r) return;
      const log = deps.log.child({ requestId: r.id, env: r.env, vhost: r.vhost, policy: r.policy });
      // Asked for by a try before this one: one outcome per deadline. A retry must not approve a
      // revert beside the one waiting for approval because the way looks clear now (a queue drained).
      const asked = await deps.redis.get(askedKey(r.id));
      if (asked) {
        log.info({ revert: asked }, 'time box: the revert was asked for already; nothing more');
        return;
      }
      const decision = await decisionOf(r);
      if (decision.kind === 'done') {
        log.info('time box: the policy is already as it was; nothing to revert');
        await deps.notifier.timeBoxNothing(r);
        return;
      }
      if (decision.kind === 'ask') return ask(r, decision.why, log);
      // As the change left it: the revert, approved together with the change, through the apply job.
      try {
        const revert = await deps.workflow.approveTimeBoxRevert(r);
        log.info({ revert: revert.id }, 'time box: deadline reached; revert queued');
      } catch (err) {
        if (isWorkflowError(err, 'break-glass-not-allowed'))
          return ask(r, 'the environment no longer allows break-glass, which applied the change', log);
        if (isWorkflowError(err) && err.refusal.code === 'revert-loss-on-the-way')
          return ask(
            r,
            `restoring it would cost ${err.refusal.loss} on the way in every order of writing, which its approval did not acknowledge`,
            log,
          );
        if (!isWorkflowError(err, 'not-approver') && !isWorkflowError(err, 'self-approval')) throw err;
        await ask(r, 'whoever approved the change may no longer approve its revert', log);
      }
    },
  };
}
