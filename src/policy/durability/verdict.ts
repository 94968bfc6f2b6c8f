import { type NameWords, plural } from '../impact/index.ts';
import type { BrokerVersion } from '../types.ts';
import {
  type ConsumerFacts,
  DEFAULT_EXCHANGE,
  type DeadLetterFacts,
  deliveryLimitOf,
  type ExchangeFacts,
  type Poison,
  type PublisherFacts,
  poisonOf,
  type QueueFacts,
  requeueCountsTowardLimit,
  restartKeepsTransientExchanges,
  transientOf,
} from './facts.ts';

/**
 * Whether the messages there now survive each failure, from the broker's facts about the chain:
 * a broker restart, the loss of a node, a consumer crash, an unroutable publish, a poison
 * message. `holds` null and `lost` null are "the broker did not report what it takes", never a
 * guess; `lost` is the number of the messages there now the failure would lose, where the
 * broker's figures give one. Each rule is proven against the brokers by making the failure
 * happen (test/integration/path-failures.test.ts, path-restarts.test.ts, path-differential.test.ts).
 */

export const FAILURES = ['restart', 'node-loss', 'consumer-crash', 'unroutable', 'poison'] as const;
export type Failure = (typeof FAILURES)[number];

export interface Verdict {
  readonly holds: boolean | null;
  readonly lost: number | null;
  readonly why: string;
}

/** The chain a message travels to and from one object, as the broker reports it. */
export interface Chain {
  readonly version: BrokerVersion;
  /** The object asked about is an exchange (then `queue` is null) or a queue. */
  readonly object: { readonly name: string; readonly kind: 'queue' | 'exchange' };
  /** The exchanges that route to it (and to those), the object itself first when it is an exchange. */
  readonly exchanges: readonly ExchangeFacts[];
  readonly publishers: PublisherFacts;
  readonly queue: QueueFacts | null;
  readonly deadLetter: DeadLetterFacts;
  readonly consumers: ConsumerFacts;
  /** How many nodes the broker runs on; null when not reported. */
  readonly nodes: number | null;
}

const unknown = (why: string): Verdict => ({ holds: null, lost: null, why });

/** The transient exchanges of the chain. */
const transientExchanges = (c: Chain) =>
  c.exchanges.filter((x) => x.durable === false && x.name !== DEFAULT_EXCHANGE);

function restart(c: Chain, name: NameWords): Verdict {
  const weak = transientExchanges(c);
  const kept = restartKeepsTransientExchanges(c.version);
  // The exchanges a restart takes with their bindings: none where this version keeps them.
  const gone = kept ? [] : weak;
  const one = weak.length === 1;
  const names = weak.map((x) => name(x.name)).join(', ');
  const route =
    weak.length === 0
      ? ''
      : kept
        ? `; ${names} ${one ? 'is' : 'are'} transient, and this version keeps ${one ? 'it' : 'them'} at a restart with ${one ? 'its' : 'their'} bindings`
        : `; ${names} ${one ? 'is' : 'are'} transient: gone at a restart with ${one ? 'its' : 'their'} bindings, and what is published through ${one ? 'it' : 'them'} afterwards is unroutable`;
  const every = weak.length === 0 ? 'every exchange on the way durable' : 'every exchange on the way kept';
  const q = c.queue;
  if (q === null) {
    // An exchange holds no messages: only the route is at stake.
    return gone.length === 0
      ? {
          holds: true,
          lost: 0,
          why:
            weak.length === 0
              ? 'every exchange on the way is durable; an exchange holds no messages'
              : `an exchange holds no messages${route}`,
        }
      : { holds: false, lost: 0, why: `an exchange holds no messages${route}` };
  }
  if (!q.durable || q.exclusive) {
    const what = q.exclusive ? 'exclusive or auto-delete' : 'not durable';
    return {
      holds: false,
      lost: q.messages,
      why: `the queue is ${what}: it is gone at a restart with ${q.messages === null ? 'its messages (how many is not reported)' : `its ${plural(q.messages, 'message')}`}${route}`,
    };
  }
  const transient = transientOf(q);
  if (transient === null) {
    return unknown(
      q.kind === null
        ? `a queue of type ${name(q.type)}: what a restart keeps of it is not known to this bot${route}`
        : `the broker does not report its persistent messages (statistics not out, or its node is down)${route}`,
    );
  }
  if (transient > 0) {
    return {
      holds: false,
      lost: transient,
      why: `${plural(transient, 'transient message')} of ${q.messages}: a durable queue keeps only persistent ones${route}`,
    };
  }
  return gone.length > 0
    ? { holds: false, lost: 0, why: `its messages are persistent${route}` }
    : {
        holds: true,
        lost: 0,
        why:
          (q.kind === 'classic'
            ? `a durable queue, every message persistent, ${every}`
            : `a durable ${q.kind} queue: every message is persistent; ${every}`) + route,
      };
}

