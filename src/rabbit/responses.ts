// Over 400 lines: every answer of the management API the bot reads, each schema beside what it means, in one place the client and the tests share.
/**
 * The management API's answers as zod schemas, and their mapping to our shapes.
 * Pure: the client fetches, this file says what a valid answer is and what it means.
 *
 * The answers the terminal's common questions read (`which`, `policies`: the overview, the
 * policies, a queue, an exchange) have their schemas built at import; every other answer's schema
 * is built on its first use (`onFirstUse`), so the terminal's start builds none of them for nothing
 * (bench/cli).
 */
import * as z from 'zod';
import { onFirstUse } from '../core/index.ts';
import type { LiveQueue } from '../policy/impact/index.ts';
import type { Policy } from '../policy/index.ts';

export type QueueKind = 'classic' | 'quorum' | 'stream';
const QUEUE_KINDS: readonly string[] = ['classic', 'quorum', 'stream'] satisfies QueueKind[];

/**
 * A queue's policy fields as the broker reported them:
 * - `undefined`: not reported (key absent): stats not emitted yet, or a mode that omits them.
 *   Unknown, NOT "no policy".
 * - `null`: reported, and there is none (the broker sends `null` or `""`).
 * - a string: the policy's name.
 */
export type ReportedPolicy = string | null | undefined;

/** What the broker says of a queue in its detail and in its listings alike. */
interface QueueFields {
  readonly name: string;
  readonly vhost: string;
  /** `null` when the broker reports a queue type we do not know (see `type`). */
  readonly kind: QueueKind | null;
  /** The broker's `type`, verbatim. */
  readonly type: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly policy: ReportedPolicy;
  /** Where the listing asks for them (the combined listing `lint` reads); undefined otherwise. */
  readonly durable?: boolean;
  readonly exclusive?: boolean;
}

export interface QueueDetail extends QueueFields {
  readonly operatorPolicy: ReportedPolicy;
  /** Merged user + operator definition of the two winners; `undefined` when not reported. */
  readonly effectiveDefinition: Readonly<Record<string, unknown>> | undefined;
  /** Its statistics (the same GET), `null` when the broker reports none for it yet. */
  readonly live: LiveQueue | null;
  /**
   * Its node is down (a cluster's node stopped): the broker says `state` "stopped" on this GET
   * ("down" in listings) and reports no statistics and no policy fields for it (4.3.6, 3 nodes).
   */
  readonly nodeDown: boolean;
  /** What it says of its durability (`path`). */
  readonly durability: QueueDurability;
}

export interface QueueListing extends QueueFields {
  /** Only in listings with stats; `undefined` otherwise or when not reported. */
  readonly operatorPolicy?: ReportedPolicy;
  readonly effectiveDefinition?: Readonly<Record<string, unknown>> | undefined;
}

export interface ExchangeDetail {
  readonly name: string;
  readonly vhost: string;
  readonly type: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** Current (read from the exchange record); `null` when none. Exchanges never report operator policies. */
  readonly policy: string | null;
  /** Internal (`amq.rabbitmq.trace`, or declared so): no federation link serves it. Absent: not reported. */
  readonly internal?: boolean;
  /** Undefined where not asked for (listings). */
  readonly durable?: boolean;
  /**
   * What it took and routed nowhere since its statistics began (`publish_in` − `publish_out`):
   * 0 when it reports neither (nothing went through), undefined when it reports one alone.
   */
  readonly unrouted?: number;
}

export type ExchangeListing = ExchangeDetail;

export interface WhoAmI {
  readonly name: string;
  readonly tags: string[];
}

// Erlang's JSON encoder has written an empty proplist as `[]` in some versions.
const emptyListAsObject = (v: unknown) => (Array.isArray(v) && v.length === 0 ? {} : v);
const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
/**
 * A JSON object (`arguments`, a definition), `[]` read as the empty one, handed on as parsed:
 * `z.record` would check every key of every policy and queue and copy it into a new object, for
 * keys JSON.parse has already made strings.
 */
