import { atLeast, type BrokerVersion, type ObjectKind } from './types.ts';

/**
 * The risk table: what losing a key costs an object, by the object's type. What a person reads
 * for each risk is said by the preview's summary (`src/preview/summary.ts`), not here. Which keys
 * exist at all, and for which versions, is keys.ts; a risky key named here that keys.ts does not
 * know is caught by test/unit/risks.test.ts.
 */

/** What losing a key means, in the order a preview lists it (the worst first). */
export const RISKS = [
  'dead-letter',
  'ttl',
  'limit',
  'delivery-limit',
  'retry-delay',
  'federation',
  'alternate-exchange',
  'retention',
  'consumer-timeout',
] as const;
export type Risk = (typeof RISKS)[number];

const QUEUES = ['classic', 'quorum'] as const;
const EVERY_KIND = ['classic', 'quorum', 'stream', 'exchange'] as const;

/**
 * Each risky key: what losing it means, and the object types it does something for (at least
 * one). A stream that "loses" message-ttl loses nothing (it never used it), and a queue that
 * loses alternate-exchange neither.
 */
export const RISKY_KEYS: Readonly<
  Record<
    string,
    {
      readonly risk: Risk;
      readonly hurts: readonly [ObjectKind, ...ObjectKind[]];
      /** The version from which a type no longer uses the key (it is accepted and ignored). */
      readonly hurtsUntil?: Partial<Record<ObjectKind, readonly [number, number, number]>>;
    }
  >
> = {
  'dead-letter-exchange': { risk: 'dead-letter', hurts: QUEUES },
  'dead-letter-routing-key': { risk: 'dead-letter', hurts: QUEUES },
  'dead-letter-strategy': { risk: 'dead-letter', hurts: ['quorum'] },
  'message-ttl': { risk: 'ttl', hurts: QUEUES },
  expires: { risk: 'ttl', hurts: QUEUES },
  'max-length': { risk: 'limit', hurts: QUEUES },
  'max-length-bytes': { risk: 'limit', hurts: ['classic', 'quorum', 'stream'] },
  overflow: { risk: 'limit', hurts: QUEUES },
  'delivery-limit': { risk: 'delivery-limit', hurts: ['quorum'] },
  'delayed-retry-type': { risk: 'retry-delay', hurts: ['quorum'] },
  'delayed-retry-min': { risk: 'retry-delay', hurts: ['quorum'] },
  'delayed-retry-max': { risk: 'retry-delay', hurts: ['quorum'] },
  // Before 4.3 the channel times out a consumer of any queue type (4.0.5 closed a classic, a
  // quorum and a stream consumer's channel); 4.3 evaluates consumer timeouts in quorum queues
  // only, and a classic or stream consumer keeps its delivery past the timeout
  // (test/integration/consumer-timeout.test.ts).
  'consumer-timeout': {
    risk: 'consumer-timeout',
    hurts: ['classic', 'quorum', 'stream'],
    hurtsUntil: { classic: [4, 3, 0], stream: [4, 3, 0] },
  },
  'consumer-disconnected-timeout': { risk: 'consumer-timeout', hurts: ['quorum'] },
  'federation-upstream': { risk: 'federation', hurts: EVERY_KIND },
  'federation-upstream-set': { risk: 'federation', hurts: EVERY_KIND },
  'federation-upstream-pattern': { risk: 'federation', hurts: EVERY_KIND },
  'alternate-exchange': { risk: 'alternate-exchange', hurts: ['exchange'] },
  'max-age': { risk: 'retention', hurts: ['stream'] },
  'stream-max-segment-size-bytes': { risk: 'retention', hurts: ['stream'] },
};

const entryOf = (key: string) => (Object.hasOwn(RISKY_KEYS, key) ? RISKY_KEYS[key] : undefined);

/**
 * Whether an object of this kind does anything with a key of the table on this version: false
 * for one its type takes and ignores (alternate-exchange on a queue, consumer-timeout on a
 * classic queue from 4.3); undefined for a key the table does not hold, of which nothing is said.
 */
export function keyHasEffect(key: string, kind: ObjectKind, v: BrokerVersion): boolean | undefined {
  const entry = entryOf(key);
  if (!entry) return undefined;
  if (!(entry.hurts as readonly ObjectKind[]).includes(kind)) return false;
  const until = entry.hurtsUntil?.[kind];
  return !(until && atLeast(v, ...until));
}

/** What losing `key` costs an object of this kind on this version; undefined when nothing it uses. */
export function riskOf(key: string, kind: ObjectKind, v: BrokerVersion): Risk | undefined {
  return keyHasEffect(key, kind, v) ? entryOf(key)?.risk : undefined;
}
