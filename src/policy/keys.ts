// Over 400 lines: which version and type takes which key is one table, and every rule that reads it across versions sits beside it.
import { type ApplyTo, atLeast, type BrokerVersion, OBJECT_KINDS, type ObjectKind } from './types.ts';

/**
 * Which object type takes which key, by broker version. Sources: rabbit_policies.erl,
 * rabbit_{classic,quorum,stream}_queue.erl capabilities(), rabbit_policy.erl merge, at each tag
 * listed in ../shared/reference/rabbitmq-policies.md sections 3–5. The differential tests prove
 * these tables against the real brokers: 3.10.8, 4.0.5 and 4.3.6 (scripts/broker-4, broker-4.3).
 *
 * The 4.1–4.3 rows, which of them a running 4.3.6 proves and which still come from the source:
 * - proven (test/integration/differential-engine.test.ts, versions.test.ts): which keys 4.3
 *   accepts in user and in operator policies (every key of KEYS), queue-master-locator refused in
 *   both, the delayed-retry pairing rules (validateDefinition.ts), the queue types taking
 *   consumer-timeout, consumer-disconnected-timeout and delayed-retry-* (none vetoes them), which
 *   types consumer-timeout times a consumer out on (risks.ts: quorum only on 4.3, every queue
 *   type on 4.0; test/integration/consumer-timeout.test.ts), the operator merge of
 *   delayed-retry-min (max) and -max (min) whenever the generated policies set them on both
 *   layers, and every veto row for the keys the engine differential draws from (its userKeys),
 *   which 4.3 keeps as 4.0 has them;
 * - from the source only: the 4.1.x and 4.2.x versions themselves (no such broker here; 4.3
 *   agreeing with 4.0 says nothing of when a row changed between them), the 4.2.0 removal of
 *   single-active-consumer from the quorum and stream vetoes (not a valid policy key, so no
 *   policy can show it), the selector-fields rows (no open-source validator takes them: 4.3.6
 *   refuses the keys), the 4.3.1 boundary of delayed-retry-* (4.3.0 refusing them), and the
 *   operator merge of delayed-retry-type (operator wins; no case sets it on both layers).
 */

type Range = {
  readonly since?: readonly [number, number, number];
  readonly until?: readonly [number, number, number];
};

function inRange(v: BrokerVersion, r: Range): boolean {
  if (r.since && !atLeast(v, ...r.since)) return false;
  if (r.until && atLeast(v, ...r.until)) return false;
  return true;
}

// --- apply-to ---------------------------------------------------------------------------

/** The apply-to words this broker accepts. Per-queue-type scopes arrived in 3.12.0. */
export function acceptedApplyTo(v: BrokerVersion): readonly ApplyTo[] {
  return atLeast(v, 3, 12)
    ? ['all', 'queues', 'exchanges', 'classic_queues', 'quorum_queues', 'streams']
    : ['all', 'queues', 'exchanges'];
}

const QUEUE_TYPE_SCOPE: Record<Exclude<ObjectKind, 'exchange'>, ApplyTo> = {
  classic: 'classic_queues',
  quorum: 'quorum_queues',
  stream: 'streams',
};

/**
 * Does a policy with this apply-to reach an object of this kind at all? `null` is a queue of a
 * type this bot does not know (a plugin's, a newer broker's): only what reaches every queue.
 */
export function scopeFits(applyTo: string, kind: ObjectKind | null): boolean {
  if (applyTo === 'all') return true;
  if (kind === 'exchange') return applyTo === 'exchanges';
  return applyTo === 'queues' || (kind !== null && applyTo === QUEUE_TYPE_SCOPE[kind]);
}

/**
 * Can one object be reached by both apply-tos? `queues` and `exchanges` never meet, nor two queue
 * types (`classic_queues` and `quorum_queues`); `all` meets everything. Two policies of one layer
 * at one priority are a tie only where their scopes meet (and a name matches both patterns).
 * A queue of a type this bot does not know is reached by `all` and `queues` alone, which meet
 * anyway.
 */
export function scopesMeet(a: string, b: string): boolean {
  return OBJECT_KINDS.some((kind) => scopeFits(a, kind) && scopeFits(b, kind));
}

// --- the key-type veto --------------------------------------------------------------------

type Veto = readonly [string, Range];

/** Classic queue mirroring's keys: quorum queues and streams replicate otherwise, and refuse them. */
const CLASSIC_MIRRORING: readonly Veto[] = [
  ['ha-mode', {}],
  ['ha-params', {}],
  ['ha-sync-mode', {}],
  ['ha-promote-on-shutdown', {}],
  ['ha-promote-on-failure', {}],
  ['queue-master-locator', {}],
];

/** Refused by every queue type from 4.3.0 on. */
const SELECTOR_KEYS: readonly Veto[] = [
  ['selector-fields', { since: [4, 3, 0] }],
  ['selector-field-max-bytes', { since: [4, 3, 0] }],
];