export const jsonObject = z.preprocess(
  emptyListAsObject,
  z.custom<Record<string, unknown>>(isJsonObject, 'Invalid input: expected a JSON object'),
);

/** Counters (`message_stats`): `[]` when there are none yet (a channel that has not published, 4.0.5). */
const counters = <S extends z.ZodRawShape>(shape: S) =>
  z.preprocess(emptyListAsObject, z.object(shape)).optional();

export const overviewSchema = z.object({
  rabbitmq_version: z.string(),
  cluster_name: z.string().optional(),
  /** "25.2.3": the regular expression engine depends on it (src/policy/pattern/pcreSyntax.ts). */
  erlang_version: z.string().optional(),
  /** Every exchange type registered: a plugin's shows it is enabled (src/policy/plugins.ts). */
  exchange_types: z.array(z.object({ name: z.string() })).optional(),
});

/** What a schema built on first use parses to. */
export type Parsed<S extends () => z.ZodType> = z.output<ReturnType<S>>;

/** `GET /api/nodes?columns=name,applications`: each node's running applications. */
export const nodeApplicationsSchema = onFirstUse(() =>
  z.array(
    z.object({
      name: z.string(),
      applications: z.array(z.object({ name: z.string() })).optional(),
    }),
  ),
);

/** `GET /api/nodes?columns=name,running`: whether each node of the cluster runs. */
export const nodeRunningSchema = onFirstUse(() =>
  z.array(z.object({ name: z.string(), running: z.boolean().optional() })),
);

export const whoamiSchema = onFirstUse(() =>
  z.object({
    name: z.string(),
    // an array on current brokers, "a,b" on old ones
    tags: z.union([z.array(z.string()), z.string()]),
  }),
);

export const policySchema = z.object({
  vhost: z.string(),
  name: z.string(),
  pattern: z.string(),
  'apply-to': z.string(),
  priority: z.number(),
  definition: jsonObject,
});

export const policyListSchema = z.array(policySchema);

const reportedPolicy = z.string().nullable().optional();

export const queueListItemSchema = z.object({
  name: z.string(),
  type: z.string(),
  arguments: jsonObject,
  policy: reportedPolicy,
  operator_policy: reportedPolicy,
  effective_policy_definition: jsonObject.nullable().optional(),
  durable: z.boolean().optional(),
  exclusive: z.boolean().optional(),
});

export const exchangeSchema = z.object({
  name: z.string(),
  type: z.string(),
  arguments: jsonObject,
  policy: z.string().nullable().optional(),
  internal: z.boolean().optional(),
  durable: z.boolean().optional(),
  /** Its own counters: `publish_in` (taken) and `publish_out` (routed on), absent until a message went through. */
  message_stats: counters({
    publish_in: z.number().int().min(0).optional(),
    publish_out: z.number().int().min(0).optional(),
  }),
});

/** A count the broker may leave out (statistics not out yet). */
export const count = z.number().int().min(0).optional();

/**
 * A quorum queue's `delivery_limit` as the broker reports it: a number, or `"unlimited"` where a
 * negative limit turns it off (4.0.5, 4.3.6: x-delivery-limit -1), read as -1, the broker's own
 * value for none.
 */
export const deliveryLimit = z
  .union([z.number().int(), z.literal('unlimited').transform(() => -1)])
  .optional();

/**
 * A queue's live columns in the stats listing. All are statistics: absent for a queue whose stats
 * are not out yet (a quorum queue's first seconds, stats disabled), and seconds behind the broker.
 */
export const queueStatsSchema = z.object({
  name: z.string(),
  messages: count,
  messages_ready: count,
  message_bytes_ready: count,
  messages_unacknowledged: count,
  consumers: count,
  idle_since: z.string().nullable().optional(),
  /** `down` (listing) or `stopped` (GET): a classic queue whose cluster node is stopped. */
  state: z.string().optional(),
});

