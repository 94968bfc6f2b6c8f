import { count } from '../text/index.ts';
import type { SnapshotRecord } from './types.ts';

/** A snapshot and a gap in words, for the terminal's and Slack's `history` (the instants as each surface writes them). */

export function snapshotWords(e: SnapshotRecord): string {
  const when =
    e.why === 'first'
      ? 'when it first watched this environment'
      : e.why === 'gap'
        ? 'when its watch resumed after a gap'
        : 'as a checkpoint, so that a replay reads few records past a snapshot';
  const where = e.vhosts === null ? 'every vhost' : count(e.vhosts.length, 'vhost');
  return `the whole state the bot found ${when}: ${count(e.policies.length, 'policy', 'policies')} and ${count(e.operatorPolicies.length, 'operator policy', 'operator policies')} of ${where}; --at replays from here`;
}

export function gapWords(from: string, to: string): string {
  return `not watched from ${from} to ${to} (every replica down, the broker unreachable, or the event feed lost and not yet compared): what the policies were in between is unknown, and the changes found at its end were made at some moment in it`;
}

/** A change found by comparing (`between`): when it was made, as far as the trail can say. */
export function madeBetweenWords(from: string, to: string): string {
  return `made at a moment not known between ${from} and ${to} (found by comparing the policies, not when it was noticed)`;
}
