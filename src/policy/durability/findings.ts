import { defaultDeliveryLimit } from '../keys.ts';
import { LISTED_OBJECTS } from '../lint/index.ts';
import type { BrokerVersion } from '../types.ts';
import {
  ALTERNATES_FOLLOWED,
  type ConsumerFacts,
  DEFAULT_EXCHANGE,
  type DeadLetterFacts,
  deadLetterExchangeOf,
  deadLetterRoutingKeyOf,
  deliveryLimitOf,
  type ExchangeFacts,
  type PoisonFacts,
  poisonOf,
  type QueueFacts,
  type Reach,
  restartKeepsTransientExchanges,
  routesThrough,
  transientOf,
} from './facts.ts';

/**
 * `lint`'s durability kinds, vhost-wide: the same rules `path` asks of one chain (facts.ts),
 * asked of every queue and exchange of the vhost, one finding per kind with the objects listed
 * (as the policy kinds list theirs). They need live facts (messages, consumers, replicas, the
 * exchanges' counters): a definitions file holds none, so they are found on a broker only.
 */

export const DURABILITY_KINDS = [
  'poison-dropped',
  'transient-messages',
  'transient-route',
  'auto-ack-dead-letter',
  'replicas-fragile',
  'unroutable-dropped',
] as const;
export type DurabilityKind = (typeof DURABILITY_KINDS)[number];

export const DURABILITY_SEVERITY: { readonly [K in DurabilityKind]: 'error' | 'warning' } = {
  'poison-dropped': 'error',
  'transient-messages': 'warning',
  'transient-route': 'warning',
  'auto-ack-dead-letter': 'warning',
  'replicas-fragile': 'warning',
  'unroutable-dropped': 'warning',
};

/** A finding of a durability kind: no policy is its cause (`policy` "", as lint's other findings without one), the objects it concerns. */
export interface DurabilityFinding {
  readonly kind: DurabilityKind;
  readonly severity: 'error' | 'warning';
  readonly policy: '';
  readonly operator: false;
  /** At most LISTED_OBJECTS names, in code-unit order. */
  readonly objects: readonly string[];
  readonly objectCount: number;
  /** transient-messages: the messages a restart loses now, summed. */
  readonly lost?: number;
}

/** One queue of the vhost with what the rules read of it. */
export interface LintQueue extends QueueFacts {
  readonly consumerFacts: ConsumerFacts;
}

/** A binding: an exchange to a queue or to another exchange. */
export interface BindingFacts {
  readonly source: string;
  readonly destination: string;
  readonly destinationType: 'queue' | 'exchange';
  /** Read where a dead-letter or alternate exchange's routes are judged (`routesThrough`). */
  readonly routingKey?: string;
}

class Listed {
  readonly list: string[] = [];
  count = 0;
  lost = 0;
  add(name: string, lost = 0): void {
    this.count++;
    this.lost += lost;
    if (this.list.length < LISTED_OBJECTS) this.list.push(name);
  }
}

/** A quorum queue with a delivery limit: whether a poison message is dropped waits for the exchanges. */
interface PoisonPending {
  readonly name: string;
  readonly facts: PoisonFacts;
  readonly dlx: string | null;
}

/**
 * The tallies of one pass: queues, exchanges and bindings fed once each (queues as the listing
 * streams them, before or after the exchanges), the findings at the end. Exchanges and queues'
 * durability are kept by name (booleans) for the bindings, which come last; the quorum queues
 * whose poison messages meet a dead-letter target wait for the exchanges (`findings`), in the
 * order they came.
 */