/**
 * What a queue's GET says of its durability (`path`): absent keys are not reported. Quorum queues
 * and streams list their `members` and the `online` ones; 4.3 reports a quorum queue's
 * `delivery_limit`; each consumer says whether it acknowledges (`ack_required`) and its prefetch.
 */
const queueDurabilityFields = {
  durable: z.boolean().optional(),
  exclusive: z.boolean().optional(),
  auto_delete: z.boolean().optional(),
  messages_persistent: count,
  members: z.array(z.string()).optional(),
  online: z.array(z.string()).optional(),
  delivery_limit: deliveryLimit,
  consumer_details: z
    .array(z.object({ ack_required: z.boolean(), prefetch_count: z.number().int().min(0).optional() }))
    .optional(),
};

/** One queue's GET: the listing's fields, its vhost, its statistics and its durability. */
export const queueDetailSchema = queueListItemSchema
  .extend({ vhost: z.string(), state: z.string().optional(), ...queueDurabilityFields })
  .merge(queueStatsSchema.omit({ name: true }));

/** A queue's durability as its GET reports it; each field undefined (or null) where not reported. */
export interface QueueDurability {
  readonly durable: boolean | undefined;
  /** Exclusive or auto-delete. */
  readonly exclusive: boolean | undefined;
  readonly persistent: number | undefined;
  readonly members: number | undefined;
  readonly online: number | undefined;
  readonly deliveryLimit: number | undefined;
  /** Its consumers; undefined when the broker lists none of them (not reported). */
  readonly consumers:
    | readonly { readonly ackRequired: boolean; readonly prefetch: number | undefined }[]
    | undefined;
}

function toQueueDurability(q: z.infer<typeof queueDetailSchema>): QueueDurability {
  return {
    durable: q.durable,
    exclusive:
      q.exclusive === undefined && q.auto_delete === undefined
        ? undefined
        : q.exclusive === true || q.auto_delete === true,
    persistent: q.messages_persistent,
    members: q.members?.length,
    online: q.online?.length,
    deliveryLimit: q.delivery_limit,
    consumers: q.consumer_details?.map((c) => ({ ackRequired: c.ack_required, prefetch: c.prefetch_count })),
  };
}

/** Whether this process reads a time without zone as UTC (then the broker's usual form is read by string). */
const LOCAL_IS_UTC =
  new Date(2026, 0, 1).getTimezoneOffset() === 0 && new Date(2026, 6, 1).getTimezoneOffset() === 0;

/**
 * The broker's `idle_since` ("2026-12-01 09:00:00", no zone: read as a local time, as always) as
 * ISO 8601; null when unreadable. Where local time is UTC the usual form is read by string (a
 * Date per queue cost 8% of parsing a 100,000-queue listing); anything else by Date.
 */
