import { expiry } from './expiry.ts';
import type { Impact, ImpactInput, World } from './impactTypes.ts';
import { lengthLimits } from './lengthLimits.ts';
import { slowRules } from './slowRules.ts';
import { losses, starts, targets } from './targets.ts';

export { hazardsOf } from './hazards.ts';
export {
  type ImpactTotals,
  impactTotals,
  type Loss,
  losingQueues,
  lossGrew,
  NO_IMPACT,
  removesData,
} from './impactTotals.ts';
export {
  type Effect,
  FEDERATION_KEYS,
  FEDERATION_TARGETS,
  type Hazard,
  type HazardInput,
  type Impact,
  type ImpactInput,
  type LengthKey,
  type LiveQueue,
  type MissingTarget,
  type TargetKey,
  type World,
} from './impactTypes.ts';
export { maxAgeSeconds } from './slowRules.ts';
export { readsFederation, targetExists, targetKeys } from './targets.ts';

/**
 * What a change does at once to the messages and queues that are there now: the broker's rules
 * of immediate effect, pure. In: the values an object really uses before and after the change
 * (the policy layers merged and its own arguments on top: effective.ts, provenance.ts), its live
 * statistics, and what the vhost holds (exchanges, federation upstreams and links). Out: what
 * happens, in numbers where the broker's behaviour is deterministic, else said as "may".
 *
 * Measured on 3.10.8 and 4.0.5 (test/integration/impact.test.ts proves each rule by behaviour):
 * - a length limit below the ready messages: a classic queue applies the new limit under the
 *   overflow it had, then the new overflow, and removes the excess only under drop-head: a limit
 *   lowered on a drop-head queue trims whatever the new overflow (reject-publish too: trimmed, then
 *   publishers refused); lowered on a queue already under reject-publish(-dlx) that keeps it, it
 *   trims nothing (the excess stays, publishers refused); a move back to drop-head trims the
 *   excess held (3.10.8 and 4.3.6, test/integration/impact.test.ts). A quorum queue removes it
 *   with drop-head and with reject-publish-dlx (which quorum queues do not implement), keeps it
 *   with reject-publish. The removed messages go to the dead-letter exchange
 *   when it exists, for quorum queues with either dead-letter strategy (at-least-once needs
 *   reject-publish, and falls back to at-most-once otherwise); else they are lost;
 * - `expires` on a queue without consumers: deleted with its messages `expires` after the change;
 * - a lower `message-ttl`: the messages already queued keep their expiry;
 * - streams: a lower `max-age` or `max-length-bytes` is applied as soon as the policy is (74 offsets
 *   to 6, and to 1, within seconds, on 3.10.8, 4.0.5 and 4.3.6 with segments of 1000 bytes): the
 *   whole segments beyond it are deleted, all but the one being written. How many messages that is
 *   depends on the segments, which the statistics do not show: "may remove data, at once";
 * - a quorum `delivery-limit` lowered removes nothing at once; a message already returned that
 *   often goes at its next return (returns: rejected or nacked with requeue).
 *
 * Each rule in a module of its own: the length limits and their overflow (lengthLimits.ts),
 * `expires` (expiry.ts), the targets a value names (targets.ts), the rules the statistics cannot
 * count (slowRules.ts); their vocabulary in impactTypes.ts, the totals an approver accepts in
 * impactTotals.ts. `which`'s live hazards (hazards.ts) ask the same rules of an object as it
 * stands. This module runs them for one object and is the one door the rest of the bot imports.
 */

/** What the change does to one object, worst first: removals, deletions, refusals, then the rest. */
export function impactOf(i: ImpactInput, world: World): Impact[] {
  const out: Impact[] = [];
  const removed = lengthLimits(i, world, out);
  expiry(i, removed, out);
  targets(i, world, out);
  losses(i, world, out);
  starts(i, world, out);
  slowRules(i, out);
  // At its size: the list is kept with the object, and its first push reserved 16.
  return out.length === 0 ? [] : out.slice();
}
