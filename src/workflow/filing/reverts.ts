import { isChange } from '../../audit/index.ts';
import { planChanges } from '../../plan/index.ts';
import { actionOf } from '../../policy/index.ts';
import {
  isParameterSetStep,
  NO_LOSS,
  PARAMETERS_NOT_REVERTED,
  plannedSet,
  policySteps,
  transitionOf,
} from '../changeSet.ts';
import { WorkflowError } from '../errors.ts';
import type { RevertWayFacts } from '../rules.ts';
import { derivedRequestId, revertChanges, revertSteps } from '../timebox/timebox.ts';
import type { ChangeRequest, Filed, FiledSet, FileInput, FileSetInput, Origin } from '../types.ts';
import type { WorkflowContext } from './context.ts';
import type { createFileOne } from './fileOne.ts';
import type { createFileSet } from './fileSet.ts';

/**
 * Reverts: what restores the state before an audit record (one change) or an applied set (the
 * whole set, planned again against the broker now), filed by a user (one open at a time per
 * record or set), by the approver reviewing a break-glass change, or asked for by a time box.
 */
export function createReverts(
  ctx: WorkflowContext,
  one: ReturnType<typeof createFileOne>,
  sets: ReturnType<typeof createFileSet>,
) {
  const { options, store, audit, storeCall } = ctx;

  /**
   * A time-boxed set's revert as a set, planned like any set against the broker now (src/plan/
   * `planChanges`): every policy it touched back as before, in the order the planner chooses, with
   * the revert's own figures (its end state's loss, and its way's: `way`). `from`: each policy
   * from where the set left it (the revert approved with the set: anything else there when it is
   * written makes it stale), or from what it is now (a revert asked for: one changed since).
   */
  async function plannedRevert(
    change: ChangeRequest,
    reason: string,
    from: 'as-left' | 'now',
    by: { readonly user: string; readonly origin: Origin } = {
      user: change.requester.user,
      origin: change.origin,
    },
  ): Promise<{ input: FileSetInput; way: RevertWayFacts }> {
    const set = change.set as NonNullable<ChangeRequest['set']>;
    if (set.steps.some(isParameterSetStep))
      throw new WorkflowError({ code: 'preview-refused', refusals: [PARAMETERS_NOT_REVERTED] });
    const steps = policySteps(set.steps);
    const broker = options.brokerFor(ctx.environment(change.env).name);
    const vhosts = [...new Set(steps.map((s) => s.vhost))];
    const result = await planChanges(
      vhosts,
      (vhost, live) =>
        revertChanges(
          steps.filter((s) => s.vhost === vhost),
          (s) =>
            from === 'as-left'
              ? transitionOf(s).after
              : ((s.layer === 'user' ? live.user : live.operator).find((p) => p.name === s.name) ?? null),
        ),
      broker,
    );
    if (result.status === 'not-asked')
      throw new WorkflowError({ code: 'broker-not-asked', why: result.why, detail: result.detail });
    if (result.status === 'refused')
      throw new WorkflowError({ code: 'preview-refused', refusals: result.problems });
    const { plan } = result;
    const planned = plannedSet(plan);
    return {
      input: {
        env: change.env,
        source: set.source,
        ...planned,
        steps: revertSteps({ id: change.id, steps }, policySteps(planned.steps)),
        requester: { user: by.user, reason },
        origin: by.origin,
      },
      way: {
        objects: new Set(plan.transitional.map((t) => `${t.vhost}\u0000${t.kind}\u0000${t.name}`)).size,
        totals: planned.transitional ?? NO_LOSS,
      },
    };
  }

  /** Where a revert's request is posted: where it was asked, else the environment's approvals channel. */
  function revertOrigin(envName: string, origin: Origin | undefined): Origin {
    const env = ctx.environment(envName);
    const where = origin ?? (env.approvalsChannel ? { channel: env.approvalsChannel } : undefined);
    if (!where) throw new WorkflowError({ code: 'no-approvals-channel', env: env.name });
    return where;
  }

  /** What restores the before state of audit record `auditId`, as a request filed by `user`. */
  async function revertInput(
    auditId: string,
    user: string,
    origin?: Origin,
    reason?: string,
  ): Promise<FileInput> {
    const record = await audit.get(auditId);
    // A freeze or a review changed no policy: there is no state before it to restore.
    if (!record || !isChange(record))
      throw new WorkflowError({ code: 'not-found', what: 'audit record', id: auditId });
    const where = revertOrigin(record.env, origin);
    const target = record.before;
    // The revert's step runs from the record's after back to its before.
    const action = actionOf({ before: record.after, after: target });
    return {
      env: record.env,
      vhost: record.vhost,
      layer: record.operator ? 'operator' : 'user',
      action,
      policy: record.policy,
      fields: target ?? {},
      requester: { user, ...(reason ? { reason } : {}) },
      origin: where,
    };
  }

  /**
   * A user's revert of audit record `auditId` (the Revert button, a time box's ask): one open at a
   * time per record, so two clicks at once, on one replica or two, file one (the store's claim);
   * the other is told `already-filed`, naming it.
   */
  async function revertRequestFor(
    auditId: string,
    user: string,
    origin?: Origin,
    reason?: string,
  ): Promise<Filed | FiledSet> {
    const record = await audit.get(auditId);
    if (record && isChange(record) && record.set)
      return revertSetRequestFor(record.set.id, user, origin, reason);
    const filed = await one.requestFor(await revertInput(auditId, user, origin, reason), {
      action: 'revert',
      revertOf: auditId,
    });
    const request = { ...filed.request, revertOf: auditId };
    const { openAlready } = await storeCall('create', () => store.createRevert(request));
    if (openAlready) throw new WorkflowError({ code: 'already-filed', id: openAlready });
    ctx.log.info({ requestId: request.id, env: request.env, revertOf: auditId }, 'revert filed');
    return filed;
  }

  /**
   * A user's revert of an applied set (the Revert button on any of its records): the whole set,
   * every policy it changed back as before, planned like any set against the broker now (its order
   * of writing the planner's, its own figures to acknowledge). One open at a time per set, however
   * many of its records were clicked: claimed on the set's last record.
   */
  async function revertSetRequestFor(
    setId: string,
    user: string,
    origin?: Origin,
    reason?: string,
  ): Promise<FiledSet> {
    const { change, input } = await setRevertInput(setId, user, origin, reason);
    const filed = await sets.fileSet(input, { action: 'revert', revertOf: change.auditId, claim: true });
    ctx.log.info({ requestId: filed.request.id, env: change.env, revertOf: setId }, 'set revert filed');
    return filed;
  }

  /** The applied set `setId` and its revert by `user`, planned against the broker now (as `revertSetRequestFor` files it). */
  async function setRevertInput(
    setId: string,
    user: string,
    origin?: Origin,
    reason?: string,
    reviewing = false,
  ) {
    const change = await storeCall('get', () => store.get(setId), 'nothing was filed');
    if (!change?.set || change.state !== 'applied' || change.auditId === undefined)
      throw new WorkflowError({ code: 'not-found', what: 'applied change set', id: setId });
    const where = revertOrigin(change.env, origin);
    // Who may file is asked before the broker is.
    await ctx.assertMayRequest(ctx.environment(change.env), user, reviewing);
    const { input } = await plannedRevert(change, reason ?? '', 'now', { user, origin: where });
    return { change: change as ChangeRequest & { auditId: string }, input };
  }

  /**
   * The revert of an audit record as the approver reviewing its break-glass change files it,
   * checked and previewed but not stored (the review's move stores it); a set's record: the whole set.
   */
  async function reviewRevertFor(
    auditId: string,
    user: string,
    origin: Origin | undefined,
    reason: string,
    id: string,
  ): Promise<Filed | FiledSet> {
    const record = await audit.get(auditId);
    if (record && isChange(record) && record.set) {
      const { change, input } = await setRevertInput(record.set.id, user, origin, reason, true);
      const filing = { action: 'revert', revertOf: change.auditId, id, reviewing: true } as const;
      return { request: await sets.setRequestFor(input, filing) };
    }
    return one.requestFor(await revertInput(auditId, user, origin, reason), {
      action: 'revert',
      revertOf: auditId,
      id,
      reviewing: true,
    });
  }

  /** A time box's ask to revert an applied set before its time: filed once, under an id derived from the set's. */
  async function revertSetFor(change: ChangeRequest, reason: string): Promise<ChangeRequest> {
    if (!change.set || change.auditId === undefined)
      throw new Error(`time box: ${change.id} is not an applied set`);
    const id = derivedRequestId('timebox-ask', change.id);
    const filed = await storeCall('get', () => store.get(id), 'nothing was read');
    if (filed) return filed;
    const { input } = await plannedRevert(change, reason, 'now');
    const { request } = await sets.fileSet(input, {
      action: 'revert',
      revertOf: change.auditId,
      id,
      approvalsChannel: change.approvalsChannel,
      askedWithChange: true,
    });
    return request;
  }

  return { plannedRevert, revertRequestFor, reviewRevertFor, revertSetFor };
}
