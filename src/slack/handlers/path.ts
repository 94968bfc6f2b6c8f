import { parsePath, path } from '../../commands/path/index.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { pathView } from '../views/path.ts';
import { channelFlags } from './defaults.ts';
import type { SlackCommand } from './types.ts';

/** `/rmq path NAME …`: the chain a message travels, and what survives which failure, for the channel. */
export const pathCommand: SlackCommand = {
  async run(words, ctx) {
    const channel = await channelFlags(ctx);
    const input = parsePath(words, channel.defaults);
    const { name: env, broker } = ctx.environments.pick(input.env, input.vhost);
    const result = await path(input, broker, { env });
    ctx.logger
      .child({ env, vhost: input.vhost, object: input.name, kind: input.kind })
      .info({ answer: result.answer, why: result.why }, 'path answered');
    return {
      message: withAnsweredFor(pathView(result), channel.answeredFor(words, env, input.vhost)),
      audience: 'channel',
      outcome: result.answer === 'not-asked' ? 'not-asked' : 'answered',
    };
  },
};
