import type { LiveQueue } from '../../src/policy/impact/impact.ts';

/** A queue's live numbers: `messages` ready, none unacknowledged, 10 bytes each, no consumer, no idle time. */
export const liveQueue = (messages: number): LiveQueue => ({
  messages,
  ready: messages,
  unacked: 0,
  bytes: messages * 10,
  consumers: 0,
  idleSince: null,
});

/** `xs` as a listing the client streams. */
export async function* listing<T>(xs: readonly T[]): AsyncIterable<T> {
  for (const x of xs) yield x;
}
