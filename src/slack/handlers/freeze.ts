import { parseArgs, usageOf } from '../../commands/index.ts';
import { InputError, parseDuration } from '../../core/index.ts';
import { isWorkflowError, MAX_FREEZE_MS } from '../../workflow/index.ts';
import type { Deliverable } from '../delivery.ts';
import { frozenView, unfrozenView } from '../views/freeze.ts';
import { requestRefusedView, slackRefusal } from '../views/requestRefusals.ts';
import type { CommandContext, SlackCommand } from './types.ts';

/**
 * `/rmq freeze [--env E] --for DURATION --reason TEXT` and `/rmq unfreeze [--env E] --reason
 * TEXT`: approvers only (the workflow checks the signed request's user, rules.ts). A freeze holds
 * every approved request of the environment until it ends or is lifted; both are said to the
 * channel (they change what everyone there can expect) and recorded in the audit trail.
 */

function words(kind: 'freeze' | 'unfreeze', list: readonly string[]) {
  const usage = usageOf(kind);
  const { positionals, flags } = parseArgs(
    list,
    kind === 'freeze'
      ? { env: 'string', for: 'string', reason: 'string' }
      : { env: 'string', reason: 'string' },
    usage,
  );
  if (positionals.length > 0)
    throw new InputError(`${kind} takes only flags, got ${JSON.stringify(positionals[0])}.`, { usage });
  const reason = typeof flags.reason === 'string' ? flags.reason.trim() : '';
  if (!reason)
    throw new InputError(`${kind} needs your reason: --reason TEXT (it is recorded and shown).`, { usage });
  return { usage, env: typeof flags.env === 'string' ? flags.env : undefined, reason, flags };
}

function freezeFor(text: string | boolean | undefined, usage: string): number {
  if (typeof text !== 'string')
    throw new InputError('freeze needs its length: --for DURATION, such as 4h or 2d.', { usage });
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new InputError(`--for takes a duration such as 4h or 2d, got ${JSON.stringify(text)}.`, { usage });
  if (ms > MAX_FREEZE_MS)
    throw new InputError(`--for ${text} is too long: a freeze lasts at most a week (7d).`, { usage });
  return ms;
}

async function run(
  kind: 'freeze' | 'unfreeze',
  list: readonly string[],
  ctx: CommandContext,
): Promise<Deliverable> {
  const { usage, env, reason, flags } = words(kind, list);
  const workflow = ctx.changes?.workflow;
  const user = ctx.asker?.user;
  if (!workflow || !user) throw new InputError(slackRefusal('not-set-up'));
  const name = ctx.environments.pick(env).name;
  try {
    if (kind === 'freeze') {
      const done = await workflow.freeze({ env: name, user, forMs: freezeFor(flags.for, usage), reason });
      ctx.logger.info({ env: done.env, until: done.freeze.until }, 'frozen');
      return { message: frozenView(done.env, done.freeze), audience: 'channel', outcome: 'answered' };
    }
    const done = await workflow.unfreeze({ env: name, user, reason });
    return {
      message: unfrozenView(done.env, done.lifted, user, reason, done.released),
      audience: done.lifted ? 'channel' : 'asker',
      outcome: 'answered',
    };
  } catch (err) {
    if (isWorkflowError(err))
      return { message: requestRefusedView(err), audience: 'asker', outcome: 'refused' };
    throw err;
  }
}

export const freezeCommand: SlackCommand = { run: (list, ctx) => run('freeze', list, ctx) };
export const unfreezeCommand: SlackCommand = { run: (list, ctx) => run('unfreeze', list, ctx) };