/**
 * A policy whose definition holds ANY of these keys is skipped for that queue type, however well
 * its pattern and scope fit. It is a veto, not a "must set one useful key" rule: keys that merely
 * do nothing for the type (alternate-exchange on a queue) do not veto. Exchanges veto nothing.
 */
const VETOES: Record<Exclude<ObjectKind, 'exchange'>, readonly Veto[]> = {
  classic: [
    ['max-age', {}],
    ['stream-max-segment-size-bytes', {}],
    ['queue-leader-locator', { until: [4, 0, 0] }],
    ['initial-cluster-size', {}],
    ['delivery-limit', {}],
    ['dead-letter-strategy', {}],
    ['max-in-memory-length', { since: [3, 12, 7] }],
    ['max-in-memory-bytes', { since: [3, 12, 7] }],
    ['target-group-size', { since: [3, 12, 7] }],
    ...SELECTOR_KEYS,
  ],
  quorum: [
    ['max-priority', {}],
    ['queue-mode', {}],
    ['single-active-consumer', { until: [4, 2, 0] }],
    ...CLASSIC_MIRRORING,
    ['max-age', {}],
    ['stream-max-segment-size-bytes', {}],
    ['initial-cluster-size', {}],
    ...SELECTOR_KEYS,
  ],
  stream: [
    ['expires', {}],
    ['message-ttl', {}],
    ['dead-letter-exchange', {}],
    ['dead-letter-routing-key', {}],
    ['max-length', {}],
    ['max-in-memory-length', {}],
    ['max-in-memory-bytes', {}],
    ['max-priority', {}],
    ['overflow', {}],
    ['queue-mode', {}],
    ['single-active-consumer', { until: [4, 2, 0] }],
    ['delivery-limit', {}],
    ...CLASSIC_MIRRORING,
    ['dead-letter-strategy', {}],
    ['target-group-size', { since: [3, 12, 7] }],
    ...SELECTOR_KEYS,
  ],
};

export function vetoedKeys(kind: ObjectKind, v: BrokerVersion): ReadonlySet<string> {
  if (kind === 'exchange') return new Set();
  return new Set(VETOES[kind].filter(([, r]) => inRange(v, r)).map(([k]) => k));
}

/** The keys of this definition that make the object's type refuse the whole policy. */
export function refusedKeys(
  definition: Readonly<Record<string, unknown>>,
  vetoes: ReadonlySet<string>,
): string[] {
  return Object.keys(definition).filter((k) => vetoes.has(k));
}

// --- known keys and their values -------------------------------------------------------------

export type ValueRule =
  | { readonly type: 'string' }
  | { readonly type: 'integer'; readonly min?: number; readonly max?: number }
  | { readonly type: 'enum'; readonly values: readonly (string | number)[] }
  | { readonly type: 'duration' }
  | { readonly type: 'any' };

/** How a key set by both the user policy and the operator policy is merged. */
export type MergeRule = 'min' | 'max' | 'operator';

export interface KeySpec {
  readonly key: string;
  readonly valid: Range;
  readonly value: (v: BrokerVersion) => ValueRule;
  /** Versions in which an operator policy may set it; absent: never. */
  readonly operator?: Range | readonly Range[];
  readonly merge?: MergeRule;
  /** Only known while this plugin is enabled. */
  readonly plugin?: string;
  /**
   * A deprecated feature: warned about from `since`, refused by the broker's default
   * configuration from `deniedSince` (deprecated_features.permit.* can still allow it); `instead`
   * names what replaces it.
   */
  readonly deprecated?: {
    readonly since: readonly [number, number, number];
    readonly deniedSince: readonly [number, number, number];
    readonly instead: string;
  };
}

const str = (): ValueRule => ({ type: 'string' });
const nonNeg = (): ValueRule => ({ type: 'integer', min: 0 });
const ALL: Range = {};