/** A replicated queue keeps going while a majority of its members is online. */
const majority = (members: number) => Math.floor(members / 2) + 1;

function nodeLoss(c: Chain): Verdict {
  const q = c.queue;
  if (q === null) return { holds: true, lost: 0, why: 'an exchange is on every node and holds no messages' };
  if (q.nodeDown) return unknown('its node is down already: its messages are unknown, not zero');
  if (q.kind === 'quorum' || q.kind === 'stream') {
    if (q.members === null || q.online === null) return unknown('the broker does not report its replicas');
    if (q.online - 1 >= majority(q.members)) {
      return {
        holds: true,
        lost: 0,
        why: `${plural(q.online, 'replica')} of ${q.members} online: losing one leaves a majority`,
      };
    }
    return {
      holds: false,
      lost: 0,
      why: `${plural(q.online, 'replica')} of ${q.members} online: losing one leaves no majority (${majority(q.members)} needed), so nothing is taken or delivered until the node is back; what it holds is kept`,
    };
  }
  if (q.kind === null) return unknown(`a queue of type ${q.type}: its replication is not known to this bot`);
  const transient = !q.durable || q.exclusive ? q.messages : transientOf(q);
  return {
    holds: false,
    lost: transient,
    why: `a classic queue lives on one node: while that node is down its messages cannot be reached${
      transient === null
        ? ''
        : transient > 0
          ? `, and ${plural(transient, 'message')} ${transient === 1 ? 'is' : 'are'} lost with it`
          : ''
    }${c.nodes === 1 ? '; this broker has one node' : ''}`,
  };
}

/**
 * What a crash does to the messages a manual consumer held, where their one return is already
 * past the delivery limit (0, or below 0 before 4.0: the broker counts a crash's return toward
 * it, test/integration/path-differential.test.ts): their fate as a poison message's; null where
 * a return is within the limit.
 */
function pastLimitAtCrash(c: Chain, q: QueueFacts, name: NameWords): { fate: Poison; why: string } | null {
  const limit = deliveryLimitOf(q, c.version);
  if (limit === null || limit >= 1) return null;
  const fate = poisonOf(q, c.deadLetter, c.version);
  const to = name(c.deadLetter.exchange ?? '');
  const where =
    fate === 'dead-lettered'
      ? `dead-lettered to ${to}`
      : fate === 'dropped'
        ? 'dropped'
        : `dead-lettered to ${to}, which routes by key: whether it finds a queue there is not known`;
  return {
    fate,
    why: `a delivery limit of ${limit}: what a crashed consumer held and had not acknowledged comes back past it, and is ${where}`,
  };
}

