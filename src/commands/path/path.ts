import {
  type ConsumerFacts,
  countsDroppedUnroutable,
  DEFAULT_EXCHANGE,
  type DeadLetterFacts,
  deadLetterExchangeOf,
  deadLetterRoutingKeyOf,
  deliveryLimitOf,
  type ExchangeFacts,
  FAILURES,
  type Failure,
  failuresFirst,
  type Poison,
  poisonOf,
  type QueueFacts,
  survives,
  transientOf,
  type Verdict,
} from '../../policy/durability/index.ts';
import type { Hazard } from '../../policy/impact/index.ts';
import { parseVersion } from '../../policy/index.ts';
import type { NotAskedWhy } from '../../rabbit/index.ts';
import { quoted } from '../../text/index.ts';
import type { FlagDefaults, WhichInput } from '../parse.ts';
import { parseWhich } from '../parse.ts';
import type { NamedKind } from '../suggest.ts';
import { consumerFacts, queueFacts, type WhichResult, which } from '../which/index.ts';
import { notAskedOf } from '../which/whichLookup.ts';
import { deadLetterOf, exchangesIn, orNull, type PathBroker, shared } from './chain.ts';

/**
 * `path NAME`: the chain a message travels to and from a queue (or an exchange), each link as the
 * broker reports it, and for the messages there now whether they survive each failure
 * (src/policy/durability/: the rules, pure). The object, its policy and the values it uses are
 * `which`'s reading (the same GETs, asked once); the rest is chain.ts. Writes nothing.
 */

export type PathInput = WhichInput;

export function parsePath(words: readonly string[], defaults: FlagDefaults = {}): PathInput {
  const { flags: _flags, ...input } = parseWhich(words, {}, defaults, 'path');
  return input;
}

/** An exchange on the way in, as `--json` shows it. */
export interface PathExchange {
  name: string;
  durable: boolean | null;
  alternateExchange: string | null;
  alternateExists: boolean | null;
  /** It (or its own alternate) routes every message this one does not; null: by key, or not read. */
  alternateRoutes: boolean | null;
  /** Kept per vhost only by the broker (`in.unroutable`): null here. */
  unroutableDropped: number | null;
  unroutableReturned: number | null;
  /** Taken and routed nowhere since its statistics began (its `publish_in` less `publish_out`). */
  unrouted: number | null;
}

export interface PathResult {
  env: string;
  vhost: string;
  answer: 'answered' | 'missing' | 'not-asked';
  why?: NotAskedWhy;
  detail?: string;
  brokerVersion?: string;
  object: { name: string; kind: string; durable: boolean | null; type: string | null; exists: boolean };
  in: {
    exchanges: PathExchange[];
    publishers: { channels: number | null; confirming: number | null };
    /** The vhost's counters of unroutable messages since its statistics began (the broker keeps no finer ones). */
    unroutable: { dropped: number | null; returned: number | null };
    /** More exchanges route here than were read (levels or count): the list is not whole. */
    cut?: true;
  };
  queue: {
    messages: number | null;
    transient: number | null;
    replicas: number | null;
    online: number | null;
    nodes: number | null;
    /** The policy in force (the broker's report), and the values it uses that cut or expire messages. */
    policy: string | null;
    limits: Record<string, unknown>;
    /** What threatens it as it stands (`which`'s hazards, the impact rules). */
    hazards: Hazard[];
    deadLetter: DeadLetterFacts;
    deliveryLimit: number | null;
    poison: Poison;
  };
  out: ConsumerFacts;
  /** The failures that do not hold first, then the unknown, then those that hold. */
  survives: { [F in Failure]: Verdict };
  /**
   * What the policies and objects here would do differently on another broker version
   * (`--target-version`); null until asked.
   */
  upgrade: null;
  didYouMean?: { name: string; kind: NamedKind }[];
  /** Readings that failed: what they would have said is unknown, not zero. */
  notRead: string[];
}

