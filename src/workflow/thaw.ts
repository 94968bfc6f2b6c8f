import { randomBytes } from 'node:crypto';
import type { AuditEntry } from '../audit/types.ts';
import type { Freeze } from './freeze.ts';
import type { RequestStore } from './store.ts';
import type { ApplyQueue } from './types.ts';

/**
 * What a freeze (freeze.ts) leaves behind: its records in the audit trail, and the requests it
 * held, run once it is over. Used by the workflow (freeze, unfreeze) and the worker's sweep (a
 * freeze that ran out).
 */

/** The audit entry of a freeze, or of its end (`ended`: why; `by`: who lifted it, absent when it ran out). */
export function freezeEntry(
  env: string,
  freeze: Freeze,
  at: Date,
  end?: { readonly because: string; readonly by?: string },
): AuditEntry {
  const actor = end ? end.by : freeze.by;
  return {
    id: `${end ? 'u' : 'f'}-${env}-${at.getTime()}-${randomBytes(3).toString('hex')}`,
    at: at.toISOString(),
    env,
    vhost: '',
    policy: '',
    operator: false,
    action: end ? 'unfreeze' : 'freeze',
    ...(actor ? { actor } : {}),
    freeze: { ...freeze, ...(end ? { endedBecause: end.because } : {}) },
    before: null,
    after: null,
    objects: [],
    unpredictable: 0,
  };
}

/**
 * Runs the requests a freeze held, now that `env` is not frozen: its approved requests with a
 * `held` mark, in approval order, each through its own (delayed) apply job, which re-checks the
 * policy first (the stale guard). Returns how many were released.
 */
export async function releaseHeld(
  store: Pick<RequestStore, 'unfinished'>,
  queue: Pick<ApplyQueue, 'promote'>,
  env: string,
): Promise<number> {
  const held = (await store.unfinished())
    .filter((r) => r.env === env && r.state === 'approved' && r.held)
    .sort((a, b) => Date.parse(a.decision?.at ?? a.updatedAt) - Date.parse(b.decision?.at ?? b.updatedAt));
  for (const r of held) await queue.promote(r.id);
  return held.length;
}
