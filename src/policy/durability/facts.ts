import { defaultDeliveryLimit } from '../keys.ts';
import { atLeast, type BrokerVersion } from '../types.ts';

/**
 * What the broker reports about the objects a message travels through, as the durability rules
 * read it. Every number is the broker's; `null` is "not reported" (statistics disabled, a
 * permission, a version, a node down), never 0.
 */

/** The default exchange: every queue is bound to it by name; it cannot be declared, deleted or given an alternate exchange. */
export const DEFAULT_EXCHANGE = '';

/** An exchange on the way in. */
export interface ExchangeFacts {
  readonly name: string;
  /** null: not reported (an exchange that does not exist). */
  readonly durable: boolean | null;
  /** The alternate exchange it uses (its argument or its policy), null when none. */
  readonly alternateExchange: string | null;
  /** Whether that exchange exists; null when there is none or it was not asked. */
  readonly alternateExists: boolean | null;
  /**
   * Whether that exchange (or its own alternate) routes every message this one does not: true;
   * none (no binding, or it does not exist): false; null when it routes by key, or not read.
   */
  readonly alternateRoutes: boolean | null;
  /**
   * Whether its own bindings route every message, whatever its key (`bindingsRoute`: a fanout
   * exchange with a binding, a topic binding `#`), from the bindings read on the way to the object;
   * false when not known so (a message it cannot route then goes as `alternate…` say).
   */
  readonly routesEvery: boolean;
  /**
   * Messages it took and routed nowhere since its statistics began: its own `publish_in` less
   * `publish_out` (both in the exchange's `message_stats`); null when either is not reported.
   */
  readonly unrouted: number | null;
}

/** A queue's numbers and settings, as its detail GET (and the listings) report them. */
export interface QueueFacts {
  readonly name: string;
  /** The broker's `type`; `kind` null: a type this bot does not know. */
  readonly type: string;
  readonly kind: 'classic' | 'quorum' | 'stream' | null;
  readonly durable: boolean;
  /** Exclusive or auto-delete: gone with its connection or its last consumer, and at a restart. */
  readonly exclusive: boolean;
  readonly messages: number | null;
  /** `messages_persistent`; every message of a quorum queue or stream is persistent. */
  readonly persistent: number | null;
  /** Replicated queues: its members, and how many of them are online. */
  readonly members: number | null;
  readonly online: number | null;
  /** Its node is down: nothing live is known of it. */
  readonly nodeDown: boolean;
  /** The values it uses now (policies and its own arguments merged), for the keys read here. */
  readonly values: Readonly<Record<string, unknown>>;
  /** The delivery limit the broker reports itself (`delivery_limit`, 4.3 and later), when it does. */
  readonly reportedDeliveryLimit: number | null;
}

/** The consumers of a queue: how many, how many acknowledge automatically, with an unlimited prefetch. */
export interface ConsumerFacts {
  readonly consumers: number | null;
  readonly autoAck: number | null;
  readonly unlimitedPrefetch: number | null;
}

/** Where a queue's dead letters go. */
export interface DeadLetterFacts {
  readonly exchange: string | null;
  /** null: no target, or not asked. */
  readonly exists: boolean | null;
  /**
   * The target routes every dead-lettered message (its bindings, or an alternate exchange that
   * exists), or none; null when not known, or when it depends on each message's routing key.
   */
  readonly routes: boolean | null;
}

/** The channels publishing in the vhost now, and how many are in confirm mode. */
export interface PublisherFacts {
  readonly channels: number | null;
  readonly confirming: number | null;
}

/** What a poison message (rejected again and again) meets in a queue. */
export type Poison = 'dead-lettered' | 'dropped' | 'redelivered' | 'unknown';

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * Whether the broker's `drop_unroutable` counts: 3.10.8 leaves it at 0 after an unroutable
 * message was dropped; 4.0.5 and 4.3.6 count it (test/integration/path.test.ts). Where it does
 * not, the figure is unknown, not 0.
 */
export const countsDroppedUnroutable = (v: BrokerVersion): boolean => atLeast(v, 4);

/**
 * Whether a restart keeps a transient (non-durable) exchange and its bindings: 4.3.6 (on its
 * metadata store, Khepri) keeps them, still reported `durable: false`, and routes through them
 * after the restart; 3.10.8 and 4.0.5 (Mnesia) lose them with their bindings
 * (test/integration/path-restarts.test.ts, restarting a node of its own per version). A transient
 * queue is lost on all three.
 */
export const restartKeepsTransientExchanges = (v: BrokerVersion): boolean => atLeast(v, 4, 3);

/** A topic binding's pattern against a routing key: `*` one word, `#` none or more. */
export function topicMatches(pattern: string, key: string): boolean {
  const p = pattern.split('.');
  const k = key.split('.');
  const at = (i: number, j: number): boolean => {
    if (i === p.length) return j === k.length;
    if (p[i] === '#') return at(i + 1, j) || (j < k.length && at(i, j + 1));
    return j < k.length && (p[i] === '*' || p[i] === k[j]) && at(i + 1, j + 1);
  };
  return at(0, 0);
}

/**
 * Whether an exchange's own bindings route a message: every one (true), none (false), or it
 * depends on the message's routing key (null). `key`: the one routing key every message has
 * there (a queue's `dead-letter-routing-key`), null when each message keeps its own. A fanout
 * exchange routes whatever the key, a topic binding `#` too; a direct or topic exchange routes by
 * key; another type is not known to this bot.
 */
