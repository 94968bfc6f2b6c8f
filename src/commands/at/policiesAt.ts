import { stateAt } from '../../audit/index.ts';
import type { Instant } from '../../core/index.ts';
import { byPriority, type PoliciesInput, type PoliciesResult } from '../policies/policies.ts';
import { type AtKeys, type AtTrail, atKeys, changesAround, nearestFirst } from './whichAt.ts';

/**
 * `policies --at TIME`: the vhost's policies at a past instant, replayed from the audit trail
 * (src/audit/replay.ts), listed as `policies` lists them now; with the vhost's changes an hour
 * either side, nearest first. Unknown before the first snapshot and inside a gap: nothing listed.
 */

export interface PoliciesAtResult extends PoliciesResult, AtKeys {}

export async function policiesAt(
  input: PoliciesInput & { at: Instant },
  env: string,
  trail: AtTrail,
): Promise<PoliciesAtResult> {
  const ms = input.at.ms;
  const [state, around] = await Promise.all([
    stateAt(trail, env, input.vhost, ms),
    changesAround(trail, env, input.vhost, ms),
  ]);
  const keys = atKeys(input.at, state, nearestFirst(around, ms));
  if (!state.known)
    return { vhost: input.vhost, answer: 'listed', policies: [], operatorPolicies: [], ...keys };
  return {
    vhost: input.vhost,
    answer: 'listed',
    ...(state.state.version ? { brokerVersion: state.state.version } : {}),
    policies: byPriority(state.state.user),
    operatorPolicies: byPriority(state.state.operator),
    ...keys,
  };
}