export const KEYS: readonly KeySpec[] = [
  { key: 'alternate-exchange', valid: ALL, value: str },
  { key: 'dead-letter-exchange', valid: ALL, value: str },
  { key: 'dead-letter-routing-key', valid: ALL, value: str },
  {
    key: 'dead-letter-strategy',
    valid: ALL,
    value: () => ({ type: 'enum', values: ['at-most-once', 'at-least-once'] }),
  },
  { key: 'message-ttl', valid: ALL, value: nonNeg, operator: ALL, merge: 'min' },
  {
    key: 'expires',
    valid: ALL,
    value: () => ({ type: 'integer', min: 1 }),
    operator: ALL,
    merge: 'min',
  },
  { key: 'max-length', valid: ALL, value: nonNeg, operator: ALL, merge: 'min' },
  { key: 'max-length-bytes', valid: ALL, value: nonNeg, operator: ALL, merge: 'min' },
  { key: 'max-in-memory-length', valid: ALL, value: nonNeg, operator: ALL, merge: 'min' },
  { key: 'max-in-memory-bytes', valid: ALL, value: nonNeg, operator: ALL, merge: 'min' },
  {
    key: 'overflow',
    valid: ALL,
    value: () => ({ type: 'enum', values: ['drop-head', 'reject-publish', 'reject-publish-dlx'] }),
    operator: { since: [3, 12, 7] },
    merge: 'operator',
  },
  {
    key: 'delivery-limit',
    valid: ALL,
    // 4.0 made negative values mean "unlimited".
    value: (v) => (atLeast(v, 4) ? { type: 'integer' } : { type: 'integer', min: 0 }),
    operator: ALL,
    merge: 'min',
  },
  { key: 'queue-mode', valid: ALL, value: () => ({ type: 'enum', values: ['default', 'lazy'] }) },
  {
    key: 'queue-version',
    valid: ALL,
    value: () => ({ type: 'enum', values: [1, 2] }),
    operator: [{ since: [3, 11, 24], until: [3, 12, 0] }, { since: [3, 12, 7] }],
    merge: 'operator',
  },
  { key: 'max-age', valid: ALL, value: () => ({ type: 'duration' }) },
  {
    key: 'stream-max-segment-size-bytes',
    valid: ALL,
    value: () => ({ type: 'integer', min: 0, max: 3_000_000_000 }),
  },
  {
    key: 'stream-filter-size-bytes',
    valid: { since: [3, 13, 0] },
    value: () => ({ type: 'integer', min: 16, max: 255 }),
  },
  { key: 'initial-cluster-size', valid: ALL, value: nonNeg },
  {
    key: 'queue-leader-locator',
    valid: ALL,
    value: () => ({ type: 'enum', values: ['client-local', 'balanced', 'random', 'least-leaders'] }),
  },
  {
    key: 'queue-master-locator',
    valid: ALL,
    value: (v) =>
      atLeast(v, 4)
        ? { type: 'enum', values: ['client-local', 'balanced', 'random', 'least-leaders', 'min-masters'] }
        : { type: 'enum', values: ['min-masters', 'client-local', 'random'] },
    operator: { since: [4, 0, 0] },
    merge: 'operator',
    deprecated: {
      since: [4, 0, 0],
      deniedSince: [4, 3, 0],
      instead: 'queue-leader-locator ("client-local" or "balanced")',
    },
  },
  { key: 'consumer-timeout', valid: { since: [3, 12, 0] }, value: nonNeg },
  {
    key: 'target-group-size',
    valid: { since: [3, 13, 0] },
    value: nonNeg,
    operator: { since: [3, 13, 0] },
    merge: 'max',
  },
  { key: 'consumer-disconnected-timeout', valid: { since: [4, 3, 0] }, value: nonNeg },
  {
    key: 'delayed-retry-type',
    valid: { since: [4, 3, 1] },
    value: () => ({ type: 'enum', values: ['all', 'failed', 'returned', 'disabled'] }),
    operator: { since: [4, 3, 1] },
    merge: 'operator',
  },
  {
    key: 'delayed-retry-min',
    valid: { since: [4, 3, 1] },
    value: () => ({ type: 'integer', min: 1 }),
    operator: { since: [4, 3, 1] },
    merge: 'max',
  },
  {
    key: 'delayed-retry-max',
    valid: { since: [4, 3, 1] },
    value: () => ({ type: 'integer', min: 1 }),
    operator: { since: [4, 3, 1] },
    merge: 'min',
  },
  // Classic queue mirroring: removed in 4.0.
  {
    key: 'ha-mode',
    valid: { until: [4, 0, 0] },
    value: () => ({ type: 'enum', values: ['all', 'exactly', 'nodes'] }),
    operator: [
      { since: [3, 11, 10], until: [3, 12, 0] },
      { since: [3, 12, 0], until: [4, 0, 0] },
    ],
    merge: 'operator',
  },
  {
    key: 'ha-params',
    valid: { until: [4, 0, 0] },
    value: () => ({ type: 'any' }),
    operator: [{ since: [3, 11, 10], until: [4, 0, 0] }],
    merge: 'operator',
  },
  {
    key: 'ha-sync-mode',
    valid: { until: [4, 0, 0] },
    value: () => ({ type: 'enum', values: ['manual', 'automatic'] }),
    operator: [
      { since: [3, 11, 15], until: [3, 12, 0] },
      { since: [3, 12, 0], until: [4, 0, 0] },
    ],
    merge: 'operator',
  },
  { key: 'ha-sync-batch-size', valid: { until: [4, 0, 0] }, value: () => ({ type: 'integer', min: 1 }) },
  {
    key: 'ha-promote-on-shutdown',
    valid: { until: [4, 0, 0] },
    value: () => ({ type: 'enum', values: ['when-synced', 'always'] }),
  },
  {
    key: 'ha-promote-on-failure',
    valid: { until: [4, 0, 0] },
    value: () => ({ type: 'enum', values: ['when-synced', 'always'] }),
  },
  { key: 'federation-upstream', valid: ALL, value: str, plugin: 'federation' },
  { key: 'federation-upstream-set', valid: ALL, value: str, plugin: 'federation' },
  { key: 'federation-upstream-pattern', valid: ALL, value: str, plugin: 'federation' },
];