export class DurabilityLint {
  readonly #version: BrokerVersion;
  readonly #by = new Map<DurabilityKind, Listed>(DURABILITY_KINDS.map((k) => [k, new Listed()]));
  readonly #durableQueue = new Map<string, boolean>();
  readonly #durableExchange = new Map<string, boolean>();
  readonly #onRoute = new Set<string>();
  readonly #poison: PoisonPending[] = [];
  /** Each exchange's type and alternate, and the keys of its bindings where its routes are judged. */
  readonly #hops = new Map<string, { type: string; alternate: string | null; keys: string[] }>();
  /** Exchanges taking messages their alternate exchange (it exists) may drop: judged once the bindings are in. */
  readonly #unroutedPending: { name: string; alternate: string; unrouted: number }[] = [];
  /** The exchanges whose bindings' keys are kept: dead-letter targets and alternate exchanges, and theirs. */
  #judged: Set<string> | undefined;

  constructor(version: BrokerVersion) {
    this.#version = version;
  }

  #add(kind: DurabilityKind, name: string, lost = 0): void {
    (this.#by.get(kind) as Listed).add(name, lost);
  }

  /** A queue. */
  addQueue(q: LintQueue): void {
    this.#durableQueue.set(q.name, q.durable && !q.exclusive);
    const transient = q.durable && !q.exclusive ? transientOf(q) : null;
    if (transient !== null && transient > 0) this.#add('transient-messages', q.name, transient);
    const dlx = deadLetterExchangeOf(q);
    const auto = q.consumerFacts.autoAck;
    if (dlx && auto !== null && auto > 0) this.#add('auto-ack-dead-letter', q.name);
    if (q.kind === 'quorum') {
      const facts: PoisonFacts = {
        kind: q.kind,
        reportedDeliveryLimit: q.reportedDeliveryLimit,
        values: q.values,
      };
      if (deliveryLimitOf(facts, this.#version) !== null) this.#poison.push({ name: q.name, facts, dlx });
      if (!q.nodeDown && q.online !== null && q.online < 3) this.#add('replicas-fragile', q.name);
    }
  }

  /**
   * An exchange, every one before the first binding; `exists` whether its alternate exchange
   * exists (null: not known). `type`: its type, where the routes of what it is the target of are judged.
   */
  addExchange(x: ExchangeFacts, type?: string): void {
    if (x.name === DEFAULT_EXCHANGE) return;
    if (type !== undefined) this.#hops.set(x.name, { type, alternate: x.alternateExchange, keys: [] });
    // Where a restart keeps transient exchanges, only a transient queue is a route's weak end.
    if (x.durable !== null)
      this.#durableExchange.set(x.name, x.durable || restartKeepsTransientExchanges(this.#version));
    if (x.unrouted === null || x.unrouted <= 0) return;
    if (x.alternateExchange === null || x.alternateExists === false)
      this.#add('unroutable-dropped', x.name, x.unrouted);
    else if (x.alternateExists === true && type !== undefined)
      this.#unroutedPending.push({ name: x.name, alternate: x.alternateExchange, unrouted: x.unrouted });
  }

  /** Dead-letter targets and alternate exchanges taking what an exchange cannot route, and theirs. */
  #judgedExchanges(): Set<string> {
    const out = new Set<string>();
    let level = [...this.#poison.map((p) => p.dlx), ...this.#unroutedPending.map((x) => x.alternate)];
    for (let depth = 0; depth <= ALTERNATES_FOLLOWED && level.length > 0; depth++) {
      const fresh = level.filter((n): n is string => n !== null && !out.has(n));
      for (const n of fresh) out.add(n);
      level = fresh.map((n) => this.#hops.get(n)?.alternate ?? null).filter((n): n is string => n !== null);
    }
    return out;
  }

  /** Where the routes were judged (every exchange read with its type, and its bindings): what an exchange reaches. */
  #reach(name: string, key: string | null): Reach | null {
    if (this.#hops.size === 0) return null;
    return routesThrough(name, key, (n) => this.#hops.get(n) ?? null);
  }

  /** A binding: a transient end on a durable route (the other end durable); the keys of a judged exchange's. */
  addBinding(b: BindingFacts): void {
    if (b.source === DEFAULT_EXCHANGE) return;
    this.#judged ??= this.#judgedExchanges();
    if (b.routingKey !== undefined && this.#judged.has(b.source))
      this.#hops.get(b.source)?.keys.push(b.routingKey);
    const from = this.#durableExchange.get(b.source);
    const to =
      b.destinationType === 'queue'
        ? this.#durableQueue.get(b.destination)
        : this.#durableExchange.get(b.destination);
    if (from === undefined || to === undefined || from === to) return;
    const transient = from ? `${b.destinationType}\u0000${b.destination}` : `exchange\u0000${b.source}`;
    if (this.#onRoute.has(transient)) return;
    this.#onRoute.add(transient);
    this.#add('transient-route', transient.slice(transient.indexOf('\u0000') + 1));
  }

  /** The findings; `exchanges` says which exchanges of the vhost exist (null: not read). */
  findings(exchanges: ReadonlySet<string> | null): DurabilityFinding[] {
    for (const { name, facts, dlx } of this.#poison.splice(0)) {
      const exists = dlx ? (exchanges === null ? null : exchanges.has(dlx)) : null;
      const reach = dlx && exists ? this.#reach(dlx, deadLetterRoutingKeyOf(facts)) : null;
      const dl: DeadLetterFacts = { exchange: dlx, exists, routes: reach?.routes ?? null };
      if (poisonOf(facts, dl, this.#version) === 'dropped') this.#add('poison-dropped', name);
    }
    // An alternate exchange that routes nothing (no binding, nor an alternate of its own that does) drops as surely as none.
    for (const x of this.#unroutedPending.splice(0))
      if (this.#reach(x.alternate, null)?.routes === false)
        this.#add('unroutable-dropped', x.name, x.unrouted);
    const out: DurabilityFinding[] = [];
    for (const kind of DURABILITY_KINDS) {
      const l = this.#by.get(kind) as Listed;
      if (l.count === 0) continue;
      out.push({
        kind,
        severity: DURABILITY_SEVERITY[kind],
        policy: '',
        operator: false,
        objects: [...l.list].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        objectCount: l.count,
        ...(kind === 'transient-messages' ? { lost: l.lost } : {}),
      });
    }
    return out;
  }
}

const many = (n: number, one: string, several = `${one}s`) => `${n} ${n === 1 ? one : several}`;

/** One sentence per durability finding. */
export function durabilityWhy(f: DurabilityFinding, version: BrokerVersion): string {
  const n = f.objectCount;
  switch (f.kind) {
    case 'transient-messages':
      return `Transient messages in ${many(n, 'durable queue')}: a restart loses ${many(f.lost ?? 0, 'message')} now (path NAME for the whole chain).`;
    case 'transient-route':
      return `Transient on a durable route: ${many(n, 'exchange or queue', 'exchanges and queues')} a restart takes with ${n === 1 ? 'its' : 'their'} bindings, and what is published that way afterwards is unroutable.`;
    case 'auto-ack-dead-letter':
      return `Automatic acknowledgement on ${many(n, 'queue')} with a dead-letter target: what ${n === 1 ? 'its consumers take' : 'their consumers take'} can never be rejected, so never dead-lettered, and a crash loses it.`;
    case 'poison-dropped': {
      const d = defaultDeliveryLimit(version);
      return `Poison messages dropped by ${many(n, 'quorum queue')}: returned past the delivery limit${d === undefined ? '' : ` (${d} unless set, from 4.0)`}, a message is dropped for want of a dead-letter target that exists and routes it.`;
    }
    case 'replicas-fragile':
      return `Fewer than three replicas online on ${many(n, 'quorum queue')}: losing one node can leave no majority, and then nothing is taken or delivered until it is back.`;
    case 'unroutable-dropped':
      return `Unroutable messages on ${many(n, 'exchange')} without an alternate exchange that routes them: ${n === 1 ? 'it has' : 'they have'} routed messages nowhere since ${n === 1 ? 'its' : 'their'} statistics began (publish_in above publish_out), dropped or returned to a publisher asking with mandatory.`;
  }
}