function consumerCrash(c: Chain, name: NameWords): Verdict {
  if (c.queue === null) return { holds: true, lost: 0, why: 'an exchange has no consumers' };
  const { consumers, autoAck } = c.consumers;
  if (consumers === null || autoAck === null) return unknown('the broker does not report its consumers');
  const past = consumers > autoAck ? pastLimitAtCrash(c, c.queue, name) : null;
  if (autoAck > 0) {
    return {
      holds: false,
      lost: null,
      why: `${plural(autoAck, 'consumer')} of ${consumers} acknowledge${autoAck === 1 ? 's' : ''} automatically: what ${autoAck === 1 ? 'it holds' : 'they hold'} when ${autoAck === 1 ? 'it crashes' : 'one crashes'} is lost (how many, the broker does not report)${past && past.fate !== 'dead-lettered' ? `; ${past.why}` : ''}`,
    };
  }
  if (past?.fate === 'dropped')
    return { holds: false, lost: null, why: `${past.why} (how many, the broker does not report)` };
  if (past?.fate === 'unknown' || past?.fate === 'redelivered') return unknown(past.why);
  if (past) return { holds: true, lost: 0, why: past.why };
  return {
    holds: true,
    lost: 0,
    why:
      consumers === 0
        ? 'no consumers now'
        : 'every consumer acknowledges: what a crashed one held is delivered again',
  };
}

function unroutable(c: Chain, name: NameWords): Verdict {
  const named = c.exchanges.filter((x) => x.name !== DEFAULT_EXCHANGE);
  const confirm =
    c.publishers.channels === null || c.publishers.confirming === null
      ? ''
      : c.publishers.channels > c.publishers.confirming
        ? `; ${plural(c.publishers.channels - c.publishers.confirming, 'publishing channel')} without confirms cannot know`
        : '';
  if (named.length === 0) {
    return {
      holds: null,
      lost: null,
      why: 'only the default exchange routes here: a message published to a name no queue has is dropped, and no alternate exchange can be set on it',
    };
  }
  if (named.some((x) => x.durable === null)) return unknown('an exchange on the way is not reported');
  // An exchange whose own bindings route every message has nothing for an alternate exchange.
  const everyOwn = named.filter((x) => x.routesEvery);
  const byAlternate = named.filter((x) => !x.routesEvery);
  const dropping = byAlternate.filter(
    (x) => x.alternateExchange === null || x.alternateExists === false || x.alternateRoutes === false,
  );
  if (dropping.length === 0) {
    if (byAlternate.some((x) => x.alternateExists === null))
      return unknown('whether the alternate exchanges exist was not read');
    const byKey = byAlternate.filter((x) => x.alternateRoutes === null);
    if (byKey.length > 0)
      return unknown(
        `the alternate exchange${byKey.length === 1 ? '' : 's'} of ${byKey.map((x) => name(x.name)).join(', ')} route${byKey.length === 1 ? 's' : ''} by key (or ${byKey.length === 1 ? 'its bindings were' : 'their bindings were'} not read): whether a message the exchange cannot route finds a queue there depends on its key`,
      );
    const own =
      everyOwn.length === 0
        ? ''
        : `${everyOwn.map((x) => name(x.name)).join(', ')} route${everyOwn.length === 1 ? 's' : ''} every message by ${everyOwn.length === 1 ? 'its' : 'their'} own bindings (a fanout, or a topic binding "#")`;
    return {
      holds: true,
      lost: 0,
      why:
        byAlternate.length === 0
          ? `${own}${confirm}`
          : `${own ? `${own}; every other exchange on the way` : 'every exchange on the way'} has an alternate exchange that exists and routes every message${confirm}`,
    };
  }
  const counted = dropping.filter((x) => x.unrouted !== null && x.unrouted > 0);
  const already =
    counted.length === 0
      ? ''
      : `; the broker counts ${counted.map((x) => `${x.unrouted} unrouted by ${name(x.name)}`).join(', ')} since its statistics began`;
  return {
    holds: false,
    lost: null,
    why: `${dropping.map((x) => name(x.name)).join(', ')} ${dropping.length === 1 ? 'has' : 'have'} no alternate exchange${dropping.some((x) => x.alternateExists === false) ? ' that exists' : ''}${dropping.some((x) => x.alternateExists === true && x.alternateRoutes === false) ? `${dropping.some((x) => x.alternateExists === false) ? ' or' : ' that'} routes anywhere` : ''}: a message ${dropping.length === 1 ? 'it' : 'they'} cannot route is dropped (returned only to a publisher asking with mandatory)${already}${confirm}`,
  };
}

