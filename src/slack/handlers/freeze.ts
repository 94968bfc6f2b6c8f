import { type FreezeKind, parseFreeze, runFreeze } from '../../commands/freeze/index.ts';
import { InputError } from '../../core/index.ts';
import { isWorkflowError } from '../../workflow/index.ts';
import type { Deliverable } from '../delivery.ts';
import { frozenView, unfrozenView } from '../views/freeze.ts';
import { requestRefusedView, slackRefusal } from '../views/requestRefusals.ts';
import type { CommandContext, SlackCommand } from './types.ts';

/**
 * `/rmq freeze …` and `/rmq unfreeze …`: the command (src/commands/freeze/) reads the words and
 * runs them for the signed request's user; here both are said to the channel (they change what
 * everyone there can expect), a refusal to the asker.
 */
async function run(kind: FreezeKind, list: readonly string[], ctx: CommandContext): Promise<Deliverable> {
  const words = parseFreeze(kind, list);
  const workflow = ctx.changes?.workflow;
  const user = ctx.asker?.user;
  if (!workflow || !user) throw new InputError(slackRefusal('not-set-up'));
  const env = ctx.environments.pick(words.env).name;
  try {
    const done = await runFreeze(words, { env, user }, workflow);
    if (done.did === 'freeze') {
      ctx.logger.info({ env: done.env, until: done.freeze.until }, 'frozen');
      return { message: frozenView(done.env, done.freeze), audience: 'channel', outcome: 'answered' };
    }
    return {
      message: unfrozenView(done.env, done.lifted, user, words.reason, done.released),
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
