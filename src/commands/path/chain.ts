import { codeOf } from '../../core/index.ts';
import {
  alternateOf,
  bindingsRoute,
  DEFAULT_EXCHANGE,
  type DeadLetterFacts,
  type ExchangeFacts,
  type Reach,
  routeStep,
  routeThen,
} from '../../policy/durability/index.ts';
import type { Policy } from '../../policy/index.ts';
import type { Binding } from '../../rabbit/index.ts';
import type { WhichBroker } from '../which/index.ts';

/**
 * What `path` reads of the broker beyond `which`'s reads, with the narrowest calls the API has:
 * the queue's own bindings, each exchange on the way (its GET, and the bindings that route to it,
 * a few levels up), the dead-letter target's bindings, the vhost's channels (two columns), its
 * counters of unroutable messages, the nodes. The queue's and exchanges' GETs and the policies
 * are asked once for `which` and `path` alike (`shared`).
 */

/** What `path` needs of the management API. ManagementClient satisfies it. */
export interface PathBroker extends WhichBroker {
  queueBindings(vhost: string, name: string): Promise<Binding[] | null>;
  exchangeBindings(vhost: string, name: string, side: 'source' | 'destination'): Promise<Binding[] | null>;
  publishingChannels(vhost: string): Promise<{ channels: number; confirming: number }>;
  vhostUnroutable(vhost: string): Promise<{ dropped?: number; returned?: number }>;
  nodeCount(): Promise<number>;
}

/** Levels of exchange-to-exchange bindings followed up from the object, and exchanges read at most. */
export const LEVELS_UP = 3;
export const EXCHANGES_READ = 40;

/** The broker with its object GETs and policy list asked once per question, whoever asks. */
export function shared(broker: PathBroker): PathBroker {
  const once = <A extends unknown[], R>(f: (...a: A) => Promise<R>) => {
    const seen = new Map<string, Promise<R>>();
    return (...a: A): Promise<R> => {
      const key = JSON.stringify(a);
      let p = seen.get(key);
      if (!p) {
        p = f(...a);
        seen.set(key, p);
      }
      return p;
    };
  };
  const view = Object.create(broker) as PathBroker;
  view.getQueue = once((v: string, n: string) => broker.getQueue(v, n));
  view.getExchange = once((v: string, n: string) => broker.getExchange(v, n));
  view.listPolicies = once((v: string) => broker.listPolicies(v));
  return view;
}

/** A reading that may fail for want of a permission or a plugin: null and why, the rest goes on. */
export async function orNull<T>(what: string, notRead: string[], f: () => Promise<T>): Promise<T | null> {
  try {
    return await f();
  } catch (e) {
    const code = codeOf(e);
    if (code === 'forbidden' || code === 'not-found' || code === 'bad-response' || code === 'too-large') {
      notRead.push(`${what} could not be read (${e instanceof Error ? e.message : String(e)})`);
      return null;
    }
    throw e;
  }
}

/** The values an exchange uses: its policy's definition (from the vhost's list), its own arguments on top. */
type Exchange = NonNullable<Awaited<ReturnType<WhichBroker['getExchange']>>>;

function exchangeValues(x: Exchange, policies: readonly Policy[]): Readonly<Record<string, unknown>> {
  const p = x.policy ? policies.find((q) => q.name === x.policy) : undefined;
  return { ...(p?.definition ?? {}), ...(x.arguments ?? {}) };
}

/**
 * The exchanges that route to the object, nearest first: `from.exchanges` and the sources of
 * `from.bindings` (a queue's bindings; or an exchange's own name with its own bindings, whose keys
 * say whether it routes every message, `routesEvery`), then what is bound to those, up to
 * LEVELS_UP levels and EXCHANGES_READ exchanges (`cut` says so when there were more).
 */