function poison(c: Chain, name: NameWords): Verdict {
  const q = c.queue;
  if (q === null) return { holds: true, lost: 0, why: 'an exchange holds no messages' };
  const p = poisonOf(q, c.deadLetter, c.version);
  const limit = deliveryLimitOf(q, c.version);
  const counted = requeueCountsTowardLimit(c.version)
    ? ''
    : ' (a consumer crash or closed channel counts; a reject with requeue does not, and loops without limit)';
  switch (p) {
    case 'redelivered':
      return {
        holds: true,
        lost: 0,
        why:
          q.kind === 'classic'
            ? 'a classic queue has no delivery limit: a poison message is redelivered for ever, ahead of the others'
            : 'no delivery limit: a poison message is redelivered for ever',
      };
    case 'dead-lettered':
      return {
        holds: true,
        lost: 0,
        why: `returned ${limit} times${counted}, a message is dead-lettered to ${name(c.deadLetter.exchange ?? '')}`,
      };
    case 'dropped': {
      const dl = c.deadLetter;
      const because =
        dl.exchange === null
          ? 'there is no dead-letter target'
          : dl.exists === false
            ? `its dead-letter target ${name(dl.exchange)} does not exist`
            : `its dead-letter target ${name(dl.exchange)} routes it nowhere`;
      return {
        holds: false,
        lost: null,
        why: `returned ${limit} times${counted}, a message is dropped: ${because} (which messages are poison, the broker cannot say)`,
      };
    }
    case 'unknown':
      if (q.kind === 'stream')
        return {
          holds: true,
          lost: 0,
          why: 'a stream keeps its messages whatever its consumers do with them: a consumer reads again from its offset',
        };
      return unknown(
        q.kind === null
          ? `a queue of type ${name(q.type)}: its delivery rules are not known to this bot`
          : c.deadLetter.exists === null
            ? 'whether its dead-letter target exists was not read'
            : `returned ${limit} times${counted}, a message is dead-lettered to ${name(c.deadLetter.exchange ?? '')}, which routes by the message's routing key: whether it finds a queue there depends on the key (or was not read)`,
      );
  }
}

export type Survives = { readonly [F in Failure]: Verdict };

/** The verdict per failure. */
export function survives(c: Chain, name: NameWords): Survives {
  return {
    restart: restart(c, name),
    'node-loss': nodeLoss(c),
    'consumer-crash': consumerCrash(c, name),
    unroutable: unroutable(c, name),
    poison: poison(c, name),
  };
}

/** The failures, those that do not hold first, then the unknown, then those that hold. */
export function failuresFirst(s: Survives): Failure[] {
  const rank = (v: Verdict) => (v.holds === false ? 0 : v.holds === null ? 1 : 2);
  return [...FAILURES].sort((a, b) => rank(s[a]) - rank(s[b]));
}

/**
 * What `path` would flag, in one line for the end of `which` (null: nothing): the failures that
 * do not hold, led by the transient messages a restart loses when that is one of them.
 */
export function flagLine(s: Survives, transient: number | null): string | null {
  const failing = FAILURES.filter((f) => s[f].holds === false);
  if (failing.length === 0) return null;
  const chain = '`path` for the whole chain';
  if (failing.includes('restart') && transient !== null && transient > 0) {
    const others = failing.filter((f) => f !== 'restart');
    return `${plural(transient, 'transient message')}${others.length ? `; does not hold either: ${others.join(', ')}` : ''}: ${chain}`;
  }
  return `Does not hold: ${failing.join(', ')}: ${chain}`;
}
