import { use } from '../../commands/use/index.ts';
import type { Deliverable } from '../delivery.ts';
import { finish, type SlackMessage, section } from '../views/message.ts';
import { frozenLine } from '../views/request.ts';
import { defaultsClearedView, defaultsSetView, defaultsShownView } from '../views/use.ts';
import type { CommandContext, SlackCommand } from './types.ts';

/**
 * `/rmq use …`: the command (src/commands/use/) reads, checks and keeps the channel's defaults;
 * here they are said. Bare `use` shows them to the asker, with the freeze on their environment;
 * setting and removing them is said to the channel, since it changes what everyone there is
 * answered.
 */

/** The freeze on the channel's environment, said with its defaults (not known: nothing said). */
async function freezeOf(ctx: CommandContext, env: string | undefined) {
  const workflow = ctx.changes?.workflow;
  if (!workflow) return undefined;
  try {
    const { env: name, freeze } = await workflow.frozen(env);
    return freeze && { env: name, freeze };
  } catch (err) {
    ctx.logger.warn({ err }, 'the freeze could not be read for use');
    return undefined;
  }
}

function withFreeze(message: SlackMessage, frozen: Awaited<ReturnType<typeof freezeOf>>): SlackMessage {
  if (!frozen) return message;
  return finish([...message.blocks, section(frozenLine(frozen.env, frozen.freeze))], message.text);
}

export const useCommand: SlackCommand = {
  async run(words, ctx: CommandContext): Promise<Deliverable> {
    const result = await use(words, ctx.channel, ctx.environments);
    const log = ctx.logger.child({ channel: ctx.channel?.id });
    if (result.did === 'cleared') {
      log.info({ had: result.had }, 'channel defaults cleared');
      return {
        message: defaultsClearedView(result.had, ctx.prefix),
        audience: 'channel',
        outcome: 'answered',
      };
    }
    if (result.did === 'shown') {
      return {
        message: withFreeze(
          defaultsShownView(result.current, result.builtIn, ctx.prefix),
          await freezeOf(ctx, result.current.env),
        ),
        audience: 'asker',
        outcome: 'answered',
      };
    }
    log.info({ env: result.shown.env, vhost: result.shown.vhost }, 'channel defaults set');
    return {
      message: defaultsSetView(result.shown, result.builtIn, result.note),
      audience: 'channel',
      outcome: 'answered',
    };
  },
};
