import * as z from 'zod';
import { InputError } from '../../core/index.ts';
import type { Origin } from '../../workflow/index.ts';
import { type FlagDefaults, parseArgs, parseWith, Vhost } from '../parse.ts';
import { usageOf } from '../registry.ts';
import { parseThreadLink } from './change.ts';

/**
 * `recreate POLICY --reason TEXT …` (Slack only): a policy deleted, then created again exactly as
 * it is, filed as one change set (src/workflow/ `recreate`): the write that restarts its federation
 * links, which putting the same policy again does not (docs/broker-facts.md). Its words: the
 * policy, where it is, the reason, `--thread`, `--break-glass`, as a delete's.
 */

export interface RecreateWords {
  readonly policy: string;
  readonly vhost: string;
  readonly env: string | undefined;
  /** `--reason`, trimmed; undefined when not given (a form asks it). */
  readonly reason: string | undefined;
  readonly thread: Origin | undefined;
  readonly breakGlass: boolean;
}

const FLAGS = {
  vhost: 'string',
  env: 'string',
  reason: 'string',
  thread: 'string',
  'break-glass': 'boolean',
} as const;

const Words = z.object({ vhost: Vhost, env: z.string().min(1).optional() });

export function parseRecreate(words: readonly string[], defaults: FlagDefaults = {}): RecreateWords {
  const usage = usageOf('recreate');
  const { positionals, flags } = parseArgs(words, FLAGS, usage);
  const [policy, ...rest] = positionals;
  if (policy === undefined || policy === '')
    throw new InputError('recreate needs the name of a policy.', { usage });
  if (rest.length > 0)
    throw new InputError(`recreate takes one policy name, got ${rest.length + 1}.`, { usage });
  const { vhost, env } = parseWith(
    Words,
    { vhost: flags.vhost ?? defaults.vhost, env: flags.env ?? defaults.env },
    usage,
  );
  const reason = typeof flags.reason === 'string' ? flags.reason.trim() : undefined;
  return {
    policy,
    vhost,
    env,
    reason: reason || undefined,
    thread: typeof flags.thread === 'string' ? parseThreadLink(flags.thread, usage) : undefined,
    breakGlass: flags['break-glass'] === true,
  };
}
