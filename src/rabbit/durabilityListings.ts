import * as z from 'zod';
import { onFirstUse } from '../core/index.ts';
import {
  type Binding,
  bindingListSchema,
  count,
  exchangeSchema,
  jsonObject,
  toBinding,
  toExchange,
  toQueueKind,
} from './responses.ts';
import type { Transport } from './transport.ts';

/**
 * The listings `lint`'s durability kinds read of a vhost, each streamed in one request with the
 * columns they need and no more: the queues (durability, messages, replicas, the values they use),
 * the consumers (acknowledgement, prefetch), the exchanges (durability, alternate exchange, their
 * own counters), the bindings. Measured on 3.10.8 and 4.3.6: every column below is honoured, the
 * nested ones (`queue.name`, `message_stats.publish_in`) too.
 */

const QUEUE_COLUMNS =
  'name,type,durable,exclusive,auto_delete,messages,messages_persistent,members,online,arguments,effective_policy_definition,state,delivery_limit';
const CONSUMER_COLUMNS = 'queue.name,ack_required,prefetch_count';
const EXCHANGE_COLUMNS =
  'name,type,durable,arguments,policy,message_stats.publish_in,message_stats.publish_out';
const BINDING_COLUMNS = 'source,destination,destination_type,routing_key';

const durabilityQueueSchema = onFirstUse(() =>
  z.object({
    name: z.string(),
    type: z.string(),
    durable: z.boolean().optional(),
    exclusive: z.boolean().optional(),
    auto_delete: z.boolean().optional(),
    messages: count,
    messages_persistent: count,
    members: z.array(z.string()).optional(),
    online: z.array(z.string()).optional(),
    arguments: jsonObject,
    effective_policy_definition: jsonObject.nullable().optional(),
    state: z.string().optional(),
    delivery_limit: z.number().int().optional(),
  }),
);

/** One queue as the durability kinds read it; each field undefined where not reported. */
export interface DurabilityQueue {
  readonly name: string;
  readonly type: string;
  readonly kind: ReturnType<typeof toQueueKind>;
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

export async function* streamDurabilityQueues(
  http: Transport,
  vhost: string,
): AsyncGenerator<DurabilityQueue> {
  const path = `${http.path('queues', vhost)}?columns=${QUEUE_COLUMNS}`;
  for await (const q of http.streamList(path, durabilityQueueSchema())) {
    yield {
      name: q.name,
      type: q.type,
      kind: toQueueKind(q.type),
      durable: q.durable,
      exclusive: q.exclusive === true || q.auto_delete === true,
      messages: q.messages,
      persistent: q.messages_persistent,
      members: q.members?.length,
      online: q.online?.length,
      arguments: q.arguments,
      effective: q.effective_policy_definition ?? undefined,
      nodeDown: q.state === 'down' || q.state === 'stopped',
      deliveryLimit: q.delivery_limit,
    };
  }
}

const consumerSchema = onFirstUse(() =>
  z.object({
    queue: z.object({ name: z.string() }),
    ack_required: z.boolean(),
    prefetch_count: z.number().int().min(0).optional(),
  }),
);

/** The vhost's consumers: their queue, whether they acknowledge, their prefetch. */
export async function* streamConsumers(
  http: Transport,
  vhost: string,
): AsyncGenerator<{ queue: string; ackRequired: boolean; prefetch: number | undefined }> {
  const path = `${http.path('consumers', vhost)}?columns=${CONSUMER_COLUMNS}`;
  for await (const c of http.streamList(path, consumerSchema()))
    yield { queue: c.queue.name, ackRequired: c.ack_required, prefetch: c.prefetch_count };
}

/** The vhost's exchanges with their durability and counters (`toExchange`'s `durable`, `unrouted`). */
export async function* streamExchangesWithStats(http: Transport, vhost: string) {
  const path = `${http.path('exchanges', vhost)}?columns=${EXCHANGE_COLUMNS}`;
  for await (const e of http.streamList(path, exchangeSchema)) yield toExchange(vhost, e);
}

export async function* streamBindings(http: Transport, vhost: string): AsyncGenerator<Binding> {
  const path = `${http.path('bindings', vhost)}?columns=${BINDING_COLUMNS}`;
  for await (const b of http.streamList(path, bindingListSchema().element)) yield toBinding(b);
}
