import { stricterLimit } from './keys.ts';
import { atLeast, type BrokerVersion, type ObjectKind } from './types.ts';

/**
 * The argument-vs-policy rule (reference section 6): how the broker combines an object's own
 * argument (`x-message-ttl`) with a policy's value for the same key. Proven for max-length by
 * behaviour in test/integration/arguments.test.ts; the other rows come from the broker's source.
 */

/** `smaller`: the stricter of the two holds; `argument` or `policy`: that one always holds. */
export type ArgumentRule = 'smaller' | 'argument' | 'policy';

export function argumentRule(key: string, kind: ObjectKind, v: BrokerVersion): ArgumentRule | undefined {
  if (key === 'consumer-timeout' && kind !== 'exchange') return 'smaller';
  switch (kind) {
    case 'classic':
      if (['expires', 'message-ttl', 'max-length', 'max-length-bytes'].includes(key)) return 'smaller';
      if (
        [
          'dead-letter-exchange',
          'dead-letter-routing-key',
          'overflow',
          'queue-mode',
          'queue-version',
        ].includes(key)
      ) {
        return 'argument';
      }
      return undefined;
    case 'quorum':
      if (key.startsWith('dead-letter-')) return 'argument';
      if (atLeast(v, 4)) {
        if (['max-length', 'max-length-bytes', 'expires', 'message-ttl', 'delivery-limit'].includes(key))
          return 'smaller';
        if (['consumer-disconnected-timeout', 'delayed-retry-min', 'delayed-retry-max'].includes(key))
          return 'smaller';
        if (key === 'overflow' || key === 'delayed-retry-type') return 'policy';
        return undefined;
      }
      if (
        [
          'max-length',
          'max-length-bytes',
          'max-in-memory-length',
          'max-in-memory-bytes',
          'delivery-limit',
          'message-ttl',
        ].includes(key)
      ) {
        return 'smaller';
      }
      if (key === 'overflow' || key === 'expires') return 'policy';
      return undefined;
    case 'stream':
      return [
        'max-length-bytes',
        'max-age',
        'stream-max-segment-size-bytes',
        'stream-filter-size-bytes',
      ].includes(key)
        ? 'policy'
        : undefined;
    case 'exchange':
      return key === 'alternate-exchange' ? 'argument' : undefined;
  }
}

/** The argument that sets `key` on this object: `x-<key>` on queues, the bare key on exchanges. */
export function argumentName(key: string, kind: ObjectKind): string {
  return kind === 'exchange' ? key : `x-${key}`;
}

/** Which value an object uses, given its argument and the policies' effective value. */
export function valueInUse(
  rule: ArgumentRule,
  key: string,
  argument: unknown,
  policy: unknown,
  v: BrokerVersion,
): { value: unknown; from: 'argument' | 'policy' | 'both' | 'none' } {
  if (argument === undefined && policy === undefined) return { value: undefined, from: 'none' };
  if (argument === undefined) return { value: policy, from: 'policy' };
  if (policy === undefined) return { value: argument, from: 'argument' };
  if (rule === 'argument') return { value: argument, from: 'argument' };
  if (rule === 'policy') return { value: policy, from: 'policy' };
  if (typeof argument !== 'number' || typeof policy !== 'number')
    return { value: argument, from: 'argument' };
  if (argument === policy) return { value: argument, from: 'both' };
  const pick = stricterLimit(key, argument, policy, v);
  return { value: pick, from: pick === argument ? 'argument' : 'policy' };
}

export interface ArgumentNote {
  /** The object's own argument, e.g. `x-message-ttl`. */
  readonly argument: string;
  readonly argumentValue: unknown;
  readonly rule: ArgumentRule;
  /** The value the object really uses, before and after the change. */
  readonly before: unknown;
  readonly after: unknown;
  /** Where the value in use after the change comes from. */
  readonly holds: 'argument' | 'policy' | 'both' | 'none';
}
