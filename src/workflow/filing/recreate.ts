import { planChanges } from '../../plan/index.ts';
import type { Policy, Transition } from '../../policy/index.ts';
import { preview } from '../../preview/index.ts';
import { plannedSet, recreateSource } from '../changeSet.ts';
import { WorkflowError } from '../errors.ts';
import { environmentRefusal, vhostRefusal } from '../rules.ts';
import type { FileSetInput, RecreateInput } from '../types.ts';
import type { WorkflowContext } from './context.ts';

/**
 * A policy re-created: deleted, then created again exactly as it is, as one change set of two
 * steps, so that it is approved, applied, rolled back and audited as any set is. The broker
 * restarts a federation link when the policy of its exchange or queue is deleted and created
 * again, and not when the same policy is put again (docs/broker-facts.md): this is the one write
 * that answers "re-apply the policy" for a link that stopped or went missing. The bot writes it
 * only as an approved request; it never restarts anything itself.
 *
 * Its preview: what every object the policy governs goes through between the two writes (the
 * delete's own preview: what each falls back to and loses, the links it stops), and the set's
 * plan (its steps in the order given, each with the links it stops and starts; its way's loss;
 * its end state, which is now).
 */
export function createRecreate(ctx: WorkflowContext) {
  const { options } = ctx;

  /** The set that re-creates `input.policy`, planned and previewed against the broker now; not filed. */
  async function recreateInput(input: RecreateInput): Promise<FileSetInput> {
    const env = ctx.environment(input.env);
    const layer = input.layer ?? 'user';
    const closed = environmentRefusal(env) ?? vhostRefusal(env, input.vhost);
    if (closed) throw new WorkflowError(closed);
    // Who may file is asked before the broker is.
    await ctx.assertMayRequest(env, input.requester.user);
    const broker = options.brokerFor(env.name);
    const between = await preview(
      { action: 'delete', name: input.policy, layer, vhost: input.vhost, env: env.name, fields: {} },
      broker,
    );
    if (between.status === 'refused')
      throw new WorkflowError(
        { code: 'preview-refused', refusals: between.refusals.map((p) => p.message) },
        { preview: between },
      );
    if (between.status === 'not-asked')
      throw new WorkflowError({ code: 'broker-not-asked', why: between.why, detail: between.detail });
    // The two steps are made from the policy as the plan reads it, so both write what is there.
    const result = await planChanges(
      [input.vhost],
      (vhost, live) => {
        const now = (layer === 'user' ? live.user : live.operator).find((p) => p.name === input.policy);
        return now ? recreateSteps(layer, vhost, now) : [];
      },
      broker,
      { findings: false },
      broker,
    );
    if (result.status === 'not-asked')
      throw new WorkflowError({ code: 'broker-not-asked', why: result.why, detail: result.detail });
    if (result.status === 'refused')
      throw new WorkflowError({ code: 'preview-refused', refusals: result.problems });
    const planned = plannedSet(result.plan);
    return {
      env: env.name,
      source: recreateSource(input.policy),
      ...planned,
      between: between.summary,
      requester: input.requester,
      origin: input.origin,
      ...(input.breakGlass ? { breakGlass: true } : {}),
    };
  }

  return { recreateInput };
}

/** Delete `policy`, then create it again as it is. */
export function recreateSteps(layer: 'user' | 'operator', vhost: string, policy: Policy): Transition[] {
  return [
    { layer, vhost, name: policy.name, before: policy, after: null },
    { layer, vhost, name: policy.name, before: null, after: policy },
  ];
}
