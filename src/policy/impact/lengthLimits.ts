import type { ObjectKind } from '../types.ts';
import {
  type Hazard,
  type Impact,
  type ImpactInput,
  LENGTH_KEYS,
  type LengthKey,
  type LiveQueue,
  lowered,
  num,
  str,
  type World,
} from './impactTypes.ts';

/**
 * A length limit (`max-length`, `max-length-bytes`) and its overflow, on a classic or quorum
 * queue: what a change trims at once and whether publishers are refused (impact.ts), and whether
 * a queue is full as it stands (`which`'s hazards, hazards.ts). Measured on 3.10.8, 4.0.5 and
 * 4.3.6 (test/integration/impact.test.ts, which-hazards.test.ts): see impact.ts's header.
 */

/** Whether a quorum queue removes the ready messages above a length limit at once (measured). */
function quorumTrims(overflow: unknown): boolean {
  return overflow !== 'reject-publish';
}

/**
 * Whether the change removes the ready messages above a limit at once. A classic queue sets the
 * limit under its old overflow, then the new overflow, and trims only under drop-head at either
 * moment (rabbit_amqqueue_process: max-length before overflow in its policy table); a limit
 * unchanged under drop-head has nothing left to trim.
 */
function trimsAtChange(kind: ObjectKind, before: unknown, after: unknown, stricter: boolean): boolean {
  if (kind === 'classic') {
    const dropsBefore = before === 'drop-head';
    const dropsAfter = after === 'drop-head';
    return (stricter && (dropsBefore || dropsAfter)) || (!dropsBefore && dropsAfter);
  }
  return kind === 'quorum' && quorumTrims(after) && (stricter || !quorumTrims(before));
}

/** Whether publishers are refused once the queue is full. reject-publish-dlx: classic queues only. */
function refuses(kind: ObjectKind, overflow: unknown): boolean {
  return overflow === 'reject-publish' || (kind === 'classic' && overflow === 'reject-publish-dlx');
}

/**
 * The dead-letter exchange a removed message goes to, and whether it exists ("" is the default
 * exchange; exchanges not read: taken to exist, nothing is claimed lost).
 */
function deadLetterTo(
  values: Readonly<Record<string, unknown>>,
  world: World,
): { name: string; exists: boolean } | undefined {
  const name = str(values['dead-letter-exchange']);
  if (name === undefined) return undefined;
  return { name, exists: name === '' || world.exchanges?.has(name) !== false };
}

/** How many ready messages a limit removes now (bytes: from the mean size, rounded up). */
function excess(key: LengthKey, limit: number, now: LiveQueue): { messages: number; estimated: boolean } {
  if (key === 'max-length') return { messages: Math.max(0, now.ready - limit), estimated: false };
  // Bytes not reported (lengthLimits says "may drop" first): nothing claimed.
  if (now.bytes === null || now.bytes <= limit || now.ready === 0) return { messages: 0, estimated: false };
  const mean = now.bytes / now.ready;
  return { messages: Math.min(now.ready, Math.ceil((now.bytes - limit) / mean)), estimated: true };
}

/** Whether the queue is at (or over) a limit once `removed` ready messages are gone. */
function isFull(key: LengthKey, limit: number, now: LiveQueue, removed = 0): boolean {
  return key === 'max-length' ? now.ready - removed >= limit : now.bytes !== null && now.bytes >= limit;
}

/**
 * Whether a publish now is refused: a classic queue refuses at its limit, a quorum queue once it
 * is over it (measured on 3.10.8, 4.0.5 and 4.3.6: at exactly its limit a quorum queue with
 * reject-publish takes one more message, then refuses; test/integration/which-hazards.test.ts).
 */
function refusesNow(
  kind: ObjectKind,
  overflow: unknown,
  key: LengthKey,
  limit: number,
  now: LiveQueue,
  removed = 0,
): boolean {
  if (!refuses(kind, overflow)) return false;
  if (kind !== 'quorum') return isFull(key, limit, now, removed);
  return key === 'max-length' ? now.ready - removed > limit : now.bytes !== null && now.bytes > limit;
}

/** The length limits a change sets or lowers: the worst removal first, then refusals; returns how many ready messages it removes. */
export function lengthLimits(i: ImpactInput, world: World, out: Impact[]): number {
  const { kind, before, after, now } = i;
  if (kind !== 'classic' && kind !== 'quorum') return 0;
  const overflow = after.overflow ?? 'drop-head';
  const overflowBefore = before.overflow ?? 'drop-head';
  let removed = 0;
  let worst: Impact | undefined;
  for (const key of LENGTH_KEYS) {
    const limit = num(after[key]);
    if (limit === undefined) continue;
    const stricter = lowered(num(before[key]), limit);
    const nowTrims = trimsAtChange(kind, overflowBefore, overflow, stricter);
    if (nowTrims) {
      const dlx = deadLetterTo(after, world);
      const fate = dlx?.exists ? 'dead-lettered' : 'lost';
      // Ready messages of no bytes: the byte count is not out yet (seen on 4.3.6 quorum queues,
      // ready 20 and bytes 0 seconds after a publish; the broker then removed 7), not empty bodies.
      const bytesUnknown =
        key === 'max-length-bytes' &&
        now !== null &&
        (now.bytes === null || (now.ready > 0 && now.bytes === 0));
      if (now === null || bytesUnknown) {
        out.push({
          effect: 'may-drop',
          because: key,
          limit,
          fate,
          ...(now === null && i.nodeDown ? { nodeDown: true } : {}),
        });
        continue;
      }
      const x = excess(key, limit, now);
      if (x.messages > removed) {
        removed = x.messages;
        worst = {
          effect: 'drop',
          messages: x.messages,
          fate,
          ...(dlx === undefined ? {} : { exchange: dlx.name }),
          because: key,
          limit,
          ...(x.estimated ? { estimated: true as const } : {}),
        };
      }
    }
    const refusing = now !== null && refusesNow(kind, overflow, key, limit, now, removed);
    if (refusing && (stricter || !refuses(kind, overflowBefore))) {
      out.push({ effect: 'reject-publish', because: key, limit });
    }
  }
  if (worst) out.unshift(worst);
  return removed;
}

/** The limits a queue is at (or over) as it stands: what a message published now meets (`which`). */
export function fullHazards(
  kind: ObjectKind,
  values: Readonly<Record<string, unknown>>,
  now: LiveQueue | null,
  world: World,
): Hazard[] {
  const full: Hazard[] = [];
  const overflow = str(values.overflow) ?? 'drop-head';
  for (const key of LENGTH_KEYS) {
    const limit = num(values[key]);
    if (limit === undefined || now === null || !isFull(key, limit, now)) continue;
    const refused = refusesNow(kind, overflow, key, limit, now);
    const dlx = deadLetterTo(values, world);
    // reject-publish leaves the message with its publisher; reject-publish-dlx dead-letters it.
    const goes = !refuses(kind, overflow) || overflow === 'reject-publish-dlx';
    full.push({
      effect: 'full',
      because: key,
      limit,
      overflow,
      refused,
      dropped: goes ? (dlx?.exists ? 'dead-lettered' : 'lost') : null,
      ...(goes && dlx !== undefined ? { exchange: dlx.name } : {}),
    });
  }
  return full;
}
