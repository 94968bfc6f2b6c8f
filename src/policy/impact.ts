import type { Definition, ObjectKind } from './types.ts';

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
 * `which`'s live hazards (hazardsOf, at the end) are here too, over 450 lines: they are the same
 * rules (what trims, what refuses, which targets exist) asked of an object as it stands, and a
 * second module would have to export those rules only to repeat their use.
 */

/** A queue's statistics as the broker last reported them. */
export interface LiveQueue {
  /** ready + unacknowledged */
  readonly messages: number;
  readonly ready: number;
  readonly unacked: number;
  /**
   * Bytes of the ready messages' bodies; null where the broker reports the messages but not
   * their bytes (streams, on 3.10.8, 4.0.5 and 4.3.6: no `message_bytes_ready`).
   */
  readonly bytes: number | null;
  readonly consumers: number;
  readonly idleSince: string | null;
}

/** What the vhost holds besides its queues, for the targets a value names. `null`: not known. */
export interface World {
  readonly exchanges: ReadonlySet<string> | null;
  readonly upstreams: ReadonlySet<string> | null;
  readonly upstreamSets: ReadonlySet<string> | null;
  /** Objects with a running federation link, by name. */
  readonly links: ReadonlySet<string> | null;
}

export type LengthKey = 'max-length' | 'max-length-bytes';
export type TargetKey =
  | 'dead-letter-exchange'
  | 'alternate-exchange'
  | 'federation-upstream'
  | 'federation-upstream-set';

/** A value names an exchange or upstream the vhost does not have. */
export interface MissingTarget {
  readonly effect: 'missing-target';
  readonly key: TargetKey;
  readonly target: string;
}

export type Impact =
  /**
   * Ready messages above the limit, removed at once. `exchange`: the dead-letter exchange named
   * (with `fate: 'lost'`, one that does not exist). `estimated`: a byte limit, the count from the
   * mean size.
   */
  | {
      readonly effect: 'drop';
      readonly messages: number;
      readonly fate: 'dead-lettered' | 'lost';
      readonly exchange?: string;
      readonly because: LengthKey;
      readonly limit: number;
      readonly estimated?: true;
    }
  /** No consumer: the queue and its messages go about `inMs` after the change. */
  | {
      readonly effect: 'delete';
      readonly messages: number;
      readonly inMs: number;
      readonly because: 'expires';
    }
  /** The queue is at its limit: publishers are refused from now on. */
  | { readonly effect: 'reject-publish'; readonly because: LengthKey; readonly limit: number }
  | MissingTarget
  /** Statistics unknown: the excess above the limit would be removed at once, how much is not known. */
  | {
      readonly effect: 'may-drop';
      readonly because: LengthKey;
      readonly limit: number;
      readonly fate: 'dead-lettered' | 'lost';
      /** Unknown because the queue's cluster node is down (not: the broker has no statistics yet). */
      readonly nodeDown?: true;
    }
  /** Consumers attached (or unknown): deleted `inMs` after the last one leaves, not now. */
  | {
      readonly effect: 'delete-when-idle';
      readonly inMs: number;
      readonly consumers: number | null;
      readonly because: 'expires';
    }
  /** Queued messages keep their expiry; messages published from now on expire after `ttlMs`. */
  | { readonly effect: 'ttl-from-now'; readonly ttlMs: number; readonly because: 'message-ttl' }
  /** The dead-letter exchange goes: what is rejected, expires or overflows from now on is dropped. */
  | { readonly effect: 'dead-letter-lost'; readonly messages: number | null; readonly exchange: string }
  /** The federation key goes from an object whose link runs: the link stops. */
  | {
      readonly effect: 'link-stops';
      readonly key: (typeof FEDERATION_KEYS)[number];
      /** The upstream, set or (`federation-upstream-pattern`) pattern the key named. */
      readonly upstream: string;
    }
  /**
   * A stream's retention lowered: the whole segments beyond it are deleted as soon as the policy
   * applies (all but the one being written); how many messages, the statistics cannot say.
   */
  | {
      readonly effect: 'may-remove';
      readonly because: 'max-age' | 'max-length-bytes';
      readonly value: number | string;
    }
  /** Messages already returned `limit` times or more are dropped (or dead-lettered) at their next return. */
  | { readonly effect: 'delivery-limit-lowered'; readonly limit: number; readonly was: number | null };

