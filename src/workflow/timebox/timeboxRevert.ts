import { formatDuration } from '../../core/index.ts';
import type { Policy } from '../../policy/index.ts';
import { orFiledAlready, WorkflowError } from '../errors.ts';
import type { WorkflowContext } from '../filing/context.ts';
import type { createFileOne } from '../filing/fileOne.ts';
import type { createFileSet } from '../filing/fileSet.ts';
import type { createReverts } from '../filing/reverts.ts';
import {
  breakGlassRefusal,
  decideRefusal,
  MAX_REASON,
  revertWayRefusal,
  timeBoxRevertAuthority,
} from '../rules.ts';
import type { ApproveOutcome, TransitionOutcome } from '../store.ts';
import type { ChangeRequest } from '../types.ts';
import { revertOf, revertRequestId } from './timebox.ts';

/**
 * A time-boxed change's revert, approved with the change (by whoever approved it, or by its
 * break-glass) and queued when its time is up: filed under the id derived from the change's, so a
 * retry finds it filed and approved already.
 */
export function createTimeBoxRevert(
  ctx: WorkflowContext,
  one: ReturnType<typeof createFileOne>,
  sets: ReturnType<typeof createFileSet>,
  reverts: ReturnType<typeof createReverts>,
) {
  const { store, storeCall } = ctx;

  /** A time box's revert, filed under the id derived from its change's (`revertRequestId`). */
  async function fileTimeBoxRevert(
    change: ChangeRequest,
    id: string,
    timeBoxMs: number,
    auditId: string,
  ): Promise<void> {
    const filing = {
      action: 'revert',
      revertOf: auditId,
      id,
      approvalsChannel: change.approvalsChannel,
      askedWithChange: true,
    } as const;
    const reason = `time box of ${formatDuration(timeBoxMs)} ended (${change.id})`;
    if (change.set) {
      const planned = await reverts.plannedRevert(change, reason, 'as-left');
      const refused = revertWayRefusal(planned.way);
      if (refused) throw new WorkflowError(refused, { request: change });
      await sets.fileSet(planned.input, filing);
      return;
    }
    const policy = (fields: ChangeRequest['before']): Policy | null =>
      fields && { vhost: change.vhost, name: change.policy, ...fields };
    const box = revertOf(policy(change.before), policy(change.after) as Policy);
    await one.fileRequest(
      {
        env: change.env,
        vhost: change.vhost,
        layer: change.layer,
        action: box.action,
        policy: change.policy,
        fields: change.before ?? {},
        requester: { user: change.requester.user, reason },
        origin: change.origin,
      },
      filing,
    );
  }

  async function approveTimeBoxRevert(change: ChangeRequest): Promise<ChangeRequest> {
    const id = revertRequestId(change.id);
    const { timeBoxMs, auditId } = change;
    const given = timeBoxRevertAuthority(change);
    if (change.state !== 'applied' || timeBoxMs === undefined || auditId === undefined || !given)
      throw new Error(`time box: ${change.id} is not an applied, time-boxed change`);
    const glass = given.kind === 'break-glass';
    const approval = clip(
      `${glass ? 'applied by break-glass' : 'approved'} with ${change.id}, time-boxed to ${formatDuration(timeBoxMs)}: ${given.reason}`,
    );
    const env = ctx.environment(change.env);
    const refused = glass
      ? breakGlassRefusal({
          env: env.name,
          allowed: env.breakGlass !== undefined,
          role: given.by === change.requester.user ? 'requester' : 'other',
          reason: approval,
          mode: env.mode,
        })
      : decideRefusal({
          kind: 'approve',
          role: await ctx.roleOf(change, given.by),
          env: change.env,
          mode: env.mode,
          reason: approval,
        });
    if (refused) throw new WorkflowError(refused, { request: change });
    if (!(await storeCall('get', () => store.get(id))))
      await fileTimeBoxRevert(change, id, timeBoxMs, auditId).catch(orFiledAlready);
    // Idempotent: a retry after the move finds it approved already ('moved').
    const at = ctx.now();
    const moved = await storeCall(
      'decide',
      (): Promise<ApproveOutcome | TransitionOutcome> =>
        glass
          ? store.breakGlass(id, {
              by: given.by,
              reason: approval,
              at: at.toISOString(),
              reviewBy: new Date(at.getTime() + (env.breakGlass?.reviewWithinMs ?? 0)).toISOString(),
            })
          : store.transition(id, {
              move: 'approveWithChange',
              set: { decision: { kind: 'approve', by: given.by, reason: approval, at: at.toISOString() } },
            }),
      'nothing was decided',
    );
    if (moved.kind === 'missing') throw new WorkflowError({ code: 'not-found', what: 'change request', id });
    await ctx.options.queue.enqueue(id);
    ctx.log.info(
      { requestId: id, revertOf: change.id, by: given.kind },
      'time box: revert approved with its change, queued',
    );
    return moved.request;
  }

  return { approveTimeBoxRevert };
}

/** A reason cut to MAX_REASON (the approved revert quotes its change's approval). */
function clip(reason: string): string {
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
}