/** The values that cut or expire messages, shown with the queue. */
const LIMIT_KEYS = [
  'message-ttl',
  'max-length',
  'max-length-bytes',
  'overflow',
  'expires',
  'delivery-limit',
  'max-age',
  'dead-letter-exchange',
  'dead-letter-routing-key',
  'dead-letter-strategy',
] as const;

const EMPTY_QUEUE: PathResult['queue'] = {
  messages: null,
  transient: null,
  replicas: null,
  online: null,
  nodes: null,
  policy: null,
  limits: {},
  hazards: [],
  deadLetter: { exchange: null, exists: null, routes: null },
  deliveryLimit: null,
  poison: 'unknown',
};
const NO_CONSUMERS: ConsumerFacts = { consumers: null, autoAck: null, unlimitedPrefetch: null };

function base(input: PathInput, env: string, w: WhichResult): PathResult {
  return {
    env,
    vhost: input.vhost,
    answer: 'not-asked',
    ...(w.brokerVersion ? { brokerVersion: w.brokerVersion } : {}),
    object: {
      name: input.name,
      kind: w.object.kind,
      durable: null,
      type: null,
      exists: w.object.exists,
    },
    in: {
      exchanges: [],
      publishers: { channels: null, confirming: null },
      unroutable: { dropped: null, returned: null },
    },
    queue: EMPTY_QUEUE,
    out: NO_CONSUMERS,
    survives: Object.fromEntries(
      FAILURES.map((f) => [f, { holds: null, lost: null, why: 'not asked' }]),
    ) as PathResult['survives'],
    upgrade: null,
    notRead: [],
  };
}

export async function path(
  input: PathInput,
  client: PathBroker,
  options: { env: string },
): Promise<PathResult> {
  const broker = shared(client);
  const notRead: string[] = [];
  const asked = which(input, broker, { governingOnly: true });
  const beside = readsBeside(broker, input, notRead);
  const w = await asked;
  const r = base(input, options.env, w);
  if (w.answer === 'not-asked')
    return {
      ...r,
      ...(w.why ? { why: w.why as NotAskedWhy } : {}),
      ...(w.detail ? { detail: w.detail } : {}),
    };
  if (!w.object.exists)
    return { ...r, answer: 'missing', ...(w.didYouMean ? { didYouMean: w.didYouMean } : {}) };
  try {
    return await answer(input, broker, w, r, beside, notRead);
  } catch (err) {
    return { ...r, ...(await notAskedOf(err, broker, input.vhost)) };
  }
}

/** The reads that need nothing `which` finds, asked beside it. */
interface Beside {
  /**
   * The exchanges that route to the queue, followed up from its bindings as soon as they are in;
   * null when there is no queue by that name (an exchange's are read once `which` found it).
   */
  upstream: Promise<{ exchanges: ExchangeFacts[]; cut: boolean } | null>;
  publishers: Promise<{ channels: number; confirming: number } | null>;
  unroutable: Promise<{ dropped?: number; returned?: number } | null>;
  nodes: Promise<number | null>;
}

function readsBeside(broker: PathBroker, input: PathInput, notRead: string[]): Beside {
  const { vhost, name } = input;
  const mayBeQueue = input.kind !== 'exchange' && name !== '';
  const bindings = mayBeQueue ? broker.queueBindings(vhost, name) : Promise.resolve(null);
  const reads: Beside = {
    upstream: bindings.then(async (bs) =>
      bs === null ? null : exchangesIn(broker, vhost, { bindings: bs }, await broker.listPolicies(vhost)),
    ),
    publishers: orNull("the vhost's channels", notRead, () => broker.publishingChannels(vhost)),
    unroutable: orNull("the vhost's counters of unroutable messages", notRead, () =>
      broker.vhostUnroutable(vhost),
    ),
    nodes: orNull('the nodes', notRead, () => broker.nodeCount()),
  };
  // Awaited by `answer`; when `which` finds no object to follow, their failures are nobody's news.
  for (const p of Object.values(reads)) p.catch(() => undefined);
  return reads;
}

