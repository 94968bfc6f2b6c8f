import { type FlagDefaults, givesFlag } from '../../commands/index.ts';
import type { ChannelDefaultsRead } from '../channelDefaults.ts';
import type { AnsweredFor } from '../views/answeredFor.ts';
import type { CommandContext } from './types.ts';

/**
 * The channel's defaults as flags: what `--vhost` and `--env` are when the words do not give
 * them. Read once per request; without Redis there are none, and the answer says so.
 */
export interface ChannelFlags {
  readonly defaults: FlagDefaults;
  /** For the context line, once the environment is picked. */
  answeredFor(words: readonly string[], env: string, vhost: string): AnsweredFor;
}

export async function channelFlags(ctx: CommandContext): Promise<ChannelFlags> {
  const read: ChannelDefaultsRead | undefined = ctx.channel ? await ctx.channel.read() : undefined;
  const defaults = read?.ok ? { env: read.env, vhost: read.vhost } : {};
  return {
    defaults,
    answeredFor(words, env, vhost) {
      return {
        env,
        vhost,
        prefix: ctx.prefix,
        fromChannel: {
          env: defaults.env !== undefined && !givesFlag(words, 'env'),
          vhost: defaults.vhost !== undefined && !givesFlag(words, 'vhost'),
        },
        ...(read && !read.ok ? { defaultsUnavailable: true } : {}),
      };
    },
  };
}