function isoOf(idle: string): string | null {
  if (LOCAL_IS_UTC && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(idle)) return `${idle.replace(' ', 'T')}.000Z`;
  const d = new Date(idle.replace(' ', 'T'));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** A length's recent history (`lengths_age`/`lengths_incr`): samples newest first, broker time in ms. */
const lengthHistory = onFirstUse(() =>
  z
    .object({ samples: z.array(z.object({ sample: z.number(), timestamp: z.number() })).optional() })
    .optional(),
);

/** The live columns with the length history asked for (`streamQueueStats` with `asOf`). */
export const queueStatsHistorySchema = onFirstUse(() =>
  queueStatsSchema.extend({
    messages_ready_details: lengthHistory(),
    messages_unacknowledged_details: lengthHistory(),
  }),
);

/** A queue's record (type, arguments) and its live columns in one element (`streamQueuesLive`). */
export const queueRecordLiveSchema = onFirstUse(() =>
  queueStatsHistorySchema().extend({
    type: z.string(),
    arguments: jsonObject,
    durable: z.boolean().optional(),
    exclusive: z.boolean().optional(),
  }),
);

/** One queue as the durability kinds read it; each field undefined where not reported. */
export interface DurabilityQueue {
  readonly name: string;
  readonly type: string;
  readonly kind: QueueKind | null;
  readonly durable: boolean | undefined;
  readonly exclusive: boolean;
  readonly messages: number | undefined;
  readonly persistent: number | undefined;
  readonly members: number | undefined;
  readonly online: number | undefined;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The broker's merged definition of its two policies; undefined when not reported. */
  readonly effective: Readonly<Record<string, unknown>> | undefined;
  readonly nodeDown: boolean;
  readonly deliveryLimit: number | undefined;
}

/** One queue of the combined listing: what the inventory reads of its record, and its numbers. */
export interface QueueRecordLive {
  readonly queue: QueueListing;
  readonly live: LiveQueue | null;
  /** Its cluster node is down (as `QueueStats`). */
  readonly nodeDown?: true;
  /** Asked with the durability columns (`streamQueuesLive`'s `durability`): what lint's durability kinds read of it. */
  readonly durability?: DurabilityQueue;
}

/** The newest sample taken before `asOfMs` (undefined: none, the queue is younger than the history). */
function sampleBefore(h: Parsed<typeof lengthHistory>, asOfMs: number): number | undefined {
  let best: { sample: number; timestamp: number } | undefined;
  for (const s of h?.samples ?? [])
    if (s.timestamp < asOfMs && (best === undefined || s.timestamp > best.timestamp)) best = s;
  return best?.sample;
}

/**
 * A queue's statistics, `null` when the broker reports none for it (never zeros). With `asOfMs`
 * (and the length history in `q`): the ready and unacknowledged messages as sampled just before
 * that time, the bytes scaled to them from the mean size now (0 when none are ready now: unknown,
 * which the rules read as "not out yet"); without a sample before it, the numbers now.
 */
export function toLiveQueue(
  q: Omit<Parsed<typeof queueStatsHistorySchema>, 'name'>,
  asOfMs?: number,
): LiveQueue | null {
  const { messages, messages_ready: readyNow, messages_unacknowledged: unackedNow } = q;
  if (messages === undefined || readyNow === undefined || unackedNow === undefined) return null;
  if (q.consumers === undefined) return null;
  // Streams report their messages and never their bytes (3.10.8, 4.0.5, 4.3.6): known, bytes null.
  const bytesNow = q.message_bytes_ready ?? null;
  const idle = q.idle_since ? isoOf(q.idle_since) : null;
  const wasReady = asOfMs === undefined ? undefined : sampleBefore(q.messages_ready_details, asOfMs);
  const wasUnacked =
    asOfMs === undefined ? undefined : sampleBefore(q.messages_unacknowledged_details, asOfMs);
  const ready = wasReady ?? readyNow;
  const unacked = wasUnacked ?? unackedNow;
  const bytes =
    bytesNow === null || wasReady === undefined || wasReady === readyNow
      ? bytesNow
      : readyNow > 0
        ? Math.round((bytesNow / readyNow) * wasReady)
        : 0;
  return {
    messages: wasReady === undefined && wasUnacked === undefined ? messages : ready + unacked,
    ready,
    unacked,
    bytes,
    consumers: q.consumers,
    idleSince: idle,
  };
}

/** One queue of the stats listing: its name and live numbers. */
export interface QueueStats {
  readonly name: string;
  readonly live: LiveQueue | null;
  /** Its cluster node is down: no statistics, and none predicted from the nodes that answer. */
  readonly nodeDown?: true;
}

/** The states a queue whose node is down is reported in: `stopped` (its GET), `down` (listings). */
const QUEUE_NODE_DOWN: ReadonlySet<string> = new Set(['stopped', 'down']);

/** Whether the broker reports the queue's node as down. */
export const isNodeDown = (q: { readonly state?: string | undefined }): boolean =>
  QUEUE_NODE_DOWN.has(q.state ?? '');

/** `{ nodeDown: true }` for a queue whose node is down, `{}` otherwise (spread into a reading). */
export const nodeDownOf = (q: { readonly state?: string | undefined }): { nodeDown?: true } =>
  isNodeDown(q) ? { nodeDown: true } : {};

/** A vhost's federation: upstream and set names, the objects whose link runs (null: no plugin). */
export interface FederationState {
  readonly upstreams: ReadonlySet<string>;
  readonly upstreamSets: ReadonlySet<string>;
  readonly links: ReadonlySet<string> | null;
  /** Why the links could not be read (this identity may not list them): `links` is then null, not known. */
  readonly linksNotRead?: string;
}

/** `GET /api/parameters/federation-upstream{,-set}/{vhost}`: only the names matter here. */
export const parameterNamesSchema = onFirstUse(() => z.array(z.object({ name: z.string() })));

/** `GET /api/federation-links/{vhost}`: which object each link serves (linkListings.ts reads the rest). */
export const federationLinksSchema = onFirstUse(() =>
  z.array(
    z.object({
      exchange: z.string().optional(),
      queue: z.string().optional(),
      status: z.string().optional(),
    }),
  ),
);

export const vhostListSchema = onFirstUse(() => z.array(z.object({ name: z.string() })));

/** `GET /api/permissions/{vhost}/{user}`: regular expressions over resource names. */
/**
 * One deprecated feature the broker reports in use (`GET /api/deprecated-features/used`; 3.10.8 has
 * no such path): its name and the phase the broker itself gives it (4.0.5 and 4.3.6:
 * `transient_nonexcl_queues` as `permitted_by_default`). Other fields go unread.
 */
export const deprecatedFeaturesSchema = onFirstUse(() =>
  z.array(z.object({ name: z.string(), deprecation_phase: z.string() })).max(1000),
);

export interface DeprecatedFeature {
  readonly name: string;
  readonly phase: string;
}

export const permissionSchema = onFirstUse(() =>
  z.object({ configure: z.string(), write: z.string(), read: z.string() }),
);
export type Permission = Parsed<typeof permissionSchema>;

export function toReportedPolicy(v: string | null | undefined): ReportedPolicy {
  if (v === undefined) return undefined;
  return v === null || v === '' ? null : v;
}

export function toQueueKind(type: string): QueueKind | null {
  return QUEUE_KINDS.includes(type) ? (type as QueueKind) : null;
}

export function toPolicy(p: z.infer<typeof policySchema>): Policy {
  return {
    vhost: p.vhost,
    name: p.name,
    pattern: p.pattern,
    applyTo: p['apply-to'],
    priority: p.priority,
    definition: p.definition,
  };
}

export function toWhoAmI(w: Parsed<typeof whoamiSchema>): WhoAmI {
  const tags = Array.isArray(w.tags) ? w.tags : w.tags.split(',');
  return { name: w.name, tags: tags.map((t) => t.trim()).filter((t) => t !== '') };
}

export function toQueueDetail(q: z.infer<typeof queueDetailSchema>): QueueDetail {
  return {
    name: q.name,
    vhost: q.vhost,
    kind: toQueueKind(q.type),
    type: q.type,
    arguments: q.arguments,
    policy: toReportedPolicy(q.policy),
    operatorPolicy: toReportedPolicy(q.operator_policy),
    effectiveDefinition: q.effective_policy_definition ?? undefined,
    live: toLiveQueue(q),
    nodeDown: isNodeDown(q),
    durability: toQueueDurability(q),
  };
}

/**
 * `withStats: false` is the `disable_stats=true` listing: its `policy` is read from the queue
 * record (current), and the key is left out when the queue has none, so absent means none.
 * With stats, absent means "not reported yet" and is kept as `undefined`.
 */
export function toQueueListing(
  vhost: string,
  q: z.infer<typeof queueListItemSchema>,
  withStats: boolean,
): QueueListing {
  const base = {
    name: q.name,
    vhost,
    kind: toQueueKind(q.type),
    type: q.type,
    arguments: q.arguments,
    ...(q.durable === undefined ? {} : { durable: q.durable }),
    ...(q.exclusive === undefined ? {} : { exclusive: q.exclusive }),
  };
  if (!withStats) return { ...base, policy: toReportedPolicy(q.policy ?? null) };
  return {
    ...base,
    policy: toReportedPolicy(q.policy),
    operatorPolicy: toReportedPolicy(q.operator_policy),
    effectiveDefinition: q.effective_policy_definition ?? undefined,
  };
}

/** Exchanges read `policy` from the record: current, and the key is absent when there is none. */
export function toExchange(vhost: string, e: z.infer<typeof exchangeSchema>): ExchangeDetail {
  return {
    name: e.name,
    vhost,
    type: e.type,
    arguments: e.arguments,
    policy: e.policy === undefined || e.policy === null || e.policy === '' ? null : e.policy,
    ...(e.internal === undefined ? {} : { internal: e.internal }),
    ...(e.durable === undefined ? {} : { durable: e.durable }),
    ...unroutedOf(e.message_stats),
  };
}

/** An exchange's unrouted count from its own counters (see `ExchangeDetail.unrouted`). */
function unroutedOf(stats: z.infer<typeof exchangeSchema>['message_stats']): { unrouted?: number } {
  if (stats === undefined) return {};
  const { publish_in: i, publish_out: o } = stats;
  if (i === undefined) return o === undefined ? { unrouted: 0 } : {};
  return { unrouted: Math.max(0, i - (o ?? 0)) };
}

/** `GET /api/queues/{vhost}/{name}/bindings`, `…/exchanges/{vhost}/{name}/bindings/{source|destination}`. */
export const bindingListSchema = onFirstUse(() =>
  z.array(
    z.object({
      source: z.string(),
      destination: z.string(),
      destination_type: z.enum(['queue', 'exchange']),
      routing_key: z.string(),
    }),
  ),
);
export interface Binding {
  readonly source: string;
  readonly destination: string;
  readonly destinationType: 'queue' | 'exchange';
  readonly routingKey: string;
}
export const toBinding = (b: Parsed<typeof bindingListSchema>[number]): Binding => ({
  source: b.source,
  destination: b.destination,
  destinationType: b.destination_type,
  routingKey: b.routing_key,
});

/** `GET /api/vhosts/{vhost}/channels?columns=…`: whether each is in confirm mode and has published. */
export const channelListSchema = onFirstUse(() =>
  z.array(
    z.object({
      confirm: z.boolean().optional(),
      message_stats: counters({ publish: z.number().int().min(0).optional() }),
    }),
  ),
);

/** `GET /api/vhosts/{vhost}`: its counters of unroutable messages (absent without statistics). */
export const vhostStatsSchema = onFirstUse(() =>
  z.object({
    message_stats: counters({
      drop_unroutable: z.number().int().min(0).optional(),
      return_unroutable: z.number().int().min(0).optional(),
    }),
  }),
);

/** `GET /api/nodes?columns=name`. */
export const nodeNamesSchema = onFirstUse(() => z.array(z.object({ name: z.string() })));

/** The first few zod issues as one line, for a bad-response message. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

/** A paged listing (`page` given): the items wrapped with counts. */
export const pagedQueuesSchema = onFirstUse(() => z.object({ items: z.array(queueListItemSchema) }));

/** A page of a listing narrowed by its name filter: how many the filter found, and those on the page. */
export const foundPageSchema = <S extends z.ZodType>(item: S) =>
  z.object({ filtered_count: z.number().int().min(0), items: z.array(item) });

/** A listing asked for `columns=name` only ("did you mean"). */
export const nameOnlySchema = onFirstUse(() => z.object({ name: z.string() }));
