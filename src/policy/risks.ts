import { keySpec } from './keys.ts';
import type { ObjectKind } from './types.ts';

/**
 * The risk table: what losing a key costs an object, by the object's type. What a person reads
 * for each risk is said by the commands (`commands/words.ts`), not here.
 */

/** What losing a key means, in the order a preview lists it (the worst first). */
export const RISKS = [
  'dead-letter',
  'ttl',
  'limit',
  'delivery-limit',
  'federation',
  'alternate-exchange',
  'retention',
] as const;
export type Risk = (typeof RISKS)[number];

/**
 * Which object types a risky key does something for. A stream that "loses" message-ttl loses
 * nothing (it never used it), and a queue that loses alternate-exchange neither.
 */
const USED_BY: Readonly<Record<string, readonly ObjectKind[]>> = {
  'dead-letter-exchange': ['classic', 'quorum'],
  'dead-letter-routing-key': ['classic', 'quorum'],
  'dead-letter-strategy': ['quorum'],
  'message-ttl': ['classic', 'quorum'],
  expires: ['classic', 'quorum'],
  'max-length': ['classic', 'quorum'],
  'max-length-bytes': ['classic', 'quorum', 'stream'],
  overflow: ['classic', 'quorum'],
  'delivery-limit': ['quorum'],
  'federation-upstream': ['classic', 'quorum', 'stream', 'exchange'],
  'federation-upstream-set': ['classic', 'quorum', 'stream', 'exchange'],
  'federation-upstream-pattern': ['classic', 'quorum', 'stream', 'exchange'],
  'alternate-exchange': ['exchange'],
  'max-age': ['stream'],
  'stream-max-segment-size-bytes': ['stream'],
};

export function riskOf(key: string, kind: ObjectKind): Risk | undefined {
  const risk = keySpec(key)?.risk;
  if (!risk) return undefined;
  return USED_BY[key]?.includes(kind) ? risk : undefined;
}
