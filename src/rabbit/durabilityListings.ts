import * as z from 'zod';
import { onFirstUse } from '../core/index.ts';
import {
  type Binding,
  bindingListSchema,
  count,
  type DurabilityQueue,
  deliveryLimit,
  jsonObject,
  toBinding,
  type toQueueKind,
} from './responses.ts';
import type { Transport } from './transport.ts';

/**
 * What `lint`'s durability kinds read of a vhost beyond its inventory, each in the one request
 * with the columns they need and no more. The queues' durability (messages, persistent ones,
 * replicas, the values they use) and the exchanges' (durable, their own counters) are columns of
 * the inventory's own listings (listings.ts, `durability`: one listing of each, not a second);
 * the consumers (acknowledgement, prefetch) and the bindings are listed here. Measured on 3.10.8
 * and 4.3.6: every column below is honoured, the nested ones (`queue.name`,
 * `message_stats.publish_in`) too.
 */

/** The queue columns the durability kinds read beside the combined listing's (records and live numbers). */
export const DURABILITY_QUEUE_COLUMNS =
  'auto_delete,messages_persistent,members,online,effective_policy_definition,delivery_limit';
/** The exchange columns they read beside the inventory's. */
export const DURABILITY_EXCHANGE_COLUMNS = 'durable,message_stats.publish_in,message_stats.publish_out';
const CONSUMER_COLUMNS = 'queue.name,ack_required,prefetch_count';
const BINDING_COLUMNS = 'source,destination,destination_type,routing_key';

/** Those queue columns as a listing's element has them (beside `name`, `type`, `durable`, `exclusive`, `messages`, `state`, `arguments`). */
export const durabilityQueueFields = onFirstUse(() => ({
  auto_delete: z.boolean().optional(),
  messages_persistent: count,
  members: z.array(z.string()).optional(),
  online: z.array(z.string()).optional(),
  effective_policy_definition: jsonObject.nullable().optional(),
  delivery_limit: deliveryLimit,
}));

/** A listed queue with the durability columns, as the durability kinds read it. */
export function toDurabilityQueue(
  q: {
    name: string;
    type: string;
    durable?: boolean | undefined;
    exclusive?: boolean | undefined;
    messages?: number | undefined;
    state?: string | undefined;
    arguments: Record<string, unknown>;
  } & Partial<z.infer<z.ZodObject<ReturnType<typeof durabilityQueueFields>>>>,
  kind: ReturnType<typeof toQueueKind>,
): DurabilityQueue {
  return {
    name: q.name,
    type: q.type,
    kind,
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

export async function* streamBindings(http: Transport, vhost: string): AsyncGenerator<Binding> {
  const path = `${http.path('bindings', vhost)}?columns=${BINDING_COLUMNS}`;
  for await (const b of http.streamList(path, bindingListSchema().element)) yield toBinding(b);
}
