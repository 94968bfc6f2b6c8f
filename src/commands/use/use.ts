import { CodedError, closeVhosts, InputError } from '../../core/index.ts';
import { parseArgs } from '../parse.ts';
import { usageOf } from '../registry.ts';

/**
 * `use [--env E] [--vhost V] [--clear]`: a channel's defaults for every later command in it and
 * its threads. Bare `use` shows them; an unknown environment is refused; a vhost the
 * environment's broker does not list is refused with the close names it does list. Asked in
 * Slack only (the defaults are a channel's), where they are kept (src/slack/channelDefaults.ts)
 * and said (src/slack/views/use.ts).
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

export interface StoredDefaults {
  readonly env?: string | undefined;
  readonly vhost?: string | undefined;
  /** Who set them, and when (ISO 8601). */
  readonly by?: string | undefined;
  readonly at?: string | undefined;
}

/** The channel asked in, with its defaults. The Slack ChannelScope satisfies it. */
export interface UseChannel {
  /** Who asks (recorded as who set them). */
  readonly user?: string | undefined;
  read(): Promise<({ readonly ok: true } & StoredDefaults) | { readonly ok: false; readonly error: string }>;
  set(defaults: { readonly env?: string | undefined; readonly vhost?: string | undefined }): Promise<void>;
  /** True when there were defaults to remove. */
  clear(): Promise<boolean>;
}

/** What `use` needs of the environments. The Slack Environments satisfy it. */
export interface UseEnvironments {
  /** `--env`, or the first environment; an unknown name is an InputError. */
  pick(
    name: string | undefined,
    vhost?: string,
  ): { readonly name: string; readonly broker: { listVhosts?(): Promise<string[]> } };
}

export type UseResult =
  | { readonly did: 'cleared'; readonly had: boolean }
  | { readonly did: 'shown'; readonly current: StoredDefaults; readonly builtIn: { readonly env: string } }
  | {
      readonly did: 'set';
      readonly shown: StoredDefaults;
      readonly builtIn: { readonly env: string };
      /** The vhost was not checked (its environment's vhosts could not be listed). */
      readonly note: string | undefined;
    };

async function checkVhost(
  broker: { listVhosts?(): Promise<string[]> },
  env: string,
  vhost: string,
): Promise<string | undefined> {
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

/** The words read, the defaults shown, set or cleared; `channel` undefined: not asked in a channel. */
export async function use(
  words: readonly string[],
  channel: UseChannel | undefined,
  environments: UseEnvironments,
): Promise<UseResult> {
  const { positionals, flags } = parseArgs(
    words,
    { env: 'string', vhost: 'string', clear: 'boolean' },
    USE_USAGE,
  );
  if (positionals.length > 0)
    throw new InputError(`use takes only flags, got ${JSON.stringify(positionals[0])}.`, {
      usage: USE_USAGE,
    });
  if (!channel) throw new InputError('use sets the defaults of a channel; ask in one.', { usage: USE_USAGE });
  const builtIn = { env: environments.pick(undefined).name };

  if (flags.clear === true) {
    if (flags.env !== undefined || flags.vhost !== undefined)
      throw new InputError('use --clear takes no --env or --vhost.', { usage: USE_USAGE });
    return { did: 'cleared', had: await guarded(() => channel.clear()) };
  }

  const current = await channel.read();
  if (!current.ok) throw new DefaultsUnavailableError(new Error(current.error));
  if (flags.env === undefined && flags.vhost === undefined) return { did: 'shown', current, builtIn };
  if (flags.vhost === '') throw new InputError('--vhost cannot be empty.', { usage: USE_USAGE });
  // An environment given is checked now (an unknown one is refused); one kept is as it was set.
  const env = typeof flags.env === 'string' ? environments.pick(flags.env).name : current.env;
  const vhost = typeof flags.vhost === 'string' ? flags.vhost : current.vhost;
  const note =
    vhost !== undefined
      ? await checkVhost(environments.pick(env, vhost).broker, env ?? builtIn.env, vhost)
      : undefined;
  const next = { env, vhost };
  await guarded(() => channel.set(next));
  return { did: 'set', shown: { ...next, by: channel.user, at: new Date().toISOString() }, builtIn, note };
}
