import { codeOf } from '../../core/index.ts';
import {
  alternateOf,
  type ConsumerFacts,
  type DurabilityFinding,
  DurabilityLint,
  durabilityWhy,
} from '../../policy/durability/index.ts';
import { type BrokerVersion, type Policy, withArguments } from '../../policy/index.ts';
import type { Binding, DurabilityQueue } from '../../rabbit/index.ts';

/**
 * `lint`'s durability kinds on a broker: four listings of the vhost (consumers, exchanges with
 * their counters, queues with their durability, bindings), each streamed once, fed to the rules
 * `path` asks of one chain (src/policy/durability/). A definitions file holds no messages,
 * consumers or counters: `lint FILE` leaves these kinds out rather than invent them.
 */

/** What the durability kinds need of the management API. ManagementClient satisfies it. */
export interface DurabilitySource {
  streamDurabilityQueues(vhost: string): AsyncIterable<DurabilityQueue>;
  streamConsumers(
    vhost: string,
  ): AsyncIterable<{ queue: string; ackRequired: boolean; prefetch: number | undefined }>;
  streamExchangesWithStats(vhost: string): AsyncIterable<{
    readonly name: string;
    readonly arguments: Readonly<Record<string, unknown>>;
    readonly policy: string | null;
    readonly durable?: boolean;
    readonly unrouted?: number;
  }>;
  streamBindings(vhost: string): AsyncIterable<Binding>;
}

export type DurabilityLinted = DurabilityFinding & { readonly why: string };

/** The values a queue uses: the broker's merged definition of its policies, its own arguments by the argument rules. */
function queueValues(q: DurabilityQueue, version: BrokerVersion): Readonly<Record<string, unknown>> {
  const effective = q.effective ?? {};
  if (q.kind === null) return effective;
  const layers = Object.fromEntries(
    Object.entries(effective).map(([k, value]) => [k, { value, from: 'policy' as const }]),
  );
  const sourced = withArguments(layers, q.arguments, q.kind, version);
  return Object.fromEntries(Object.entries(sourced).map(([k, v]) => [k, v.value]));
}

export async function durabilityFindings(
  source: DurabilitySource,
  vhost: string,
  version: BrokerVersion,
  policies: readonly Policy[],
): Promise<{ findings: DurabilityLinted[]; objects: number }> {
  const consumers = new Map<string, { consumers: number; autoAck: number; unlimitedPrefetch: number }>();
  const exchanges: { name: string; durable: boolean | null; ae: string | null; unrouted: number | null }[] =
    [];
  const byName = new Map(policies.map((p) => [p.name, p]));
  await Promise.all([
    (async () => {
      for await (const c of source.streamConsumers(vhost)) {
        const t = consumers.get(c.queue) ?? { consumers: 0, autoAck: 0, unlimitedPrefetch: 0 };
        t.consumers++;
        if (!c.ackRequired) t.autoAck++;
        else if (c.prefetch === 0) t.unlimitedPrefetch++;
        consumers.set(c.queue, t);
      }
    })(),
    (async () => {
      for await (const x of source.streamExchangesWithStats(vhost)) {
        const policy = x.policy === null ? undefined : byName.get(x.policy);
        exchanges.push({
          name: x.name,
          durable: x.durable ?? null,
          ae: alternateOf({ ...(policy?.definition ?? {}), ...x.arguments }),
          unrouted: x.unrouted ?? null,
        });
      }
    })(),
  ]);
  const names = new Set(exchanges.map((x) => x.name));
  const lint = new DurabilityLint(version);
  let objects = exchanges.length;
  const none: ConsumerFacts = { consumers: 0, autoAck: 0, unlimitedPrefetch: 0 };
  for await (const q of source.streamDurabilityQueues(vhost)) {
    objects++;
    const stats = q.messages !== undefined;
    lint.addQueue(
      {
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
        consumerFacts: consumers.get(q.name) ?? none,
      },
      names,
    );
  }
  for (const x of exchanges)
    lint.addExchange({
      name: x.name,
      durable: x.durable,
      alternateExchange: x.ae,
      alternateExists: x.ae === null ? null : names.has(x.ae),
      unrouted: x.unrouted,
    });
  for await (const b of source.streamBindings(vhost)) lint.addBinding(b);
  return { findings: lint.findings().map((f) => ({ ...f, why: durabilityWhy(f, version) })), objects };
}

/** The durability kinds, or why they could not be read (said in `notRead`; the policy kinds stand). */
export async function durabilityOrNotRead(
  broker: DurabilitySource,
  vhost: string,
  version: BrokerVersion,
  policies: readonly Policy[],
  notRead: string[],
): Promise<DurabilityLinted[]> {
  try {
    return (await durabilityFindings(broker, vhost, version, policies)).findings;
  } catch (e) {
    const code = codeOf(e);
    if (
      code === 'forbidden' ||
      code === 'not-found' ||
      code === 'too-large' ||
      code === 'bad-response' ||
      code === 'timeout'
    ) {
      notRead.push(
        `the durability listings could not be read (${e instanceof Error ? e.message : String(e)})`,
      );
      return [];
    }
    throw e;
  }
}
