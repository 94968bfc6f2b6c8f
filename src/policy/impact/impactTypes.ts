import type { ObjectKind } from '../types.ts';

/**
 * The vocabulary of the rules of immediate effect (impact.ts) and of `which`'s live hazards
 * (hazards.ts): a queue's statistics, what the vhost holds, the keys the rules read, what they
 * find; and the readers of a value they share.
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

// The keys the rules read, as constants: the rules run for every object a change moves.
export const LENGTH_KEYS = ['max-length', 'max-length-bytes'] as const;
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
   * A federation key comes to an object (or names another upstream, set or pattern) and what it
   * names exists (or cannot be known: the set `all`, a pattern): its link starts.
   */
  | {
      readonly effect: 'link-starts';
      readonly key: (typeof FEDERATION_KEYS)[number];
      /** The upstream, set or (`federation-upstream-pattern`) pattern the key names. */
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

export const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The new value is stricter: set where there was none, or lower. */
export const lowered = (before: number | undefined, after: number | undefined): after is number =>
  after !== undefined && (before === undefined || after < before);

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
