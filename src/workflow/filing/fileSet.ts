import { actionOf, policyDiff } from '../../policy/index.ts';
import {
  type ChangeSet,
  isParameterSetStep,
  PARAMETERS_NOT_REVERTED,
  type PolicySetStep,
  type SetStep,
  setImpact,
  transitionOf,
} from '../changeSet.ts';
import { WorkflowError } from '../errors.ts';
import { environmentRefusal, fileRefusal, vhostRefusal } from '../rules.ts';
import type { ChangeRequest, FiledSet, FileSetInput, PreviewSnapshot } from '../types.ts';
import type { WorkflowContext } from './context.ts';
import { assertIdentityCanWrite } from './identity.ts';
import { newRequest, type SetFiling } from './newRequest.ts';

/** Filing a set (an import, a set's revert): checked as one change is, its plan already made, stored. */
export function createFileSet(ctx: WorkflowContext) {
  const { options, store, storeCall } = ctx;

  /** The set request `input` files, checked as filing does, not stored yet. */
  async function setRequestFor(
    input: FileSetInput,
    filing: SetFiling,
  ): Promise<ChangeRequest & { set: ChangeSet }> {
    const env = ctx.environment(input.env);
    const closed =
      environmentRefusal(env) ?? input.steps.map((s) => vhostRefusal(env, s.vhost)).find((r) => r !== null);
    if (closed) throw new WorkflowError(closed);
    if (!filing.askedWithChange)
      await ctx.assertMayRequest(env, input.requester.user, filing.reviewing === true);
    const [first] = input.steps;
    if (!first) throw new WorkflowError({ code: 'nothing-to-do' });
    if (input.timeBoxMs !== undefined && input.steps.some(isParameterSetStep))
      throw new WorkflowError({ code: 'preview-refused', refusals: [PARAMETERS_NOT_REVERTED] });
    const reason = input.requester.reason?.trim();
    const refused = fileRefusal({ env, action: 'import', reason });
    if (refused) throw new WorkflowError(refused);
    await storeCall('ping', () => options.redis.ping());
    const broker = options.brokerFor(env.name);
    // A parameter is written with the same rights as a user policy (the policymaker tag, configure).
    const places = new Map(input.steps.map((s) => [`${layerOf(s)} ${s.vhost}`, s]));
    for (const s of places.values()) await assertIdentityCanWrite(broker, s.vhost, layerOf(s));
    const lead = leadOf(input.steps);
    const set: ChangeSet = {
      steps: [...input.steps],
      source: input.source,
      ...(input.transitional ? { transitional: input.transitional } : {}),
      ...(input.unchanged !== undefined ? { unchanged: input.unchanged } : {}),
    };
    const request = newRequest(
      env,
      { ...filing, action: filing.action ?? 'import' },
      {
        vhost: first.vhost,
        layer: lead?.layer ?? 'user',
        policy: input.source,
        before: lead?.before ?? null,
        after: lead?.after ?? null,
        set,
        preview: setSnapshot(input),
        requester: { user: input.requester.user, reason },
        origin: input.origin,
        timeBoxMs: input.timeBoxMs,
      },
      ctx.now(),
    );
    return { ...request, set };
  }

  async function fileSet(input: FileSetInput, filing: SetFiling = {}): Promise<FiledSet> {
    const request = await setRequestFor(input, filing);
    if (filing.claim && request.revertOf) {
      const { openAlready } = await storeCall('create', () =>
        store.createRevert({ ...request, revertOf: request.revertOf as string }),
      );
      if (openAlready) throw new WorkflowError({ code: 'already-filed', id: openAlready });
    } else if (!(await storeCall('create', () => store.create(request))))
      throw new WorkflowError({ code: 'already-filed', id: request.id });
    ctx.log.info(
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

  return { setRequestFor, fileSet };
}

const layerOf = (s: SetStep) => (isParameterSetStep(s) ? 'user' : s.layer);

/**
 * The policy step a set's request is filed under (its layer, before and after): the first policy
 * step; none in a set of parameters alone (the request then names no policy of its own).
 */
const leadOf = (steps: readonly SetStep[]): PolicySetStep | undefined =>
  steps.find((s): s is PolicySetStep => !isParameterSetStep(s));

/**
 * A set's preview: its own figures (planned before filing); the diff is its first policy step's
 * (none in a set of parameters alone), each step's own is in the audit.
 */
function setSnapshot(input: FileSetInput): PreviewSnapshot {
  const lead = leadOf(input.steps);
  const diff = lead
    ? policyDiff({ action: actionOf(lead), ...transitionOf(lead) })
    : policyDiff({ action: 'edit', layer: 'user', before: null, after: null });
  return {
    brokerVersion: input.brokerVersion,
    summary: {
      objects: input.objects ?? 0,
      unpredictable: input.unpredictable ?? 0,
      risks: [],
      newTies: { count: 0, objects: [] },
      unanchoredCatch: null,
      groups: [],
      heldByOperator: 0,
      scanned: { queues: input.objects ?? 0, exchanges: 0 },
      // A re-created policy's: what its objects go through between the two writes, and the links they stop.
      ...(input.between
        ? {
            objects: input.between.objects,
            risks: input.between.risks,
            newTies: input.between.newTies,
            unanchoredCatch: input.between.unanchoredCatch,
            groups: input.between.groups,
            heldByOperator: input.between.heldByOperator,
            scanned: input.between.scanned,
          }
        : {}),
      // The loss acknowledged is the set's; a re-created policy shows it object by object as its delete does.
      ...(input.impact ? { impact: setLoss({ ...input, impact: input.impact }) } : {}),
    },
    warnings: [],
    diff,
    objects: input.between?.objects ?? input.objects ?? 0,
    unpredictable: input.unpredictable ?? 0,
    ...(input.unread?.length ? { unread: [...input.unread] } : {}),
  };
}

/** A set's loss to acknowledge (its end state's and its way's); a re-created policy's, shown as its delete's objects. */
function setLoss(input: FileSetInput & { impact: NonNullable<FileSetInput['impact']> }) {
  const loss = setImpact(input.impact, input.losing ?? [], input.transitional);
  const between = input.between?.impact;
  return between ? { ...between, totals: loss.totals, queues: loss.queues } : loss;
}
