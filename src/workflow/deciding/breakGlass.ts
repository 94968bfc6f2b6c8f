import { type AuditEntry, reviewRecordId } from '../../audit/index.ts';
import { lossToAcknowledge } from '../../policy/impact/index.ts';
import { WorkflowError } from '../errors.ts';
import { breakGlassRefusal, type DeciderRole, reviewRefusal } from '../rules.ts';
import type { RecordingServices } from '../services.ts';
import { derivedRequestId } from '../timebox/timebox.ts';
import type {
  ApplyQueue,
  BreakGlassInput,
  ChangeRequest,
  DecideResult,
  Filed,
  FiledSet,
  Origin,
  ReviewInput,
  ReviewResult,
  WorkflowEnvironment,
} from '../types.ts';

/**
 * Break-glass: a pending request applied by its requester without an approval (where the
 * environment allows it), through the same atomic move out of `pending` and the same apply job as
 * an approved one; and its review afterwards by an approver, recorded in the audit trail (a record
 * of its own: the change's record is sealed and never changed). Who may do either is rules.ts's;
 * createWorkflow (filing/workflow.ts) hands in what it shares (filing/context.ts).
 */

export interface BreakGlassDeps extends RecordingServices {
  readonly queue: ApplyQueue;
  readonly environment: (name: string) => WorkflowEnvironment;
  readonly isApprover: (env: string, user: string) => Promise<boolean>;
  /** Refuses a user who is not a person (rules.ts `actorRefusal`; filing/context.ts). */
  readonly assertActor: (user: string) => void;
  /** A store call whose Redis failure becomes `store-unavailable` (filing/context.ts). */
  readonly storeCall: <T>(what: string, call: () => Promise<T>, notDone?: string) => Promise<T>;
  /**
   * The revert of an audit record, as the approver reviewing it would file it, checked and
   * previewed but not stored: the review's move stores it, and only for the review that holds.
   * A set's record: the revert of the whole set, planned like any set.
   */
  readonly revertFor: (
    auditId: string,
    user: string,
    origin: Origin | undefined,
    reason: string,
    id: string,
  ) => Promise<Filed | FiledSet>;
}

/** Refuses, before anything is filed, a `--break-glass` rules.ts does not let the requester make. */
export function assertMayBreakGlassAtFiling(env: WorkflowEnvironment, reason: string | undefined): void {
  const refused = breakGlassRefusal({
    env: env.name,
    allowed: env.breakGlass !== undefined,
    role: 'requester',
    reason: reason?.trim() ?? '',
    mode: env.mode,
  });
  if (refused) throw new WorkflowError(refused);
}

