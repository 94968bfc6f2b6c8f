/**
 * A little over the size aim on purpose: filing, deciding, reverts and the time box's revert share
 * one closure (the environment lookup, the store calls, fileRequest); what stands apart is apart
 * (break-glass in breakGlass.ts, the Notifier's logging in notifierLogging.ts).
 */
import type { Redis } from 'ioredis';
import type { AuditTrail } from '../../audit/index.ts';
import { isChange } from '../../audit/index.ts';
import { formatDuration } from '../../core/index.ts';
import { planChanges } from '../../plan/index.ts';
import { lossToAcknowledge } from '../../policy/impact/index.ts';
import type { Policy } from '../../policy/index.ts';
import { actionOf, policyDiff, writeActionOf } from '../../policy/index.ts';
import { type PreviewAnswer, type PreviewInput, preview } from '../../preview/index.ts';
import { isRabbitError } from '../../rabbit/index.ts';
import type { WorkflowBroker } from '../broker.ts';
import { type ChangeSet, NO_LOSS, plannedSet, setImpact, transitionOf } from '../changeSet.ts';
import { assertMayBreakGlassAtFiling, createBreakGlass } from '../deciding/breakGlass.ts';
import { expireDue } from '../deciding/expiry.ts';
import type { Freeze, FreezeStore } from '../deciding/freeze.ts';
import { freezeEntry, RAN_OUT, releaseHeld } from '../deciding/thaw.ts';
import { orFiledAlready, orStoreUnavailable, WorkflowError } from '../errors.ts';
import { notifierLogging } from '../notifierLogging.ts';
import {
  actorRefusal,
  approvalsOf,
  breakGlassRefusal,
  type DeciderRole,
  decideRefusal,
  environmentRefusal,
  fileRefusal,
  freezeRefusal,
  hasApproved,
  MAX_REASON,
  type RevertWayFacts,
  requesterRefusal,
  revertWayRefusal,
  timeBoxRevertAuthority,
  vhostRefusal,
} from '../rules.ts';
import { type ApproveOutcome, newRequestId, type RequestStore, type TransitionOutcome } from '../store.ts';
import {
  derivedRequestId,
  revertChanges,
  revertOf,
  revertRequestId,
  revertSteps,
} from '../timebox/timebox.ts';
import type {
  ChangeRequest,
  DecideInput,
  DecideResult,
  Filed,
  FiledSet,
  FileInput,
  FileSetInput,
  Origin,
  PreviewSnapshot,
  RequestAction,
  Workflow,
  WorkflowEnvironment,
  WorkflowOptions,
} from '../types.ts';
import { whyIdentityCannotWrite } from './identity.ts';

/** What the workflow works with, built by the composition root (src/bot/botChangeRequests.ts `workflowDeps`) and handed in. */
export interface WorkflowDeps {
  /** The app's Redis, which the stores sit on: pinged before a filing previews anything. */
  readonly redis: Redis;
  readonly requests: RequestStore;
  /** Read for reverts (the record a revert undoes); appended by the apply job and the watchers. */
  readonly audit: AuditTrail;
  readonly freezes: FreezeStore;
}

/**
 * The workflow's front: filing (the rules, the broker's checks, preview, store), deciding (the
 * rules, one atomic move), reverts, expiry. Who may do what is rules.ts's; applying is the
 * worker's (worker.ts); both share the store and the Notifier.
 */
