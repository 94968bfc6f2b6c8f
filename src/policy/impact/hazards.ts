import { expiryHazard } from './expiry.ts';
import type { Hazard, HazardInput, MissingTarget, World } from './impactTypes.ts';
import { fullHazards } from './lengthLimits.ts';
import { missingTargets } from './targets.ts';

/**
 * What threatens an object as it stands, with no change (`which`): the rules of immediate effect
 * (lengthLimits.ts, expiry.ts, targets.ts) asked of the values it uses now and its live statistics.
 */

/** The object's live hazards, worst first: deletion, a limit reached, missing targets, expiry later. */
export function hazardsOf(i: HazardInput, world: World): Hazard[] {
  const { kind, values, now } = i;
  const missing: MissingTarget[] = [];
  missingTargets(kind, values, world, {}, missing);
  if (kind !== 'classic' && kind !== 'quorum') return missing;
  const full = fullHazards(kind, values, now, world);
  const expiry = expiryHazard(values, now, i.at);
  if (expiry === undefined) return [...full, ...missing];
  if (expiry.effect === 'expires-idle') return [expiry, ...full, ...missing];
  return [...full, ...missing, expiry];
}