export function bindingsRoute(
  type: string,
  bindingKeys: readonly string[],
  key: string | null,
): boolean | null {
  if (bindingKeys.length === 0) return false;
  if (type === 'fanout') return true;
  if (type === 'topic' && bindingKeys.includes('#')) return true;
  if (key === null) return null;
  if (type === 'direct') return bindingKeys.includes(key);
  if (type === 'topic') return bindingKeys.some((b) => topicMatches(b, key));
  return null;
}

/** What following a route reads of an exchange (null: it does not exist). */
export interface RouteHop {
  readonly type: string;
  /** Its bindings' routing keys; undefined when they were not read. */
  readonly keys: readonly string[] | undefined;
  /** Its alternate exchange, null when none. */
  readonly alternate: string | null;
}

/** Whether an exchange exists, and routes every message given to it (true), none (false), or by each one's key (null). */
export interface Reach {
  readonly exists: boolean;
  readonly routes: boolean | null;
}

/** Alternate exchanges followed from the first (its alternate, that one's, …). */
export const ALTERNATES_FOLLOWED = 3;

/**
 * One exchange of a route (`routesThrough`): its answer, or what its own bindings route and the
 * alternate exchange that takes the rest. `key`: the one routing key every message has (a queue's
 * `dead-letter-routing-key`), null when each keeps its own.
 */
export function routeStep(
  x: RouteHop | null,
  key: string | null,
  depth: number,
): { readonly reach: Reach } | { readonly own: boolean | null; readonly next: string } {
  if (x === null) return { reach: { exists: false, routes: false } };
  const own = x.keys === undefined ? null : bindingsRoute(x.type, x.keys, key);
  if (own === true) return { reach: { exists: true, routes: true } };
  if (x.alternate === null) return { reach: { exists: true, routes: own } };
  if (depth >= ALTERNATES_FOLLOWED) return { reach: { exists: true, routes: null } };
  return { own, next: x.alternate };
}

/** An exchange's reach from what its own bindings route and what its alternate exchange reaches. */
export const routeThen = (own: boolean | null, then: Reach): Reach => ({
  exists: true,
  routes: then.routes === true ? true : own === false ? then.routes : null,
});

/**
 * Whether an exchange exists and routes every message given to it: its bindings by `key`, then its
 * alternate exchange for what they do not route, ALTERNATES_FOLLOWED deep; `hop` reads each from
 * listings already read (lint). `path` asks the broker for each hop with the same two steps.
 */
export function routesThrough(
  name: string,
  key: string | null,
  hop: (name: string) => RouteHop | null,
  depth = 0,
): Reach {
  const s = routeStep(hop(name), key, depth);
  return 'reach' in s ? s.reach : routeThen(s.own, routesThrough(s.next, key, hop, depth + 1));
}

/** The dead-letter exchange a queue uses, null when none. */
export const deadLetterExchangeOf = (q: Pick<QueueFacts, 'values'>): string | null =>
  str(q.values['dead-letter-exchange']);

/** The routing key a queue gives its dead letters, null when each keeps its own. */
export const deadLetterRoutingKeyOf = (q: Pick<QueueFacts, 'values'>): string | null =>
  str(q.values['dead-letter-routing-key']);

/** An exchange's alternate exchange from the values it uses. */
export const alternateOf = (values: Readonly<Record<string, unknown>>): string | null =>
  str(values['alternate-exchange']);

/** What the delivery limit and a poison message's fate are read from. */
export type PoisonFacts = Pick<QueueFacts, 'kind' | 'reportedDeliveryLimit' | 'values'>;

/**
 * The delivery limit in force on a queue: the broker's own report where it gives one (4.3), else
 * the value it uses (a policy or its argument), else the version's default (4.0 and later: 20;
 * before: none). null: none (a negative value from 4.0 means none); only quorum queues have one.
 */
export function deliveryLimitOf(q: PoisonFacts, v: BrokerVersion): number | null {
  if (q.kind !== 'quorum') return null;
  const n = q.reportedDeliveryLimit ?? num(q.values['delivery-limit']) ?? defaultDeliveryLimit(v);
  if (n === undefined) return null;
  return n < 0 && atLeast(v, 4) ? null : n;
}

/**
 * What counts toward a quorum queue's delivery limit: a message returned because its consumer's
 * channel closed or crashed, always; one rejected with `requeue` (basic.reject, basic.nack) too on
 * 3.10.8 and 4.0.5, not on 4.3.6, where it is redelivered without limit (measured:
 * test/integration/path-failures.test.ts).
 */
export const requeueCountsTowardLimit = (v: BrokerVersion): boolean => !atLeast(v, 4, 3);

/** The messages a restart loses from a durable queue: a classic queue's transient ones; null when not reported. */
export function transientOf(q: QueueFacts): number | null {
  if (q.kind === 'quorum' || q.kind === 'stream') return q.messages === null ? null : 0;
  if (q.kind === null || q.messages === null || q.persistent === null) return null;
  return Math.max(0, q.messages - q.persistent);
}

/** What a poison message meets: the limit, the dead-letter target and whether it routes. */
export function poisonOf(q: PoisonFacts, dl: DeadLetterFacts, v: BrokerVersion): Poison {
  if (q.kind === 'classic') return 'redelivered';
  if (q.kind !== 'quorum') return 'unknown';
  if (deliveryLimitOf(q, v) === null) return 'redelivered';
  if (dl.exchange === null || dl.exists === false || dl.routes === false) return 'dropped';
  if (dl.exists === null || dl.routes === null) return 'unknown';
  return 'dead-lettered';
}
