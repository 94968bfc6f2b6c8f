import { WorkflowError } from '../errors.ts';
import type { WorkflowContext } from '../filing/context.ts';
import { freezeRefusal } from '../rules.ts';
import type { Workflow, WorkflowEnvironment } from '../types.ts';
import type { Freeze } from './freeze.ts';
import { freezeEntry, RAN_OUT, releaseHeld } from './thaw.ts';

/**
 * Freezing an environment and lifting it, as an approver asks: checked by the rules, kept in the
 * freeze store (freeze.ts), recorded in the audit trail; a lift releases what the freeze held.
 */
export function createFreezing(ctx: WorkflowContext): Pick<Workflow, 'freeze' | 'unfreeze' | 'frozen'> {
  const { freezes, audit, storeCall, log } = ctx;

  /** Refuses a freeze or unfreeze rules.ts does not let this user make. */
  async function assertMayFreeze(env: WorkflowEnvironment, user: string, reason: string, forMs?: number) {
    ctx.assertActor(user);
    const refused = freezeRefusal({
      env: env.name,
      isApprover: await ctx.options.approvers.isApprover(env.name, user),
      reason: reason.trim(),
      ...(forMs === undefined ? {} : { forMs }),
    });
    if (refused) throw new WorkflowError(refused);
  }

  return {
    async freeze(input) {
      const env = ctx.environment(input.env);
      await assertMayFreeze(env, input.user, input.reason, input.forMs);
      const at = ctx.now();
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
      log.info({ env: env.name, until: freeze.until, by: input.user }, 'environment frozen');
      return { env: env.name, freeze };
    },

    async unfreeze(input) {
      const env = ctx.environment(input.env);
      await assertMayFreeze(env, input.user, input.reason);
      const at = ctx.now();
      const lifted = await storeCall('unfreeze', () => freezes.lift(env.name, at), 'nothing was unfrozen');
      if (!lifted) return { env: env.name, lifted, released: 0 };
      await audit.append(freezeEntry(env.name, lifted, at, { because: input.reason.trim(), by: input.user }));
      const released = await releaseHeld(ctx.store, ctx.options.queue, env.name);
      log.info({ env: env.name, by: input.user, released }, 'freeze lifted');
      return { env: env.name, lifted, released };
    },

    async frozen(name) {
      const env = ctx.environment(name);
      return {
        env: env.name,
        freeze: await storeCall('frozen', () => freezes.current(env.name, ctx.now()), 'nothing was read'),
      };
    },
  };
}
