import type { Hazard, Impact, ImpactInput, LiveQueue } from './impactTypes.ts';
import { lowered, num } from './impactTypes.ts';

/**
 * `expires` on a classic or quorum queue: deleted with its messages `expires` after its last use.
 * A change that sets or lowers it (impact.ts): without consumers, the queue goes that long after
 * the change, else after the last consumer leaves. As it stands (`which`, hazards.ts): the same,
 * dated from the statistics.
 */

/** What a change's `expires` does: `removed` ready messages are already gone by the length limits. */
export function expiry(i: ImpactInput, removed: number, out: Impact[]): void {
  const { kind, before, after, now } = i;
  if (kind !== 'classic' && kind !== 'quorum') return;
  const inMs = num(after.expires);
  if (!lowered(num(before.expires), inMs)) return;
  if (now !== null && now.consumers === 0) {
    out.push({ effect: 'delete', messages: Math.max(0, now.messages - removed), inMs, because: 'expires' });
  } else {
    out.push({ effect: 'delete-when-idle', inMs, consumers: now?.consumers ?? null, because: 'expires' });
  }
}

/** The queue's expiry as it stands; undefined without `expires` (the caller has checked the kind). */
export function expiryHazard(
  values: Readonly<Record<string, unknown>>,
  now: LiveQueue | null,
  at: number,
): Hazard | undefined {
  const inMs = num(values.expires);
  if (inMs === undefined) return undefined;
  if (now !== null && now.consumers === 0) {
    return { effect: 'expires-idle', messages: now.messages, inMs, by: new Date(at + inMs).toISOString() };
  }
  return { effect: 'expires-when-unused', inMs, consumers: now?.consumers ?? null };
}