export async function exchangesIn(
  broker: PathBroker,
  vhost: string,
  from: { readonly exchanges?: readonly string[]; readonly bindings: readonly Binding[] },
  policies: readonly Policy[],
): Promise<{ exchanges: ExchangeFacts[]; cut: boolean }> {
  const out: ExchangeFacts[] = [];
  const seen = new Set<string>();
  // The routing keys of the bindings read from each exchange on the way (toward the object).
  const keys = new Map<string, string[]>();
  const known = (bs: readonly Binding[]) => {
    for (const b of bs) keys.set(b.source, [...(keys.get(b.source) ?? []), b.routingKey]);
    return bs.map((b) => b.source);
  };
  let level = [...new Set([...(from.exchanges ?? []), ...known(from.bindings)])];
  let cut = false;
  for (let depth = 0; depth <= LEVELS_UP && level.length > 0; depth++) {
    const fresh = level.filter((n) => !seen.has(n));
    if (seen.size + fresh.length > EXCHANGES_READ) cut = true;
    const now = fresh.slice(0, Math.max(0, EXCHANGES_READ - seen.size));
    for (const n of now) seen.add(n);
    const read = await Promise.all(
      now.map(async (name) => {
        if (name === DEFAULT_EXCHANGE) return { facts: defaultExchange(), up: [] as string[] };
        const [x, up] = await Promise.all([
          broker.getExchange(vhost, name),
          depth < LEVELS_UP ? broker.exchangeBindings(vhost, name, 'destination') : Promise.resolve([]),
        ]);
        return {
          facts: await exchangeFacts(broker, vhost, name, x, policies, keys.get(name) ?? []),
          up: known(up ?? []),
        };
      }),
    );
    for (const r of read) out.push(r.facts);
    level = read.flatMap((r) => r.up);
  }
  if (level.some((n) => !seen.has(n))) cut = true;
  return { exchanges: out, cut };
}

const defaultExchange = (): ExchangeFacts => ({
  name: DEFAULT_EXCHANGE,
  durable: true,
  alternateExchange: null,
  alternateExists: null,
  alternateRoutes: null,
  routesEvery: false,
  unrouted: null,
});

async function exchangeFacts(
  broker: PathBroker,
  vhost: string,
  name: string,
  x: Exchange | null,
  policies: readonly Policy[],
  keys: readonly string[],
): Promise<ExchangeFacts> {
  if (x === null)
    return {
      name,
      durable: null,
      alternateExchange: null,
      alternateExists: null,
      alternateRoutes: null,
      routesEvery: false,
      unrouted: null,
    };
  const ae = alternateOf(exchangeValues(x, policies));
  // What reaches the alternate exchange is what this one's bindings did not route: any key.
  const reach = ae === null ? null : await routesFrom(broker, vhost, ae, null, policies, 0);
  return {
    name,
    durable: x.durable ?? null,
    alternateExchange: ae,
    alternateExists: reach?.exists ?? null,
    alternateRoutes: reach?.routes ?? null,
    routesEvery: bindingsRoute(x.type ?? '', keys, null) === true,
    unrouted: x.unrouted ?? null,
  };
}

/**
 * Whether an exchange exists, and whether it routes every message given to it (true), none
 * (false) or it depends on each message's key (null): `routeStep` on each exchange asked of the
 * broker (its GET and its bindings), its alternate exchange for what they do not route.
 */
async function routesFrom(
  broker: PathBroker,
  vhost: string,
  name: string,
  key: string | null,
  policies: readonly Policy[],
  depth: number,
): Promise<Reach> {
  const [x, out] = await Promise.all([
    broker.getExchange(vhost, name),
    broker.exchangeBindings(vhost, name, 'source'),
  ]);
  const hop =
    x === null
      ? null
      : {
          type: x.type ?? '',
          keys: out?.map((b) => b.routingKey),
          alternate: alternateOf(exchangeValues(x, policies)),
        };
  const s = routeStep(hop, key, depth);
  return 'reach' in s
    ? s.reach
    : routeThen(s.own, await routesFrom(broker, vhost, s.next, key, policies, depth + 1));
}

/**
 * Where dead letters go: the target, whether it exists, whether it routes them: its bindings by
 * the key they carry (`key`, the queue's `dead-letter-routing-key`, else each message's own: then
 * only a fanout or a `#` binding routes them all), and its alternate exchange for the rest.
 */
export async function deadLetterOf(
  broker: PathBroker,
  vhost: string,
  exchange: string | null,
  key: string | null,
  policies: readonly Policy[],
): Promise<DeadLetterFacts> {
  if (exchange === null) return { exchange: null, exists: null, routes: null };
  return { exchange, ...(await routesFrom(broker, vhost, exchange, key, policies, 0)) };
}