export type Effect = Impact['effect'];

export interface ImpactTotals {
  readonly messagesDeadLettered: number;
  readonly messagesLost: number;
  readonly queuesDeleted: number;
  readonly queuesRefusingPublishes: number;
}

export interface ImpactInput {
  readonly name: string;
  readonly kind: ObjectKind;
  /** The values the object really uses (policy layers and its own arguments), before and after. */
  readonly before: Readonly<Record<string, unknown>>;
  readonly after: Readonly<Record<string, unknown>>;
  /** null: a queue without statistics (or an exchange). */
  readonly now: LiveQueue | null;
  /** `now` is null because the queue's cluster node is down. */
  readonly nodeDown?: boolean;
  /** From 4.0 quorum queues have a delivery limit of 20 when none is set. */
  readonly defaultDeliveryLimit?: number;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The new value is stricter: set where there was none, or lower. */
const lowered = (before: number | undefined, after: number | undefined): after is number =>
  after !== undefined && (before === undefined || after < before);

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

/** Seconds of a `max-age` (`7D`, `12h`, `1Y`…), undefined when unreadable. */
export function maxAgeSeconds(v: unknown): number | undefined {
  const m = typeof v === 'string' ? /^(\d+)([YMDhms])$/.exec(v) : null;
  if (!m) return undefined;
  const unit = { Y: 31_536_000, M: 2_592_000, D: 86_400, h: 3600, m: 60, s: 1 }[m[2] as 'Y'];
  return Number(m[1]) * unit;
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

// The keys the rules read, as constants: the rules run for every object a change moves.
const LENGTH_KEYS = ['max-length', 'max-length-bytes'] as const;
/**
 * The keys that start federation links, so whose impact reads the vhost's federation (its
 * upstreams, upstream sets and running links): an upstream, a set, or (4.x) a pattern over the
 * upstreams' names, which starts a link to each match as the others do (measured on 4.0.5 and
 * 4.3.6: test/integration/federation-links.test.ts).
 */
export const FEDERATION_KEYS = [
  'federation-upstream',
  'federation-upstream-set',
  'federation-upstream-pattern',
] as const;
/** Of those, the keys that name a target the vhost must have (a pattern names none). */
export const FEDERATION_TARGETS = ['federation-upstream', 'federation-upstream-set'] as const;
const EXCHANGE_TARGETS = ['alternate-exchange', ...FEDERATION_TARGETS] as const;
const QUEUE_TARGETS = ['dead-letter-exchange', ...FEDERATION_TARGETS] as const;

function lengthLimits(i: ImpactInput, world: World, out: Impact[]): number {
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

function expiry(i: ImpactInput, removed: number, out: Impact[]): void {
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

/** The keys naming a target an object of this kind takes (read for every object a change moves: built once). */
export function targetKeys(kind: ObjectKind): readonly TargetKey[] {
  if (kind === 'exchange') return EXCHANGE_TARGETS;
  if (kind === 'stream') return FEDERATION_TARGETS;
  return QUEUE_TARGETS;
}

/**
 * The targets `values` name that the vhost does not have (a set not read is taken to hold them;
 * "" is the default exchange; the set `all` is every upstream), put in `out`. `unchanged`: the
 * values before a change, whose targets are not the change's doing.
 */
function missingTargets(
  kind: ObjectKind,
  values: Readonly<Record<string, unknown>>,
  world: World,
  unchanged: Readonly<Record<string, unknown>>,
  out: Pick<MissingTarget[], 'push'>,
): void {
  for (const key of targetKeys(kind)) {
    const target = str(values[key]);
    if (target === undefined || target === str(unchanged[key])) continue;
    if (targetExists(key, target, world) === false) out.push({ effect: 'missing-target', key, target });
  }
}

/**
 * Whether the vhost has the target a key names: `null` when not known (a set not read; the
 * upstream set `all`, which is every upstream). "" as a dead-letter exchange is the default one.
 */
export function targetExists(key: TargetKey, target: string, world: World): boolean | null {
  if (target === '' && key === 'dead-letter-exchange') return true;
  const known =
    key === 'federation-upstream'
      ? world.upstreams
      : key === 'federation-upstream-set'
        ? target === 'all'
          ? null
          : world.upstreamSets
        : world.exchanges;
  return known === null ? null : known.has(target);
}

/** Whether a definition sets a key whose impact reads the federation: where none does, nothing reads it. */
export const readsFederation = (d: Definition) => FEDERATION_KEYS.some((k) => k in d);

function targets(i: ImpactInput, world: World, out: Impact[]): void {
  missingTargets(i.kind, i.after, world, i.before, out);
}

function losses(i: ImpactInput, world: World, out: Impact[]): void {
  const { kind, before, after, now, name } = i;
  const dlx = str(before['dead-letter-exchange']);
  if (
    (kind === 'classic' || kind === 'quorum') &&
    dlx !== undefined &&
    after['dead-letter-exchange'] === undefined
  ) {
    if (now === null || now.messages > 0) {
      out.push({ effect: 'dead-letter-lost', messages: now?.messages ?? null, exchange: dlx });
    }
  }
  for (const key of FEDERATION_KEYS) {
    const upstream = str(before[key]);
    if (upstream !== undefined && after[key] === undefined && world.links?.has(name)) {
      out.push({ effect: 'link-stops', key, upstream });
    }
  }
}

function slowRules(i: ImpactInput, out: Impact[]): void {
  const { kind, before, after } = i;
  if (kind === 'classic' || kind === 'quorum') {
    const ttlMs = num(after['message-ttl']);
    if (lowered(num(before['message-ttl']), ttlMs))
      out.push({ effect: 'ttl-from-now', ttlMs, because: 'message-ttl' });
  }
  if (kind === 'quorum') {
    const fallback = i.defaultDeliveryLimit;
    const limitOf = (v: unknown) => {
      const n = num(v) ?? fallback;
      return n === undefined || n < 0 ? undefined : n;
    };
    const was = limitOf(before['delivery-limit']);
    const limit = limitOf(after['delivery-limit']);
    if (lowered(was, limit)) out.push({ effect: 'delivery-limit-lowered', limit, was: was ?? null });
  }
  if (kind === 'stream') {
    const bytes = num(after['max-length-bytes']);
    if (lowered(num(before['max-length-bytes']), bytes)) {
      out.push({ effect: 'may-remove', because: 'max-length-bytes', value: bytes });
    }
    const age = maxAgeSeconds(after['max-age']);
    if (lowered(maxAgeSeconds(before['max-age']), age)) {
      out.push({ effect: 'may-remove', because: 'max-age', value: after['max-age'] as string });
    }
  }
}

/** What the change does to one object, worst first: removals, deletions, refusals, then the rest. */
export function impactOf(i: ImpactInput, world: World): Impact[] {
  const out: Impact[] = [];
  const removed = lengthLimits(i, world, out);
  expiry(i, removed, out);
  targets(i, world, out);
  losses(i, world, out);
  slowRules(i, out);
  // At its size: the list is kept with the object, and its first push reserved 16.
  return out.length === 0 ? [] : out.slice();
}

export const NO_IMPACT: ImpactTotals = {
  messagesDeadLettered: 0,
  messagesLost: 0,
  queuesDeleted: 0,
  queuesRefusingPublishes: 0,
};

/** The totals: `messagesLost` counts messages removed with nowhere to go and those of deleted queues. */
export function impactTotals(lists: Iterable<readonly Impact[]>): ImpactTotals {
  let messagesDeadLettered = 0;
  let messagesLost = 0;
  let queuesDeleted = 0;
  let queuesRefusingPublishes = 0;
  for (const list of lists) {
    for (const x of list) {
      if (x.effect === 'drop') {
        if (x.fate === 'dead-lettered') messagesDeadLettered += x.messages;
        else messagesLost += x.messages;
      } else if (x.effect === 'delete') {
        queuesDeleted++;
        messagesLost += x.messages;
      } else if (x.effect === 'reject-publish') {
        queuesRefusingPublishes++;
      }
    }
  }
  return { messagesDeadLettered, messagesLost, queuesDeleted, queuesRefusingPublishes };
}

/** Whether approving the change means accepting a loss (messages removed or queues deleted). */
export const removesData = (t: ImpactTotals): boolean =>
  t.messagesDeadLettered + t.messagesLost + t.queuesDeleted > 0;

/** The loss an approver accepts: the totals, and the queues that lose messages or are deleted. */
export interface Loss {
  readonly totals: ImpactTotals;
  readonly queues: readonly string[];
}

/** The queues whose messages a change removes or which it deletes. */
export function losingQueues(objects: Iterable<{ name: string; impact: readonly Impact[] }>): string[] {
  const out: string[] = [];
  for (const o of objects) {
    if (o.impact.some((x) => (x.effect === 'drop' && x.messages > 0) || x.effect === 'delete'))
      out.push(o.name);
  }
  return out;
}

/**
 * Whether `fresh` removes more than `accepted`: more messages dead-lettered or lost, more queues
 * deleted, or a queue that was not losing anything. The apply job's check that an approval still
 * covers the change.
 */
export function lossGrew(accepted: Loss, fresh: Loss): boolean {
  const a = accepted.totals;
  const f = fresh.totals;
  if (f.messagesLost > a.messagesLost || f.messagesDeadLettered > a.messagesDeadLettered) return true;
  if (f.queuesDeleted > a.queuesDeleted) return true;
  const known = new Set(accepted.queues);
  return fresh.queues.some((q) => !known.has(q));
}

/**
 * What threatens an object as it stands, with no change (`which`): the same rules, on the values
 * it uses now and its live statistics.
 */
export type Hazard =
  | MissingTarget
  /**
   * No consumer: deleted with its messages once it has been unused for `inMs` — by `by` at the
   * latest (its timer restarts when a consumer comes, a message is fetched or it is declared again;
   * publishing does not count).
   */
  | { readonly effect: 'expires-idle'; readonly messages: number; readonly inMs: number; readonly by: string }
  /** Consumers attached (or not known): deleted `inMs` after the last one leaves. */
  | { readonly effect: 'expires-when-unused'; readonly inMs: number; readonly consumers: number | null }
  /**
   * At its limit: a message published now is refused (`refused`), or the oldest goes to make room;
   * `dropped`: what becomes of the message that goes (the oldest, or the refused one with
   * reject-publish-dlx), null when nothing goes. Neither (a quorum queue with reject-publish at
   * exactly its limit): the next message is taken, then publishers are refused.
   */
  | {
      readonly effect: 'full';
      readonly because: LengthKey;
      readonly limit: number;
      readonly overflow: string;
      readonly refused: boolean;
      readonly dropped: 'dead-lettered' | 'lost' | null;
      readonly exchange?: string;
    };

export interface HazardInput {
  readonly kind: ObjectKind;
  /** The values the object uses now (policy layers and its own arguments). */
  readonly values: Readonly<Record<string, unknown>>;
  /** null: the broker reports no statistics for it (or an exchange): nothing live is claimed. */
  readonly now: LiveQueue | null;
  /** When the statistics were read (ms since the epoch). */
  readonly at: number;
}

/** The object's live hazards, worst first: deletion, a limit reached, missing targets, expiry later. */
export function hazardsOf(i: HazardInput, world: World): Hazard[] {
  const { kind, values, now } = i;
  const missing: MissingTarget[] = [];
  missingTargets(kind, values, world, {}, missing);
  if (kind !== 'classic' && kind !== 'quorum') return missing;
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
  const inMs = num(values.expires);
  if (inMs === undefined) return [...full, ...missing];
  if (now !== null && now.consumers === 0) {
    const by = new Date(i.at + inMs).toISOString();
    return [{ effect: 'expires-idle', messages: now.messages, inMs, by }, ...full, ...missing];
  }
  return [...full, ...missing, { effect: 'expires-when-unused', inMs, consumers: now?.consumers ?? null }];
}
