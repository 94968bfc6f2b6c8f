import { argumentName, argumentRule, valueInUse } from './arguments.ts';
import type { EffectiveValue } from './effective.ts';
import type { BrokerVersion, ObjectKind } from './types.ts';

/**
 * Where each value an object really uses comes from: the user policy, the operator policy, both
 * (the stricter of the two), or the object's own arguments. The two policy layers come merged
 * (effective.ts, effectiveDefinition, or the broker's effective_policy_definition); the object's
 * arguments then go on top with the broker's precedence per key and type (arguments.ts,
 * argumentRule/valueInUse: the lower value for numeric limits both set, the argument for most
 * others, the policy for a few).
 */

export type Source = EffectiveValue['from'] | 'arguments';

export interface SourcedValue {
  readonly value: unknown;
  readonly from: Source;
}

/** Whether one of an object's arguments sets a key its type reads from arguments: if none, `withArguments` changes no value. */
export function argumentsApply(
  args: Readonly<Record<string, unknown>>,
  kind: ObjectKind,
  version: BrokerVersion,
): boolean {
  for (const arg in args) {
    const key = kind === 'exchange' ? arg : arg.startsWith('x-') ? arg.slice(2) : undefined;
    if (key !== undefined && argumentRule(key, kind, version) && args[argumentName(key, kind)] !== undefined)
      return true;
  }
  return false;
}

export function withArguments(
  layers: Readonly<Record<string, EffectiveValue>>,
  args: Readonly<Record<string, unknown>>,
  kind: ObjectKind,
  version: BrokerVersion,
): Record<string, SourcedValue> {
  const out: Record<string, SourcedValue> = { ...layers };
  const keys = new Set(Object.keys(layers));
  // Arguments setting a key no policy sets: `x-message-ttl` -> message-ttl (exchanges: bare names).
  for (const arg of Object.keys(args)) {
    const key = kind === 'exchange' ? arg : arg.startsWith('x-') ? arg.slice(2) : undefined;
    if (key !== undefined) keys.add(key);
  }
  for (const key of keys) {
    const rule = argumentRule(key, kind, version);
    const argument = args[argumentName(key, kind)];
    if (!rule || argument === undefined) continue;
    const layer = layers[key];
    const used = valueInUse(rule, key, argument, layer?.value, version);
    // Equal values: the policy sets it too, and the policy's source is the one worth naming.
    out[key] =
      used.from === 'argument' || !layer
        ? { value: used.value, from: 'arguments' }
        : { value: used.value, from: layer.from };
  }
  return out;
}