const BY_KEY = new Map(KEYS.map((k) => [k.key, k]));

export function keySpec(key: string): KeySpec | undefined {
  return BY_KEY.get(key);
}

export const MIRRORING_KEYS: ReadonlySet<string> = new Set(
  KEYS.filter((k) => k.key.startsWith('ha-')).map((k) => k.key),
);

export function isKnownKey(key: string, v: BrokerVersion, plugins: ReadonlySet<string>): boolean {
  const spec = BY_KEY.get(key);
  if (!spec || !inRange(v, spec.valid)) return false;
  return spec.plugin === undefined || plugins.has(spec.plugin);
}

export function operatorMaySet(key: string, v: BrokerVersion): boolean {
  const op = BY_KEY.get(key)?.operator;
  if (!op) return false;
  const ranges: readonly Range[] = Array.isArray(op) ? op : [op as Range];
  return ranges.some((r) => inRange(v, r));
}

/** Why a broker of another version refuses a key this one takes. */
export type DroppedWhy = 'unknown' | 'deprecated' | 'operator';

/**
 * The keys of a definition that a broker of version `from` takes and one of version `to` refuses
 * (a policy holding one is refused whole, and an import of definitions stops at it): a key `to`
 * does not know (`ha-*` from 4.0: "not recognised policy settings"), a deprecated one its default
 * configuration denies (`queue-master-locator` from 4.3: "use of deprecated ... is not
 * permitted"), or one an operator policy may no longer set. Measured: 4.0.5 and 4.3.6 refuse
 * 3.10.8's exported `ha-mode` policies, 4.3.6 its `queue-master-locator` ones, 4.0.5 takes those.
 */
export function keysDroppedBy(
  definition: Readonly<Record<string, unknown>>,
  operator: boolean,
  from: BrokerVersion,
  to: BrokerVersion,
): { readonly key: string; readonly why: DroppedWhy }[] {
  const out: { key: string; why: DroppedWhy }[] = [];
  for (const key of Object.keys(definition)) {
    const spec = BY_KEY.get(key);
    if (!spec || !inRange(from, spec.valid)) continue;
    const denied = (v: BrokerVersion) =>
      spec.deprecated !== undefined && atLeast(v, ...spec.deprecated.deniedSince);
    if (!inRange(to, spec.valid)) out.push({ key, why: 'unknown' });
    else if (denied(to) && !denied(from)) out.push({ key, why: 'deprecated' });
    else if (operator && operatorMaySet(key, from) && !operatorMaySet(key, to))
      out.push({ key, why: 'operator' });
  }
  return out;
}

// --- the operator layer ------------------------------------------------------------------------

/**
 * The delivery limit a quorum queue has when nothing sets one: from 4.0, 20 (a message returned
 * that often is dead-lettered, or dropped without a dead-letter target); before, none (it is
 * redelivered for ever). Proven by rejecting past it: test/integration/path-failures.test.ts.
 */
export const defaultDeliveryLimit = (v: BrokerVersion): number | undefined =>
  atLeast(v, 4) ? 20 : undefined;

/**
 * The stricter of two limits set for the same key (by two policies, or by a policy and the
 * object's own argument): the smaller, except that from 4.0 a negative delivery limit means
 * unlimited, and any limited value beats it.
 */
export function stricterLimit(key: string, a: number, b: number, v: BrokerVersion): number {
  if (key === 'delivery-limit' && atLeast(v, 4) && (a < 0 || b < 0)) return Math.max(a, b);
  return Math.min(a, b);
}

/**
 * The value an object gets for a key both its user policy and its operator policy set: for
 * limits the stricter one. Mirrors rabbit_policy:merge_operator_definitions and the per-key merge
 * strategies.
 */
export function mergeOperatorValue(key: string, user: unknown, operator: unknown, v: BrokerVersion): unknown {
  const rule = BY_KEY.get(key)?.merge ?? 'operator';
  const bothNumbers = typeof user === 'number' && typeof operator === 'number';
  switch (rule) {
    case 'min':
      return bothNumbers ? stricterLimit(key, user, operator, v) : operator;
    case 'max':
      return bothNumbers ? Math.max(user, operator) : operator;
    case 'operator':
      return operator;
  }
}
