import { InputError, parseDuration } from '../../core/index.ts';
import type { Freeze, Workflow } from '../../workflow/index.ts';
import { MAX_FREEZE_MS } from '../../workflow/index.ts';
import { parseArgs } from '../parse.ts';
import { usageOf } from '../registry.ts';

/**
 * `freeze [--env E] --for DURATION --reason TEXT` and `unfreeze [--env E] --reason TEXT`:
 * approvers only (the workflow checks the asker, src/workflow/rules.ts). A freeze holds every
 * approved request of the environment until it ends or is lifted; both are recorded in the audit
 * trail. Asked in Slack only (who asks is the signed request's user); the workflow's refusals
 * come back as its errors, for the front door to say.
 */

export type FreezeKind = 'freeze' | 'unfreeze';

export interface FreezeWords {
  readonly kind: FreezeKind;
  readonly usage: string;
  readonly env: string | undefined;
  readonly reason: string;
  /** `--for` as typed (freeze only): its length is read when the freeze runs. */
  readonly for: string | boolean | undefined;
}

export function parseFreeze(kind: FreezeKind, words: readonly string[]): FreezeWords {
  const usage = usageOf(kind);
  const { positionals, flags } = parseArgs(
    words,
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
  return { kind, usage, env: typeof flags.env === 'string' ? flags.env : undefined, reason, for: flags.for };
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

export type FreezeResult =
  | { readonly did: 'freeze'; readonly env: string; readonly freeze: Freeze }
  | {
      readonly did: 'unfreeze';
      readonly env: string;
      /** undefined: the environment was not frozen. */
      readonly lifted: Freeze | undefined;
      readonly released: number;
    };

/** Freezes or lifts the freeze on `env` (a name the front door picked) for `user`. */
export async function runFreeze(
  words: FreezeWords,
  at: { readonly env: string; readonly user: string },
  workflow: Pick<Workflow, 'freeze' | 'unfreeze'>,
): Promise<FreezeResult> {
  const { env, user } = at;
  if (words.kind === 'freeze') {
    const done = await workflow.freeze({
      env,
      user,
      forMs: freezeFor(words.for, words.usage),
      reason: words.reason,
    });
    return { did: 'freeze', ...done };
  }
  return { did: 'unfreeze', ...(await workflow.unfreeze({ env, user, reason: words.reason })) };
}
