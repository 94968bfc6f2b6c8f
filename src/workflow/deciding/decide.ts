import { lossToAcknowledge } from '../../policy/impact/index.ts';
import { WorkflowError } from '../errors.ts';
import type { WorkflowContext } from '../filing/context.ts';
import { approvalsOf, decideRefusal, hasApproved } from '../rules.ts';
import type { ApproveOutcome, TransitionOutcome } from '../store.ts';
import type { DecideInput, DecideResult } from '../types.ts';

/**
 * Deciding a pending request: approve, reject or withdraw, checked by the rules and made in one
 * atomic move (the store's script counts the approvals); an approval that completes it queues the
 * apply job.
 */
export function createDecide(ctx: WorkflowContext) {
  const { store, storeCall, notify, log } = ctx;

  return async function decide(id: string, input: DecideInput): Promise<DecideResult> {
    ctx.assertActor(input.user);
    const reason = input.reason.trim();
    const undecided = 'nothing was decided';
    const request = await storeCall('get', () => store.get(id), undecided);
    if (!request) throw new WorkflowError({ code: 'not-found', what: 'change request', id });
    const refused = decideRefusal({
      kind: input.kind,
      role: reason ? await ctx.roleOf(request, input.user) : 'other',
      env: request.env,
      mode: ctx.environment(request.env).mode,
      reason,
      alreadyApproved: hasApproved(request, input.user),
      loss: lossToAcknowledge(request.preview.summary.impact),
      acknowledgedLoss: input.acknowledgedLoss === true,
    });
    if (refused) throw new WorkflowError(refused, { request });
    const at = ctx.now().toISOString();
    const outcome = await storeCall(
      'decide',
      (): Promise<ApproveOutcome | TransitionOutcome> =>
        input.kind === 'approve'
          ? store.approve(request, { by: input.user, reason, at })
          : store.transition(id, {
              move: 'reject',
              set: { decision: { kind: input.kind, by: input.user, reason, at } },
            }),
      undecided,
    );
    if (outcome.kind === 'missing')
      throw new WorkflowError({ code: 'not-found', what: 'change request', id });
    if (outcome.kind === 'expired') {
      await notify.stateChanged(outcome.request);
      return { outcome: 'expired', request: outcome.request };
    }
    if (outcome.kind === 'moved') {
      return {
        outcome: outcome.request.state === 'expired' ? 'expired' : 'already-decided',
        request: outcome.request,
      };
    }
    // Another click of the same approver, on another replica, got there between the read and the move.
    if (outcome.kind === 'duplicate')
      throw new WorkflowError({ code: 'already-approved' }, { request: outcome.request });
    if (outcome.kind === 'counted') {
      log.info(
        { requestId: id, by: input.user, approvals: approvalsOf(outcome.request).length },
        'approval counted; more needed',
      );
      await notify.stateChanged(outcome.request);
      return { outcome: 'counted', request: outcome.request };
    }
    log.info({ requestId: id, decision: input.kind, by: input.user }, 'request decided');
    if (input.kind === 'approve') {
      try {
        await ctx.options.queue.enqueue(id);
      } catch (err) {
        // The request stays `approved`: the worker's sweep queues every approved request it finds.
        log.error({ err, requestId: id }, 'apply job not queued; the worker sweep will queue it');
      }
    }
    await notify.stateChanged(outcome.request);
    return { outcome: 'decided', request: outcome.request };
  };
}