export function createWorkflow(options: WorkflowOptions & WorkflowDeps): Workflow {
  const now = options.now ?? (() => new Date());
  const { requests: store, audit, freezes } = options;
  const notify = notifierLogging(options.notifier, options.log);

  function environment(name: string | undefined): WorkflowEnvironment {
    const env =
      name === undefined ? options.environments[0] : options.environments.find((e) => e.name === name);
    if (!env) {
      throw new WorkflowError({
        code: 'unknown-env',
        env: name,
        known: options.environments.map((e) => e.name),
      });
    }
    return env;
  }

  /** Refuses (`not-a-user`) a signed payload whose user is not a person. */
  function assertActor(user: string): void {
    const refused = actorRefusal(user);
    if (refused) throw new WorkflowError(refused);
  }

  /**
   * Refuses (`not-requester`, naming who may ask or approve) a user the environment does not let
   * file; `reviewing`: an approver filing the revert of the break-glass change they review.
   */
  async function assertMayRequest(env: WorkflowEnvironment, user: string, reviewing = false): Promise<void> {
    assertActor(user);
    const requesters = options.approvers.requesters(env.name);
    const refused = requesterRefusal({
      env: env.name,
      requesters,
      isRequester: requesters.length > 0 && (await options.approvers.isRequester(env.name, user)),
      approvers: options.approvers.configured(env.name),
      reviewing,
    });
    if (refused) throw new WorkflowError(refused);
  }

  /** Refuses a freeze or unfreeze rules.ts does not let this user make. */
  async function assertMayFreeze(env: WorkflowEnvironment, user: string, reason: string, forMs?: number) {
    assertActor(user);
    const refused = freezeRefusal({
      env: env.name,
      isApprover: await options.approvers.isApprover(env.name, user),
      reason: reason.trim(),
      ...(forMs === undefined ? {} : { forMs }),
    });
    if (refused) throw new WorkflowError(refused);
  }

  /** Who `user` is to `request`: the directory is asked only about someone else. */
  async function roleOf(request: ChangeRequest, user: string): Promise<DeciderRole> {
    if (user === request.requester.user) return 'requester';
    return (await options.approvers.isApprover(request.env, user)) ? 'approver' : 'other';
  }

  /** A store call whose Redis failure becomes `store-unavailable`, saying what did not happen. */
  async function storeCall<T>(
    what: string,
    call: () => Promise<T>,
    notDone = 'nothing was filed',
  ): Promise<T> {
    return orStoreUnavailable(notDone, call, (err) =>
      options.log.error({ err }, `request store: ${what} failed`),
    );
  }

  /** How a request is filed beyond its input: as a revert (of an audit record), under a given id. */
  interface Filing {
    readonly action: RequestAction;
    readonly revertOf?: string;
    /** The stale request it files again (`fileAgain`). */
    readonly againOf?: string;
    /** The time box's approved revert, and a request filed again, have an id derived from another's. */
    readonly id?: string;
    readonly approvalsChannel?: string | undefined;
    /**
     * A time box's revert, asked for with its change: who may ask was checked when the change was
     * filed, so a requester removed from `requesters` since does not leave the change in place.
     */
    readonly askedWithChange?: true;
    /** A break-glass change's revert, filed by the approver reviewing it (rules.ts `requesterRefusal`). */
    readonly reviewing?: true;
    /** A user's revert of `revertOf`: one open at a time (the store's claim), another refused `already-filed`. */
    readonly claim?: true;
  }

  /** The bot's broker identity may write that layer in that vhost, or the filing is refused. */
  async function assertIdentityCanWrite(broker: WorkflowBroker, vhost: string, layer: 'user' | 'operator') {
    let cannot: string | null;
    try {
      cannot = await whyIdentityCannotWrite(broker, vhost, layer);
    } catch (err) {
      if (!isRabbitError(err)) throw err;
      throw new WorkflowError(
        { code: 'broker-not-asked', why: err.code, detail: err.reason ?? err.message },
        {},
        { cause: err },
      );
    }
    if (cannot) throw new WorkflowError({ code: 'identity-cannot-write', reason: cannot });
  }

  async function fileRequest(input: FileInput, filing: Filing): Promise<Filed> {
    const filed = await requestFor(input, filing);
    const { request } = filed;
    if (!(await storeCall('create', () => store.create(request))))
      throw new WorkflowError({ code: 'already-filed', id: request.id });
    options.log.info(
      { requestId: request.id, env: request.env, vhost: request.vhost, policy: request.policy },
      'request filed',
    );
    return filed;
  }

  /** The request `input` files, checked and previewed as filing does, not stored yet. */
  async function requestFor(input: FileInput, filing: Filing): Promise<Filed> {
    const env = environment(input.env);
    const closed = environmentRefusal(env) ?? vhostRefusal(env, input.vhost);
    if (closed) throw new WorkflowError(closed);
    if (!filing.askedWithChange) await assertMayRequest(env, input.requester.user, filing.reviewing === true);
    // Before the broker is asked: a request that cannot be stored is refused at once.
    await storeCall('ping', () => options.redis.ping());
    const broker = options.brokerFor(env.name);
    const previewInput: PreviewInput = {
      action: input.action,
      name: input.policy,
      layer: input.layer,
      vhost: input.vhost,
      env: env.name,
      fields: input.fields,
    };
    await assertIdentityCanWrite(broker, input.vhost, input.layer);

    const result = await preview(previewInput, broker);
    if (result.status === 'refused') {
      throw new WorkflowError(
        { code: 'preview-refused', refusals: result.refusals.map((p) => p.message) },
        { preview: result },
      );
    }
    if (result.status === 'not-asked') {
      throw new WorkflowError(
        { code: 'broker-not-asked', why: result.why, detail: result.detail },
        { preview: result },
      );
    }
    if (result.diff.unchanged) throw new WorkflowError({ code: 'nothing-to-do' }, { preview: result });
    // After the preview: a change the broker would refuse is told before a missing reason.
    const reason = input.requester.reason?.trim();
    const refused = fileRefusal({ env, action: input.action, reason });
    if (refused) throw new WorkflowError(refused, { preview: result });

    const created = now();
    const approvalsChannel = 'approvalsChannel' in filing ? filing.approvalsChannel : env.approvalsChannel;
    const request: ChangeRequest = {
      id: filing.id ?? newRequestId(),
      env: env.name,
      vhost: input.vhost,
      layer: input.layer,
      action: filing.action,
      policy: input.policy,
      before: result.change.before,
      after: result.change.after,
      preview: snapshotOf(result),
      requester: { user: input.requester.user, ...(reason ? { reason } : {}) },
      origin: input.origin,
      ...(approvalsChannel ? { approvalsChannel } : {}),
      state: 'pending',
      approvalsRequired: env.approvalsRequired ?? 1,
      createdAt: created.toISOString(),
      expiresAt: new Date(created.getTime() + env.requestTtlMs).toISOString(),
      updatedAt: created.toISOString(),
      ...(filing.revertOf ? { revertOf: filing.revertOf } : {}),
      ...(filing.againOf ? { againOf: filing.againOf } : {}),
      ...(input.timeBoxMs !== undefined ? { timeBoxMs: input.timeBoxMs } : {}),
      ...(env.breakGlass ? { breakGlassOffered: true } : {}),
    };
    return { request, preview: result };
  }

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
      const planned = await plannedRevert(change, reason, 'as-left');
      const refused = revertWayRefusal(planned.way);
      if (refused) throw new WorkflowError(refused, { request: change });
      await fileSet(planned.input, filing);
      return;
    }
    const policy = (fields: ChangeRequest['before']): Policy | null =>
      fields && { vhost: change.vhost, name: change.policy, ...fields };
    const box = revertOf(policy(change.before), policy(change.after) as Policy);
    await fileRequest(
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
    const broker = options.brokerFor(environment(change.env).name);
    const vhosts = [...new Set(set.steps.map((s) => s.vhost))];
    const result = await planChanges(
      vhosts,
      (vhost, live) =>
        revertChanges(
          set.steps.filter((s) => s.vhost === vhost),
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
        steps: revertSteps({ id: change.id, steps: set.steps }, planned.steps),
        requester: { user: by.user, reason },
        origin: by.origin,
      },
      way: {
        objects: new Set(plan.transitional.map((t) => `${t.vhost}\u0000${t.kind}\u0000${t.name}`)).size,
        totals: planned.transitional ?? NO_LOSS,
      },
    };
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
    const env = environment(record.env);
    const target = record.before;
    // The revert's step runs from the record's after back to its before.
    const action = actionOf({ before: record.after, after: target });
    const where = origin ?? (env.approvalsChannel ? { channel: env.approvalsChannel } : undefined);
    if (!where) throw new WorkflowError({ code: 'no-approvals-channel', env: env.name });
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
   * time per record, so two clicks at once, on one replica or two, file one (issue 28, item 15);
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
    const filed = await requestFor(await revertInput(auditId, user, origin, reason), {
      action: 'revert',
      revertOf: auditId,
    });
    const request = { ...filed.request, revertOf: auditId };
    const { openAlready } = await storeCall('create', () => store.createRevert(request));
    if (openAlready) throw new WorkflowError({ code: 'already-filed', id: openAlready });
    options.log.info({ requestId: request.id, env: request.env, revertOf: auditId }, 'revert filed');
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
    const filed = await fileSet(input, { action: 'revert', revertOf: change.auditId, claim: true });
    options.log.info({ requestId: filed.request.id, env: change.env, revertOf: setId }, 'set revert filed');
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
    const env = environment(change.env);
    const where = origin ?? (env.approvalsChannel ? { channel: env.approvalsChannel } : undefined);
    if (!where) throw new WorkflowError({ code: 'no-approvals-channel', env: env.name });
    // Who may file is asked before the broker is.
    await assertMayRequest(env, user, reviewing);
    const { input } = await plannedRevert(change, reason ?? '', 'now', { user, origin: where });
    return { change: change as ChangeRequest & { auditId: string }, input };
  }

  /** The set request `input` files, checked as filing does, not stored yet. */
  async function setRequestFor(
    input: FileSetInput,
    filing: Omit<Filing, 'action'> & { readonly action?: 'revert' },
  ): Promise<ChangeRequest & { set: ChangeSet }> {
    const env = environment(input.env);
    const closed =
      environmentRefusal(env) ?? input.steps.map((s) => vhostRefusal(env, s.vhost)).find((r) => r !== null);
    if (closed) throw new WorkflowError(closed);
    if (!filing.askedWithChange) await assertMayRequest(env, input.requester.user, filing.reviewing === true);
    const [first] = input.steps;
    if (!first) throw new WorkflowError({ code: 'nothing-to-do' });
    const reason = input.requester.reason?.trim();
    const refused = fileRefusal({ env, action: 'import', reason });
    if (refused) throw new WorkflowError(refused);
    await storeCall('ping', () => options.redis.ping());
    const broker = options.brokerFor(env.name);
    const places = [...new Map(input.steps.map((s) => [`${s.layer} ${s.vhost}`, s])).values()];
    for (const s of places) await assertIdentityCanWrite(broker, s.vhost, s.layer);
    const created = now();
    const summary: PreviewSnapshot['summary'] = {
      objects: input.objects ?? 0,
      unpredictable: input.unpredictable ?? 0,
      risks: [],
      newTies: { count: 0, objects: [] },
      unanchoredCatch: null,
      groups: [],
      heldByOperator: 0,
      scanned: { queues: input.objects ?? 0, exchanges: 0 },
      ...(input.impact ? { impact: setImpact(input.impact, input.losing ?? [], input.transitional) } : {}),
    };
    const approvalsChannel = 'approvalsChannel' in filing ? filing.approvalsChannel : env.approvalsChannel;
    const request: ChangeRequest & { set: ChangeSet } = {
      id: filing.id ?? newRequestId(),
      env: env.name,
      vhost: first.vhost,
      layer: first.layer,
      action: filing.action ?? 'import',
      policy: input.source,
      before: first.before,
      after: first.after,
      set: {
        steps: [...input.steps],
        source: input.source,
        ...(input.transitional ? { transitional: input.transitional } : {}),
        ...(input.unchanged !== undefined ? { unchanged: input.unchanged } : {}),
      },
      preview: {
        brokerVersion: input.brokerVersion,
        summary,
        warnings: [],
        // The first step's: the set's steps are in `set`, each its own diff in the audit.
        diff: policyDiff({ action: actionOf(first), ...transitionOf(first) }),
        objects: input.objects ?? 0,
        unpredictable: input.unpredictable ?? 0,
      },
      requester: { user: input.requester.user, ...(reason ? { reason } : {}) },
      origin: input.origin,
      ...(approvalsChannel ? { approvalsChannel } : {}),
      state: 'pending',
      approvalsRequired: env.approvalsRequired ?? 1,
      createdAt: created.toISOString(),
      expiresAt: new Date(created.getTime() + env.requestTtlMs).toISOString(),
      updatedAt: created.toISOString(),
      ...(filing.revertOf ? { revertOf: filing.revertOf } : {}),
      ...(input.timeBoxMs !== undefined ? { timeBoxMs: input.timeBoxMs } : {}),
      ...(env.breakGlass ? { breakGlassOffered: true } : {}),
    };
    return request;
  }

  async function fileSet(
    input: FileSetInput,
    filing: Omit<Filing, 'action'> & { readonly action?: 'revert' } = {},
  ): Promise<FiledSet> {
    const request = await setRequestFor(input, filing);
    if (filing.claim && request.revertOf) {
      const { openAlready } = await storeCall('create', () =>
        store.createRevert({ ...request, revertOf: request.revertOf as string }),
      );
      if (openAlready) throw new WorkflowError({ code: 'already-filed', id: openAlready });
    } else if (!(await storeCall('create', () => store.create(request))))
      throw new WorkflowError({ code: 'already-filed', id: request.id });
    options.log.info(
      {
        requestId: request.id,
        env: request.env,
        steps: input.steps.length,
        source: input.source,
        action: request.action,
      },
      'change set filed',
    );
    return { request };
  }

  const glass = createBreakGlass({
    store,
    audit,
    queue: options.queue,
    notify,
    log: options.log,
    now,
    environment,
    isApprover: (env, user) => options.approvers.isApprover(env, user),
    assertActor,
    storeCall,
    revertFor: async (auditId, user, origin, reason, id) => {
      // A break-glass set reverted on review: the whole set, as its Revert button would.
      const record = await audit.get(auditId);
      if (record && isChange(record) && record.set) {
        const { change, input } = await setRevertInput(record.set.id, user, origin, reason, true);
        const filing = { action: 'revert', revertOf: change.auditId, id, reviewing: true } as const;
        return { request: await setRequestFor(input, filing) };
      }
      return requestFor(await revertInput(auditId, user, origin, reason), {
        action: 'revert',
        revertOf: auditId,
        id,
        reviewing: true,
      });
    },
  });

  return {
    async file(input) {
      if (!input.breakGlass) return fileRequest(input, { action: input.action });
      // --break-glass: refused before anything is filed; then filed and applied at once, one move.
      assertMayBreakGlassAtFiling(environment(input.env), input.requester.reason);
      const filed = await fileRequest(input, { action: input.action });
      const broken = await glass.breakGlassAtFiling(filed.request.id, {
        user: input.requester.user,
        reason: input.requester.reason ?? '',
      });
      return { ...filed, request: broken.request };
    },
    async fileSet(input) {
      if (!input.breakGlass) return fileSet(input);
      assertMayBreakGlassAtFiling(environment(input.env), input.requester.reason);
      const filed = await fileSet(input);
      const broken = await glass.breakGlassAtFiling(filed.request.id, {
        user: input.requester.user,
        reason: input.requester.reason ?? '',
      });
      return { request: broken.request };
    },
    breakGlass: glass.breakGlass,
    review: glass.review,
    listUnreviewed: glass.listUnreviewed,
    mayRequest: (env, user) => assertMayRequest(environment(env), user),

    async decide(id, input: DecideInput): Promise<DecideResult> {
      assertActor(input.user);
      const reason = input.reason.trim();
      const undecided = 'nothing was decided';
      const request = await storeCall('get', () => store.get(id), undecided);
      if (!request) throw new WorkflowError({ code: 'not-found', what: 'change request', id });
      const refused = decideRefusal({
        kind: input.kind,
        role: reason ? await roleOf(request, input.user) : 'other',
        env: request.env,
        mode: environment(request.env).mode,
        reason,
        alreadyApproved: hasApproved(request, input.user),
        loss: lossToAcknowledge(request.preview.summary.impact),
        acknowledgedLoss: input.acknowledgedLoss === true,
      });
      if (refused) throw new WorkflowError(refused, { request });
      const at = now().toISOString();
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
        options.log.info(
          { requestId: id, by: input.user, approvals: approvalsOf(outcome.request).length },
          'approval counted; more needed',
        );
        await notify.stateChanged(outcome.request);
        return { outcome: 'counted', request: outcome.request };
      }
      options.log.info({ requestId: id, decision: input.kind, by: input.user }, 'request decided');
      if (input.kind === 'approve') {
        try {
          await options.queue.enqueue(id);
        } catch (err) {
          // The request stays `approved`: the worker's sweep queues every approved request it finds.
          options.log.error({ err, requestId: id }, 'apply job not queued; the worker sweep will queue it');
        }
      }
      await notify.stateChanged(outcome.request);
      return { outcome: 'decided', request: outcome.request };
    },

    async freeze(input) {
      const env = environment(input.env);
      await assertMayFreeze(env, input.user, input.reason, input.forMs);
      const at = now();
      const freeze: Freeze = {
        until: new Date(at.getTime() + input.forMs).toISOString(),
        by: input.user,
        reason: input.reason.trim(),
        at: at.toISOString(),
      };
      const done = await storeCall(
        'freeze',
        () => freezes.freeze(env.name, freeze, at),
        'nothing was frozen',
      );
      if (done.outcome === 'running')
        throw new WorkflowError({
          code: 'already-frozen',
          env: env.name,
          until: done.running.until,
          by: done.running.by,
        });
      if (done.outcome === 'replaced')
        await audit.append(freezeEntry(env.name, done.ended, at, { because: RAN_OUT }));
      await audit.append(freezeEntry(env.name, freeze, at));
      options.log.info({ env: env.name, until: freeze.until, by: input.user }, 'environment frozen');
      return { env: env.name, freeze };
    },

    async unfreeze(input) {
      const env = environment(input.env);
      await assertMayFreeze(env, input.user, input.reason);
      const at = now();
      const lifted = await storeCall('unfreeze', () => freezes.lift(env.name, at), 'nothing was unfrozen');
      if (!lifted) return { env: env.name, lifted, released: 0 };
      await audit.append(freezeEntry(env.name, lifted, at, { because: input.reason.trim(), by: input.user }));
      const released = await releaseHeld(store, options.queue, env.name);
      options.log.info({ env: env.name, by: input.user, released }, 'freeze lifted');
      return { env: env.name, lifted, released };
    },

    async frozen(name) {
      const env = environment(name);
      return {
        env: env.name,
        freeze: await storeCall('frozen', () => freezes.current(env.name, now()), 'nothing was read'),
      };
    },

    get: (id) => storeCall('get', () => store.get(id), 'nothing was read'),
    listOpen: (env) => storeCall('list', () => store.listOpen(env), 'nothing was read'),

    async attachMessage(id, channel, ts) {
      const r = await storeCall(
        'attach',
        () => store.attachMessage(id, channel, ts),
        'the message was not recorded',
      );
      if (!r) throw new WorkflowError({ code: 'not-found', what: 'change request', id });
      return r;
    },

    revertRequestFor,

    async revertSetFor(change, reason) {
      if (!change.set || change.auditId === undefined)
        throw new Error(`time box: ${change.id} is not an applied set`);
      const id = derivedRequestId('timebox-ask', change.id);
      const filed = await storeCall('get', () => store.get(id), 'nothing was read');
      if (filed) return filed;
      const { input } = await plannedRevert(change, reason, 'now');
      const { request } = await fileSet(input, {
        action: 'revert',
        revertOf: change.auditId,
        id,
        approvalsChannel: change.approvalsChannel,
        askedWithChange: true,
      });
      return request;
    },

    async approveTimeBoxRevert(change) {
      const id = revertRequestId(change.id);
      const { timeBoxMs, auditId } = change;
      const given = timeBoxRevertAuthority(change);
      if (change.state !== 'applied' || timeBoxMs === undefined || auditId === undefined || !given)
        throw new Error(`time box: ${change.id} is not an applied, time-boxed change`);
      const glass = given.kind === 'break-glass';
      const approval = clip(
        `${glass ? 'applied by break-glass' : 'approved'} with ${change.id}, time-boxed to ${formatDuration(timeBoxMs)}: ${given.reason}`,
      );
      const env = environment(change.env);
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
            role: await roleOf(change, given.by),
            env: change.env,
            mode: env.mode,
            reason: approval,
          });
      if (refused) throw new WorkflowError(refused, { request: change });
      if (!(await storeCall('get', () => store.get(id))))
        await fileTimeBoxRevert(change, id, timeBoxMs, auditId).catch(orFiledAlready);
      // Idempotent: a retry after the move finds it approved already ('moved').
      const at = now();
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
      if (moved.kind === 'missing')
        throw new WorkflowError({ code: 'not-found', what: 'change request', id });
      await options.queue.enqueue(id);
      options.log.info(
        { requestId: id, revertOf: change.id, by: given.kind },
        'time box: revert approved with its change, queued',
      );
      return moved.request;
    },

    async fileAgain(staleId) {
      const stale = await storeCall('get', () => store.get(staleId));
      if (!stale) throw new WorkflowError({ code: 'not-found', what: 'change request', id: staleId });
      if (stale.state !== 'stale' || stale.staleBecause !== 'loss-grew')
        throw new Error(`${staleId} did not go stale on a bigger loss: not filed again`);
      const id = derivedRequestId('again', staleId);
      if (await storeCall('get', () => store.get(id)))
        throw new Error(`${staleId} was filed again already, as ${id}`);
      return fileRequest(
        {
          env: stale.env,
          vhost: stale.vhost,
          layer: stale.layer,
          // The same change: the policy it writes (or its deletion), on what is there now.
          action: writeActionOf(stale),
          policy: stale.policy,
          fields: stale.after ?? {},
          requester: stale.requester,
          origin: stale.origin,
          ...(stale.timeBoxMs === undefined ? {} : { timeBoxMs: stale.timeBoxMs }),
        },
        {
          action: stale.action,
          id,
          againOf: staleId,
          approvalsChannel: stale.approvalsChannel,
          ...(stale.revertOf ? { revertOf: stale.revertOf } : {}),
        },
      );
    },

    expireDue: () => expireDue(store, notify),
  };
}

/** A reason cut to MAX_REASON (the approved revert quotes its change's approval). */
function clip(reason: string): string {
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
}

export function snapshotOf(p: PreviewAnswer): PreviewSnapshot {
  return {
    brokerVersion: p.brokerVersion,
    summary: p.summary,
    warnings: p.warnings,
    diff: p.diff,
    objects: p.objects.length,
    unpredictable: p.unpredictable.length,
  };
}
