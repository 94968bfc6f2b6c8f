/**
 * The broker's vocabulary, shared by every pure module of src/policy.
 * Nothing here does I/O.
 */

/** What a policy can apply to. Queue kinds are the broker's queue types. */
export const OBJECT_KINDS = ['classic', 'quorum', 'stream', 'exchange'] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

/** The broker's own apply-to words. Which ones a broker accepts depends on its version. */
export type ApplyTo = 'all' | 'queues' | 'exchanges' | 'classic_queues' | 'quorum_queues' | 'streams';
export const APPLY_TO_VALUES: readonly ApplyTo[] = [
  'all',
  'queues',
  'exchanges',
  'classic_queues',
  'quorum_queues',
  'streams',
];

/** User policies and operator policies live in separate namespaces and are resolved separately. */
export type PolicyLayer = 'user' | 'operator';

export type Definition = Readonly<Record<string, unknown>>;

/** A policy as the management API stores it. `applyTo` is kept as the broker's string. */
export interface Policy {
  readonly vhost: string;
  readonly name: string;
  readonly pattern: string;
  readonly applyTo: string;
  /** Any JSON number: the broker accepts negative and fractional priorities. */
  readonly priority: number;
  readonly definition: Definition;
}

/** The object whose policy is asked about. */
export interface ObjectRef {
  readonly vhost: string;
  readonly name: string;
  readonly kind: ObjectKind;
}

/** A broker version, read from `/api/overview`. */
export interface BrokerVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /**
   * The major release of the Erlang/OTP it runs on, when known: it decides which patterns
   * compile (`re` moved from PCRE 8 to PCRE2 in OTP 28: pcreSyntax.ts `regexEngine`).
   */
  readonly erlang?: number;
}

export function parseVersion(text: string): BrokerVersion | null {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) };
}

/** a >= b */
export function atLeast(v: BrokerVersion, major: number, minor = 0, patch = 0): boolean {
  if (v.major !== major) return v.major > major;
  if (v.minor !== minor) return v.minor > minor;
  return v.patch >= patch;
}

export function formatVersion(v: BrokerVersion): string {
  return `${v.major}.${v.minor}.${v.patch}`;
}

/** RabbitMQ refuses queue and exchange names longer than this many UTF-8 bytes. */
export const MAX_NAME_BYTES = 255;

export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}