async function answer(
  input: PathInput,
  broker: PathBroker,
  w: WhichResult,
  r: PathResult,
  beside: Beside,
  notRead: string[],
): Promise<PathResult> {
  const { vhost, name } = input;
  const version = parseVersion(w.brokerVersion ?? '') ?? { major: 0, minor: 0, patch: 0 };
  const values = Object.fromEntries(Object.entries(w.effective).map(([k, e]) => [k, e.value]));
  const isExchange = w.object.kind === 'exchange';
  // Both asked already for `which` (`shared`): these are its answers.
  const [policies, q] = await Promise.all([
    broker.listPolicies(vhost),
    isExchange ? Promise.resolve(null) : broker.getQueue(vhost, name),
  ]);
  const facts: QueueFacts | null = q === null ? null : queueFacts(name, q, values);
  const [{ exchanges, cut }, deadLetter, publishers, unroutable, nodes] = await Promise.all([
    isExchange
      ? // Its own bindings too: whether they route every message given to it.
        broker
          .exchangeBindings(vhost, name, 'source')
          .then((own) => exchangesIn(broker, vhost, { exchanges: [name], bindings: own ?? [] }, policies))
      : beside.upstream.then((u) => u ?? { exchanges: [], cut: false }),
    facts === null
      ? Promise.resolve(EMPTY_QUEUE.deadLetter)
      : deadLetterOf(broker, vhost, deadLetterExchangeOf(facts), deadLetterRoutingKeyOf(facts), policies),
    beside.publishers,
    beside.unroutable,
    beside.nodes,
  ]);
  const consumers = q === null ? NO_CONSUMERS : consumerFacts(q);
  const chain = {
    version,
    object: { name, kind: isExchange ? ('exchange' as const) : ('queue' as const) },
    exchanges,
    publishers: publishers ?? { channels: null, confirming: null },
    queue: facts,
    deadLetter,
    consumers,
    nodes,
  };
  const verdicts = survives(chain, quoted);
  const self = isExchange ? exchanges.find((x) => x.name === name) : undefined;
  return {
    ...r,
    answer: 'answered',
    object: {
      name,
      kind: w.object.kind,
      durable: isExchange ? (self?.durable ?? null) : (facts?.durable ?? null),
      type: isExchange ? null : (q?.type ?? null),
      exists: true,
    },
    in: {
      exchanges: exchanges.map((x) => ({
        name: x.name,
        durable: x.durable,
        alternateExchange: x.alternateExchange,
        alternateExists: x.alternateExists,
        alternateRoutes: x.alternateRoutes,
        unroutableDropped: null,
        unroutableReturned: null,
        unrouted: x.name === DEFAULT_EXCHANGE ? null : x.unrouted,
      })),
      publishers: chain.publishers,
      unroutable: {
        dropped: countsDroppedUnroutable(version) ? (unroutable?.dropped ?? null) : null,
        returned: unroutable?.returned ?? null,
      },
      ...(cut ? { cut: true as const } : {}),
    },
    queue:
      facts === null
        ? EMPTY_QUEUE
        : {
            messages: facts.messages,
            transient: facts.durable && !facts.exclusive ? transientOf(facts) : facts.messages,
            replicas: facts.members,
            online: facts.online,
            nodes,
            policy: w.inForce?.name ?? null,
            limits: Object.fromEntries(LIMIT_KEYS.filter((k) => k in values).map((k) => [k, values[k]])),
            hazards: w.hazards,
            deadLetter,
            deliveryLimit: deliveryLimitOf(facts, version),
            poison: poisonOf(facts, deadLetter, version),
          },
    out: consumers,
    survives: Object.fromEntries(
      failuresFirst(verdicts).map((f) => [f, verdicts[f]]),
    ) as PathResult['survives'],
    notRead: [...notRead, ...(w.hazardsNotRead ?? [])],
  };
}

/** 0 answered (a missing object too: the answer says so, with the close names); 3 the broker not asked. */
export function pathExitCode(r: PathResult): number {
  return r.answer === 'not-asked' ? 3 : 0;
}
