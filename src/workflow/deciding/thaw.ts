import { randomBytes } from 'node:crypto';
import type { FreezeRecord } from '../../audit/index.ts';
import { leavesFrom } from '../moves.ts';
import { approvalOrder, waitsItsTurn } from '../rules.ts';
import type { RequestStore } from '../store.ts';
import type { ApplyQueue, ChangeRequest } from '../types.ts';
import type { Freeze } from './freeze.ts';

/**
 * What a freeze (freeze.ts) leaves behind: its records in the audit trail, and the requests it
 * held, run once it is over. Used by the workflow (freeze, unfreeze) and the worker's sweep (a
 * freeze that ran out).
 */

/** The audit entry of a freeze, or of its end (`ended`: why; `by`: who lifted it, absent when it ran out). */
/** Why a freeze ended that nobody lifted: the one sentence the sweep and a later freeze record. */
export const RAN_OUT = 'its time ran out';

export function freezeEntry(
  env: string,
  freeze: Freeze,
  at: Date,
  end?: { readonly because: string; readonly by?: string },
): Omit<FreezeRecord, 'prev' | 'hash' | 'keyed'> {
  const actor = end ? end.by : freeze.by;
  return {
    id: `${end ? 'u' : 'f'}-${env}-${at.getTime()}-${randomBytes(3).toString('hex')}`,
    at: at.toISOString(),
    env,
    action: end ? 'unfreeze' : 'freeze',
    ...(actor ? { actor } : {}),
    freeze: { ...freeze, ...(end ? { endedBecause: end.because } : {}) },
  };
}

/**
 * Runs the requests a freeze held, now that `env` is not frozen: its approved requests with a
 * `held` mark, in approval order (rules.ts), each through its own (delayed) apply job, which re-checks the
 * policy first (the stale guard). Returns how many were released.
 */
export async function releaseHeld(
  store: Pick<RequestStore, 'unfinished'>,
  queue: Pick<ApplyQueue, 'promote'>,
  env: string,
): Promise<number> {
  const held = (await store.unfinished())
    .filter((r) => r.env === env && leavesFrom('start', r.state) && r.held)
    .sort(approvalOrder);
  for (const r of held) await queue.promote(r.id);
  return held.length;
}

/**
 * Whether a request the freeze held must wait its turn (rules.ts's waitsItsTurn, over the
 * requests unfinished now). The apply job asks it.
 */
export async function heldBehind(
  store: Pick<RequestStore, 'unfinished'>,
  r: ChangeRequest,
): Promise<boolean> {
  // Not held: nothing to read.
  return r.held !== undefined && waitsItsTurn(r, await store.unfinished());
}