export function createBreakGlass(deps: BreakGlassDeps) {
  const { store, storeCall } = deps;
  const notFound = (id: string) => new WorkflowError({ code: 'not-found', what: 'change request', id });

  /**
   * `lossShown`: whether the requester was shown the loss to acknowledge (the Break glass form); a
   * `--break-glass` at filing was not (workflow.ts's file), and is not asked it.
   */
  async function breakGlass(id: string, input: BreakGlassInput, lossShown = true): Promise<DecideResult> {
    deps.assertActor(input.user);
    const reason = input.reason.trim();
    const undecided = 'nothing was applied';
    const request = await storeCall('get', () => store.get(id), undecided);
    if (!request) throw notFound(id);
    const env = deps.environment(request.env);
    const refused = breakGlassRefusal({
      env: env.name,
      allowed: env.breakGlass !== undefined,
      role: input.user === request.requester.user ? 'requester' : 'other',
      reason,
      mode: env.mode,
      ...(lossShown
        ? {
            loss: lossToAcknowledge(request.preview.summary.impact),
            acknowledgedLoss: input.acknowledgedLoss === true,
          }
        : {}),
    });
    if (refused) throw new WorkflowError(refused, { request });
    const at = deps.now();
    const reviewWithinMs = env.breakGlass?.reviewWithinMs ?? 0;
    const outcome = await storeCall(
      'break glass',
      () =>
        store.breakGlass(id, {
          by: input.user,
          reason,
          at: at.toISOString(),
          reviewBy: new Date(at.getTime() + reviewWithinMs).toISOString(),
        }),
      undecided,
    );
    if (outcome.kind === 'missing') throw notFound(id);
    if (outcome.kind === 'expired') {
      await deps.notify.stateChanged(outcome.request);
      return { outcome: 'expired', request: outcome.request };
    }
    if (outcome.kind !== 'approved') {
      const state = outcome.request.state;
      return { outcome: state === 'expired' ? 'expired' : 'already-decided', request: outcome.request };
    }
    deps.log.warn({ requestId: id, by: input.user, env: env.name }, 'break glass: applying without approval');
    try {
      await deps.queue.enqueue(id);
    } catch (err) {
      // The request stays `approved`: the worker's sweep queues every approved request it finds.
      deps.log.error({ err, requestId: id }, 'apply job not queued; the worker sweep will queue it');
    }
    await deps.notify.stateChanged(outcome.request);
    return { outcome: 'decided', request: outcome.request };
  }

  /** Who the reviewer is to the change: who broke the glass is its requester here. */
  async function roleOf(r: ChangeRequest, user: string): Promise<DeciderRole> {
    if (user === r.breakGlass?.by) return 'requester';
    return (await deps.isApprover(r.env, user)) ? 'approver' : 'other';
  }

  async function review(id: string, input: ReviewInput): Promise<ReviewResult> {
    deps.assertActor(input.user);
    const reason = input.reason.trim();
    const notDone = 'nothing was reviewed';
    const request = await storeCall('get', () => store.get(id), notDone);
    if (!request) throw notFound(id);
    const refused = reviewRefusal({
      env: request.env,
      role: await roleOf(request, input.user),
      reason,
      request,
    });
    if (refused) throw new WorkflowError(refused, { request });
    const auditId = request.auditId;
    if (!auditId) throw new WorkflowError({ code: 'nothing-to-review', state: request.state }, { request });
    // The revert is checked and previewed first: refused (nothing to revert, broker not asked),
    // nothing is reviewed. Then one move decides the review and stores the revert with it, only if
    // this review holds: of a Review and a Revert at once, or two Reverts, one review is kept, and
    // a revert exists only where the kept review says so, filed and posted by its reviewer alone.
    const revertId = derivedRequestId('break-glass-revert', id);
    const revert =
      input.outcome === 'reverted'
        ? await deps.revertFor(auditId, input.user, input.origin, reason, revertId)
        : undefined;
    const at = deps.now().toISOString();
    const given = {
      outcome: input.outcome,
      by: input.user,
      reason,
      at,
      ...(input.outcome === 'reverted' ? { revertRequestId: revertId } : {}),
    };
    const moved = await storeCall('review', () => store.review(id, given, revert?.request), notDone);
    if (moved.kind === 'missing') throw notFound(id);
    const withRevert = revert && moved.kind === 'reviewed' ? { revert } : {};
    if (moved.kind === 'not-reviewable')
      throw new WorkflowError(
        { code: 'nothing-to-review', state: moved.request.state },
        { request: moved.request },
      );
    // Recorded from the review the store holds, idempotently: the loser of a race (or a retry after
    // a failed append) seals the same record once.
    await recordReview(moved.request, auditId);
    if (moved.kind === 'already-reviewed')
      return { outcome: 'already-reviewed', request: moved.request, ...withRevert };
    deps.log.info({ requestId: id, by: input.user, outcome: input.outcome }, 'break glass: reviewed');
    await deps.notify.reviewed(moved.request);
    return { outcome: 'reviewed', request: moved.request, ...withRevert };
  }

  async function recordReview(r: ChangeRequest, auditId: string): Promise<void> {
    const given = r.review;
    if (!given) return;
    const entry: AuditEntry = {
      id: reviewRecordId(r.id),
      at: given.at,
      env: r.env,
      vhost: r.vhost,
      policy: r.policy,
      operator: r.layer === 'operator',
      action: 'review',
      requestId: r.id,
      reviewOf: auditId,
      actor: given.by,
      review: {
        outcome: given.outcome,
        reason: given.reason,
        ...(given.revertRequestId ? { revertRequestId: given.revertRequestId } : {}),
      },
    };
    await storeCall('review record', () => deps.audit.append(entry), 'the review was not recorded');
  }

  return {
    breakGlass: (id: string, input: BreakGlassInput) => breakGlass(id, input),
    /** A `--break-glass` at filing (workflow.ts's file): no form showed the loss. */
    breakGlassAtFiling: (id: string, input: BreakGlassInput) => breakGlass(id, input, false),
    review,
    listUnreviewed: (env?: string) =>
      storeCall('unreviewed', () => store.listUnreviewed(env), 'nothing was read'),
  };
}
