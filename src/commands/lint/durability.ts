import { codeOf } from '../../core/index.ts';
import {
  alternateOf,
  type ConsumerFacts,
  type DurabilityFinding,
  DurabilityLint,
  durabilityWhy,
} from '../../policy/durability/index.ts';
import { argumentsApply, type BrokerVersion, type Policy, withArguments } from '../../policy/index.ts';
import {
  type Binding,
  type DurabilityQueue,
  type DurabilityTaker,
  type ExchangeListing,
  type Started,
  startNow,
} from '../../rabbit/index.ts';

/**
 * `lint`'s durability kinds on a broker: the queues' and exchanges' columns they read come in the
 * inventory's own listings (its one queue listing with statistics, its exchange listing: the
 * `durability` option of openInventory), handed here as the pass reads them; the consumers and
 * the bindings are two listings of their own, asked at once beside the inventory's. All fed to
 * the rules `path` asks of one chain (src/policy/durability/). A definitions file holds no
 * messages, consumers or counters: `lint FILE` leaves these kinds out rather than invent them.
 */

/** What the durability kinds need of the management API beside the inventory. ManagementClient satisfies it. */
export interface DurabilitySource {
  streamConsumers(
    vhost: string,
  ): AsyncIterable<{ queue: string; ackRequired: boolean; prefetch: number | undefined }>;
  streamBindings(vhost: string): AsyncIterable<Binding>;
}

export type DurabilityLinted = DurabilityFinding & { readonly why: string };

/** The values a queue uses: the broker's merged definition of its policies, its own arguments by the argument rules. */
function queueValues(q: DurabilityQueue, version: BrokerVersion): Readonly<Record<string, unknown>> {
  const effective = q.effective ?? {};
  if (q.kind === null) return effective;
  // No argument sets a value: the definition is what it uses (most queues; no object made per queue).
  if (!argumentsApply(q.arguments, q.kind, version)) return effective;
  const layers = Object.fromEntries(
    Object.entries(effective).map(([k, value]) => [k, { value, from: 'policy' as const }]),
  );
  const sourced = withArguments(layers, q.arguments, q.kind, version);
  return Object.fromEntries(Object.entries(sourced).map(([k, v]) => [k, v.value]));
}

type Consumers = Map<string, { consumers: number; autoAck: number; unlimitedPrefetch: number }>;

const NONE: ConsumerFacts = { consumers: 0, autoAck: 0, unlimitedPrefetch: 0 };

/** Why a listing of these kinds could not be read, or undefined when its failure is not theirs to say (thrown on). */
function notReadWhy(e: unknown): string | undefined {
  const code = codeOf(e);
  if (
    code === 'forbidden' ||
    code === 'not-found' ||
    code === 'too-large' ||
    code === 'bad-response' ||
    code === 'timeout'
  )
    return `the durability listings could not be read (${e instanceof Error ? e.message : String(e)})`;
  return undefined;
}

/**
 * One vhost's durability reading: created before the inventory opens (its two listings asked at
 * once), `begin` once the policies are read, then the inventory's queues and exchanges handed in
 * (`DurabilityTaker`), then `findings`. The consumers are read before the first queue is handed
 * (`consumersRead`: the inventory's `each` waits for it).
 */
export class DurabilityReading implements DurabilityTaker {
  readonly #consumers: Promise<Consumers | { failed: unknown }>;
  readonly #bindings: Started<Binding>;
  #read: Consumers | undefined;
  #failed: unknown;
  #lint: DurabilityLint | undefined;
  #version: BrokerVersion | undefined;
  #policies = new Map<string, Policy>();
  readonly #exchanges: {
    name: string;
    durable: boolean | null;
    type: string;
    ae: string | null;
    unrouted: number | null;
  }[] = [];

  constructor(source: DurabilitySource, vhost: string) {
    this.#bindings = startNow(source.streamBindings(vhost));
    this.#consumers = (async () => {
      const consumers: Consumers = new Map();
      for await (const c of source.streamConsumers(vhost)) {
        const t = consumers.get(c.queue) ?? { consumers: 0, autoAck: 0, unlimitedPrefetch: 0 };
        t.consumers++;
        if (!c.ackRequired) t.autoAck++;
        else if (c.prefetch === 0) t.unlimitedPrefetch++;
        consumers.set(c.queue, t);
      }
      return consumers;
    })().catch((failed: unknown) => ({ failed }));
  }

  /** The rules' version and the user policies (the exchanges' values), once the inventory has them; then the consumers. */
  async begin(version: BrokerVersion, policies: readonly Policy[]): Promise<void> {
    this.#version = version;
    this.#policies = new Map(policies.map((p) => [p.name, p]));
    this.#lint = new DurabilityLint(version);
    const read = await this.#consumers;
    if ('failed' in read) this.#failed = read.failed;
    else this.#read = read;
  }

  queue(q: DurabilityQueue): void {
    const lint = this.#lint;
    const version = this.#version;
    if (!lint || !version || this.#read === undefined) return;
    const stats = q.messages !== undefined;
    lint.addQueue({
      name: q.name,
      type: q.type,
      kind: q.kind,
      durable: q.durable ?? true,
      exclusive: q.exclusive,
      messages: q.durable === undefined ? null : (q.messages ?? null),
      persistent: stats ? (q.persistent ?? null) : null,
      members: q.members ?? null,
      online: q.members === undefined ? null : (q.online ?? null),
      nodeDown: q.nodeDown,
      values: queueValues(q, version),
      reportedDeliveryLimit: q.deliveryLimit ?? null,
      // The consumers listing names every consumer of the vhost: a queue it does not name has none.
      consumerFacts: this.#read.get(q.name) ?? NONE,
    });
  }

  exchange(x: ExchangeListing): void {
    const policy = x.policy === null ? undefined : this.#policies.get(x.policy);
    this.#exchanges.push({
      name: x.name,
      durable: x.durable ?? null,
      type: x.type,
      ae: alternateOf({ ...(policy?.definition ?? {}), ...x.arguments }),
      unrouted: x.unrouted ?? null,
    });
  }

  /** The findings once the inventory's listings are read, or why they could not be (said in `notRead`; the policy kinds stand). */
  async findings(notRead: string[]): Promise<DurabilityLinted[]> {
    const lint = this.#lint;
    const version = this.#version;
    try {
      if (this.#failed !== undefined) throw this.#failed;
      if (!lint || !version) throw new Error('DurabilityReading: findings before begin');
      const names = new Set(this.#exchanges.map((x) => x.name));
      for (const x of this.#exchanges)
        lint.addExchange(
          {
            name: x.name,
            durable: x.durable,
            alternateExchange: x.ae,
            alternateExists: x.ae === null ? null : names.has(x.ae),
            alternateRoutes: null,
            routesEvery: false,
            unrouted: x.unrouted,
          },
          x.type,
        );
      await this.#bindings.each((b) => lint.addBinding(b));
      return lint.findings(names).map((f) => ({ ...f, why: durabilityWhy(f, version) }));
    } catch (e) {
      const why = notReadWhy(e);
      if (why === undefined) throw e;
      notRead.push(why);
      return [];
    }
  }

  /** Drops the listings not read (the lint ended before its findings). */
  async cancel(): Promise<void> {
    await this.#bindings.cancel();
    await this.#consumers;
  }
}
