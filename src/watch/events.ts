import * as z from 'zod';
import type { Policy, PolicyLayer } from '../policy/index.ts';
import { canonical } from '../policy/index.ts';

/**
 * The broker's event exchange (`rabbitmq_event_exchange`), read for policy changes. Pure: a
 * routing key and headers in, a policy event (or nothing) out.
 *
 * What the broker publishes, measured on 3.10.8 and 4.0.5 alike (the body is always empty):
 * - a user policy set:      `policy.set` (name, vhost, pattern, apply-to, priority, definition)
 * - a user policy cleared:  `policy.cleared` (name, vhost; no before-state)
 * - an operator policy set: `parameter.set` with component `operator_policy` and the policy in
 *   `value`, then `policy.set` with the same name, vhost and content, which looks exactly like a
 *   user policy's. That echo is told apart by the pairing below (EchoFilter).
 * - an operator policy cleared: `parameter.cleared` (component `operator_policy`), then
 *   `operator.policy.cleared` (dots: the event type with `_` turned into `.`).
 * `operator_policy.set` / `operator_policy.cleared` are never published by these versions;
 * they are bound anyway, should a later version publish them.
 * Every event carries `user_who_performed_action` and `timestamp_in_ms`.
 */

export const EVENT_EXCHANGE = 'amq.rabbitmq.event';

/** The routing keys bound; `parameter.set` is filtered to the operator-policy component. */
export const POLICY_ROUTING_KEYS = [
  'policy.set',
  'policy.cleared',
  'parameter.set',
  'operator.policy.cleared',
  'operator_policy.set',
  'operator_policy.cleared',
] as const;

export interface PolicyEvent {
  readonly layer: PolicyLayer;
  readonly vhost: string;
  readonly name: string;
  /** The policy as set; null when cleared. */
  readonly after: Policy | null;
  /** `user_who_performed_action`: a broker user, or the broker's own word (`rmq-internal`). */
  readonly actor: string;
  /** `timestamp_in_ms`: when the broker made the change. */
  readonly atMs: number;
}

const text = z.union([z.string(), z.instanceof(Buffer).transform((b) => b.toString('utf8'))]);
const whole = z.union([
  z.number(),
  z.bigint().transform(Number),
  z.string().regex(/^\d+$/).transform(Number),
]);
const priority = z.union([z.number(), z.bigint().transform(Number)]);

const Common = z.object({
  vhost: text,
  name: text,
  user_who_performed_action: text.optional(),
  timestamp_in_ms: whole.optional(),
});

const Fields = z.object({
  pattern: text,
  'apply-to': text.default('all'),
  priority: priority.default(0),
  definition: z.record(z.string(), z.unknown()),
});

function policyOf(vhost: string, name: string, f: z.output<typeof Fields>): Policy {
  return {
    vhost,
    name,
    pattern: f.pattern,
    applyTo: f['apply-to'],
    priority: f.priority,
    definition: f.definition,
  };
}

export type ParsedEvent =
  | { readonly kind: 'policy'; readonly event: PolicyEvent }
  | { readonly kind: 'ignored'; readonly why: string };

/**
 * One message of the event exchange -> a policy event. `now` stands in for a missing timestamp.
 * A message that does not parse is `ignored` with the reason (logged by the caller), never thrown.
 */
export function parseEvent(
  routingKey: string,
  headers: Readonly<Record<string, unknown>> | undefined,
  now: number,
): ParsedEvent {
  const common = Common.safeParse(headers ?? {});
  if (!common.success) return { kind: 'ignored', why: `${routingKey} without vhost or name` };
  const { vhost, name } = common.data;
  const base = {
    vhost,
    name,
    actor: common.data.user_who_performed_action ?? 'unknown',
    atMs: common.data.timestamp_in_ms ?? now,
  };
  const set = (layer: PolicyLayer, fields: unknown): ParsedEvent => {
    const f = Fields.safeParse(fields);
    if (!f.success) return { kind: 'ignored', why: `${routingKey} for ${name} without a readable policy` };
    return { kind: 'policy', event: { ...base, layer, after: policyOf(vhost, name, f.data) } };
  };
  switch (routingKey) {
    case 'policy.set':
      return set('user', headers);
    case 'operator_policy.set':
      return set('operator', headers);
    case 'parameter.set':
      if (text.safeParse(headers?.component).data !== 'operator_policy')
        return { kind: 'ignored', why: 'a runtime parameter other than an operator policy' };
      return set('operator', headers?.value);
    case 'policy.cleared':
      return { kind: 'policy', event: { ...base, layer: 'user', after: null } };
    case 'operator.policy.cleared':
    case 'operator_policy.cleared':
      return { kind: 'policy', event: { ...base, layer: 'operator', after: null } };
    default:
      return { kind: 'ignored', why: `routing key ${routingKey}` };
  }
}

/**
 * Drops the `policy.set` echo of an operator policy: the broker publishes `parameter.set`
 * (operator) first, then `policy.set` for the same vhost and name with the same content, on the
 * same queue, in that order. Their timestamps are taken apart and may differ by a millisecond
 * or so. Remembers the last few operator sets; bounded.
 */
export class EchoFilter {
  readonly #recent: { key: string; atMs: number }[] = [];
  constructor(
    private readonly size = 256,
    private readonly withinMs = 1000,
  ) {}

  /** True when the event is an echo to drop. */
  isEcho(routingKey: string, e: PolicyEvent): boolean {
    if (e.after === null) return false;
    const key = JSON.stringify([e.vhost, e.name, canonical(e.after)]);
    if (e.layer === 'operator') {
      this.#recent.push({ key, atMs: e.atMs });
      if (this.#recent.length > this.size) this.#recent.shift();
      return false;
    }
    if (routingKey !== 'policy.set') return false;
    const i = this.#recent.findIndex((r) => r.key === key && Math.abs(r.atMs - e.atMs) <= this.withinMs);
    if (i < 0) return false;
    this.#recent.splice(i, 1);
    return true;
  }
}
