import { links, parseLinks } from '../../commands/links/index.ts';
import { InputError } from '../../core/index.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { linksView } from '../views/links.ts';
import { channelFlags } from './defaults.ts';
import type { SlackCommand } from './types.ts';

/**
 * `/rmq links [--vhost V]`: every federation link and shovel that should exist, whether it runs,
 * where and why not, for everyone in the channel or thread; every link as a file beside the
 * message when the message cannot hold them all.
 */
export const linksCommand: SlackCommand = {
  async run(words, ctx) {
    const channel = await channelFlags(ctx);
    const input = parseLinks(words, channel.defaults);
    if (input.against !== undefined)
      throw new InputError('In Slack, links takes no file: /rmq links [--vhost V] [--env E].', {
        usage: 'links [--vhost V] [--env E]',
      });
    const { name: env, broker } = ctx.environments.pick(input.env);
    const log = ctx.logger.child({ env, vhost: input.vhost });
    const watched = ctx.records?.linksWatched;
    // A link starting at every try that the bot's watch saw not running for a minute is stuck.
    const result = await links(input, broker, { env, ...(watched ? { watched: () => watched(env) } : {}) });
    const { file, ...message } = linksView(result);
    log.info({ answer: result.answer, why: result.why, counts: result.counts }, 'links answered');
    return {
      message: withAnsweredFor(message, channel.answeredFor(words, env, input.vhost)),
      audience: 'channel',
      outcome: result.answer === 'not-asked' ? 'not-asked' : 'answered',
      ...(file ? { file } : {}),
    };
  },
};
