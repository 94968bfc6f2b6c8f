import { parseArgs, usageOf } from '../../commands/index.ts';
import { CodedError, closeVhosts, InputError } from '../../core/index.ts';
import type { Deliverable } from '../delivery.ts';
import type { SlackBroker } from '../environments.ts';
import { finish, type SlackMessage, section } from '../views/message.ts';
import { frozenLine } from '../views/request.ts';
import { defaultsClearedView, defaultsSetView, defaultsShownView } from '../views/use.ts';
import type { CommandContext, SlackCommand } from './types.ts';

/**
 * `/rmq use [--env E] [--vhost V] [--clear]`: this channel's defaults for every later command in
 * it and its threads (`../channelDefaults.ts`). Bare `use` shows them to the asker; setting and
 * removing them is said to the channel, since it changes what everyone there is answered. An
 * unknown environment is refused; a vhost the environment's broker does not list is refused with
 * the close names it does list.
 */

const USE_USAGE = usageOf('use');

/** Redis could not keep or read the defaults: nothing was changed. */
export class DefaultsUnavailableError extends CodedError<'defaults-unavailable'> {
  readonly code = 'defaults-unavailable' as const;
  constructor(cause: unknown) {
    super("this channel's defaults could not be read or kept", { cause });
    this.name = 'DefaultsUnavailableError';
  }
}

async function checkVhost(broker: SlackBroker, env: string, vhost: string): Promise<string | undefined> {
  let known: string[];
  try {
    if (!broker.listVhosts) return undefined;
    known = await broker.listVhosts();
  } catch {
    return `The vhosts of ${env} could not be listed, so ${vhost} was not checked.`;
  }
  if (known.includes(vhost)) return undefined;
  const close = closeVhosts(vhost, known);
  throw new InputError(
    `No vhost ${JSON.stringify(vhost)} in environment ${env}${close.length ? `; did you mean ${close.map((v) => JSON.stringify(v)).join(', ')}?` : '.'}`,
    { usage: USE_USAGE },
  );
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new DefaultsUnavailableError(err);
  }
}

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
    const { positionals, flags } = parseArgs(
      words,
      { env: 'string', vhost: 'string', clear: 'boolean' },
      USE_USAGE,
    );
    if (positionals.length > 0)
      throw new InputError(`use takes only flags, got ${JSON.stringify(positionals[0])}.`, {
        usage: USE_USAGE,
      });
    const channel = ctx.channel;
    if (!channel)
      throw new InputError('use sets the defaults of a channel; ask in one.', { usage: USE_USAGE });
    const builtIn = { env: ctx.environments.pick(undefined).name };
    const log = ctx.logger.child({ channel: channel.id });

    if (flags.clear === true) {
      if (flags.env !== undefined || flags.vhost !== undefined)
        throw new InputError('use --clear takes no --env or --vhost.', { usage: USE_USAGE });
      const had = await guarded(() => channel.clear());
      log.info({ had }, 'channel defaults cleared');
      return { message: defaultsClearedView(had, ctx.prefix), audience: 'channel', outcome: 'answered' };
    }

    const current = await channel.read();
    if (!current.ok) throw new DefaultsUnavailableError(new Error(current.error));
    if (flags.env === undefined && flags.vhost === undefined) {
      return {
        message: withFreeze(
          defaultsShownView(current, builtIn, ctx.prefix),
          await freezeOf(ctx, current.env),
        ),
        audience: 'asker',
        outcome: 'answered',
      };
    }
    if (flags.vhost === '') throw new InputError('--vhost cannot be empty.', { usage: USE_USAGE });
    // An environment given is checked now (an unknown one is refused); one kept is as it was set.
    const env = typeof flags.env === 'string' ? ctx.environments.pick(flags.env).name : current.env;
    const vhost = typeof flags.vhost === 'string' ? flags.vhost : current.vhost;
    const note =
      vhost !== undefined
        ? await checkVhost(ctx.environments.pick(env, vhost).broker, env ?? builtIn.env, vhost)
        : undefined;
    const next = { env, vhost };
    await guarded(() => channel.set(next));
    log.info({ env, vhost }, 'channel defaults set');
    const shown = { ...next, by: channel.user, at: new Date().toISOString() };
    return { message: defaultsSetView(shown, builtIn, note), audience: 'channel', outcome: 'answered' };
  },
};
