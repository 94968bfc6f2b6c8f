import { plural } from './impact/index.ts';
import { type DroppedWhy, defaultDeliveryLimit, keysDroppedBy, refusedKeys, vetoedKeys } from './keys.ts';
import { atLeast, type BrokerVersion, type ObjectKind, type Policy, parseVersion } from './types.ts';

/**
 * What the policies and objects of a vhost would do differently on another broker version
 * (`lint --target-version`, and `path`'s line): the rules by version that an upgrade crosses,
 * each one measured by moving a 3.10.8 vhost's definitions into 4.0.5 and 4.3.6
 * (test/e2e/lint-upgrade.test.ts, docs/broker-facts.md). Pure: the facts come in, the causes and
 * their sentences come out. Which key each version and type takes is keys.ts's (`keysDroppedBy`,
 * `vetoedKeys`); lint's `upgrade` kind (lint/upgrade.ts) and `upgradeNotes` read the same rules.
 */

/** The versions `--target-version` takes. */
export const TARGET_VERSIONS = ['4.0', '4.3'] as const;
export type TargetVersion = (typeof TARGET_VERSIONS)[number];

/**
 * The version a target's rules are read at: its first release, or the broker's own version when
 * that is of the same minor (4.3.6 against 4.3 has nothing to cross).
 */
export function targetBrokerVersion(t: TargetVersion, from?: BrokerVersion): BrokerVersion {
  const to = parseVersion(`${t}.0`) as BrokerVersion;
  return from && from.major === to.major && from.minor === to.minor ? from : to;
}

/** A deprecated feature the broker reports in use, with the phase it gives it (`GET /api/deprecated-features/used`). */
export interface DeprecatedUse {
  readonly name: string;
  readonly phase: string;
}

/** The deprecated feature a transient non-exclusive queue is, in the broker's word. */
export const TRANSIENT_FEATURE = 'transient_nonexcl_queues';

/** Phases in which the broker still permits a feature by default (measured: 4.0.5 and 4.3.6 report `permitted_by_default`). */
const PERMITTED_PHASES: ReadonlySet<string> = new Set(['permitted_by_default']);

/**
 * Queue arguments a version refuses to declare a queue with, though the one before took them.
 * Measured: 4.3.6 refuses `x-queue-version` 1 ("unsupported queue version '1'"), 4.0.5 takes it
 * and keeps it. Between the two (4.1, 4.2) no broker here says when it changed: 4.3.0 is the first
 * release this table claims.
 */
const REFUSED_ARGUMENTS: readonly {
  readonly argument: string;
  readonly value: unknown;
  readonly since: readonly [number, number, number];
  /** What the broker answers, measured. */
  readonly broker: string;
}[] = [{ argument: 'x-queue-version', value: 1, since: [4, 3, 0], broker: "unsupported queue version '1'" }];

/** The arguments of a queue that `to` refuses and `from` takes. */
export function argumentsRefusedBy(
  args: Readonly<Record<string, unknown>>,
  from: BrokerVersion,
  to: BrokerVersion,
): string[] {
  let out: string[] | undefined;
  // Asked of every queue a lint reads: nothing made unless an argument is refused.
  for (const r of REFUSED_ARGUMENTS)
    if (args[r.argument] === r.value && atLeast(to, ...r.since) && !atLeast(from, ...r.since))
      out = withOne(out, r.argument);
  return out ?? NO_KEYS;
}

const NO_KEYS: string[] = [];

/** `list` with `item` added, made on the first one. */
function withOne<T>(list: T[] | undefined, item: T): T[] {
  const l = list ?? [];
  l.push(item);
  return l;
}

/** One reason a policy, an object or the vhost would fare otherwise on the target version. */
export type UpgradeCause =
  | 'refused-keys'
  | 'refused-argument'
  | 'governs'
  | 'stops-governing'
  | 'delivery-limit'
  | 'delivery-limit-dead-letter'
  | 'transient-queue'
  | 'deprecated-feature';

export const UPGRADE_SEVERITY = {
  'refused-keys': 'error',
  'refused-argument': 'error',
  governs: 'warning',
  'stops-governing': 'warning',
  'delivery-limit': 'warning',
  'delivery-limit-dead-letter': 'info',
  'transient-queue': 'info',
  'deprecated-feature': 'info',
} as const;

/** What an object is, for the rules that read one object (path's facts, lint's per object). */
export interface UpgradeObjectFacts {
  readonly kind: ObjectKind | null;
  /** Undefined: not read. */
  readonly durable?: boolean | undefined;
  readonly exclusive?: boolean | undefined;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The policies governing it now (null: none). */
  readonly user: Policy | null;
  readonly operator: Policy | null;
}

/** A rule that reads one object, and what it found. */
export interface ObjectUpgrade {
  readonly cause: 'refused-argument' | 'delivery-limit' | 'delivery-limit-dead-letter' | 'transient-queue';
  /** The arguments concerned (refused-argument), else empty. */
  readonly keys: readonly string[];
}

const sets = (p: Policy | null, key: string) => p !== null && key in p.definition;

/**
 * What one object would do differently on `to`, by the rules that read the object alone: a queue
 * argument `to` refuses; a quorum queue that gets `to`'s delivery limit (a poison message dropped
 * where it is redelivered now, or dead-lettered where it has a target: measured, 4.0.5 and 4.3.6
 * report `delivery_limit` 20 for both); a transient non-exclusive queue (a
 * deprecated feature). A policy's own keys are `policyUpgrade`'s.
 */
export function objectUpgrades(
  o: UpgradeObjectFacts,
  from: BrokerVersion,
  to: BrokerVersion,
): readonly ObjectUpgrade[] {
  if (o.kind === 'exchange') return NO_UPGRADES;
  // Asked of every object a lint reads: nothing made for one that has none of these.
  let out: ObjectUpgrade[] | undefined;
  const refused = argumentsRefusedBy(o.arguments, from, to);
  if (refused.length > 0) out = withOne(out, { cause: 'refused-argument', keys: refused });
  if (
    o.kind === 'quorum' &&
    defaultDeliveryLimit(from) === undefined &&
    defaultDeliveryLimit(to) !== undefined
  ) {
    if (!uses(o, 'delivery-limit', 'x-delivery-limit'))
      out = withOne(out, {
        cause: uses(o, 'dead-letter-exchange', 'x-dead-letter-exchange')
          ? 'delivery-limit-dead-letter'
          : 'delivery-limit',
        keys: NO_KEYS,
      });
  }
  if (o.durable === false && o.exclusive === false)
    out = withOne(out, { cause: 'transient-queue', keys: NO_KEYS });
  return out ?? NO_UPGRADES;
}

const NO_UPGRADES: readonly ObjectUpgrade[] = [];

/** A key the object uses from a policy of either layer or its own argument. */
const uses = (o: UpgradeObjectFacts, key: string, argument: string) =>
  sets(o.user, key) || sets(o.operator, key) || o.arguments[argument] !== undefined;

/** The keys of a policy `to` refuses, and why (keys.ts): the policy is refused whole there. */
export function policyUpgrade(
  p: Policy,
  operator: boolean,
  from: BrokerVersion,
  to: BrokerVersion,
): { readonly key: string; readonly why: DroppedWhy }[] {
  return keysDroppedBy(p.definition, operator, from, to);
}

/** The keys a type refuses on a version (keys.ts), read once per type and version. */
const VETOES = new Map<string, ReadonlySet<string>>();
function vetoesOf(kind: ObjectKind, v: BrokerVersion): ReadonlySet<string> {
  const id = `${kind}@${v.major}.${v.minor}.${v.patch}`;
  let set = VETOES.get(id);
  if (!set) {
    set = vetoedKeys(kind, v);
    VETOES.set(id, set);
  }
  return set;
}

/** A policy that would govern an object on the target and does not now, or the reverse. */
export interface GovernanceMove {
  readonly cause: 'governs' | 'stops-governing';
  /** The policy that would start or stop governing it. */
  readonly policy: Policy;
  /** The one it uses instead (null: none). */
  readonly other: Policy | null;
  /** The keys whose veto changes. */
  readonly keys: readonly string[];
}

/**
 * Whether the policy governing an object of `kind` in one layer would change on `to` because a
 * type's vetoes change between the versions (keys.ts): `matches` are the layer's policies whose
 * scope and pattern fit it, highest priority first; `current` the one governing it now (null:
 * none). On `to` the first match the target neither refuses (`policyUpgrade`) nor vetoes for the
 * type governs, alone at its priority. Undefined: nothing moves, or a tie on `to` leaves it to
 * the broker, or `current` is a policy `to` refuses (that is `refused-keys`). `refusedOn`: that
 * rule, as the caller may have it worked out already.
 */
export function governanceMove(
  matches: readonly Policy[],
  kind: Exclude<ObjectKind, 'exchange'>,
  current: Policy | null,
  operator: boolean,
  from: BrokerVersion,
  to: BrokerVersion,
  refusedOn: (p: Policy) => boolean = (p) => policyUpgrade(p, operator, from, to).length > 0,
): GovernanceMove | undefined {
  if (current !== null && refusedOn(current)) return undefined;
  const vetoes = vetoesOf(kind, to);
  let then: Policy | null = null;
  for (const p of matches) {
    if (refusedOn(p) || refusedKeys(p.definition, vetoes).length > 0) continue;
    if (then !== null) {
      if (then.priority === p.priority) return undefined;
      break;
    }
    then = p;
  }
  if (then === current) return undefined;
  const now = vetoesOf(kind, from);
  const lifted = then === null ? [] : refusedKeys(then.definition, now);
  if (then !== null && lifted.length > 0)
    return { cause: 'governs', policy: then, other: current, keys: lifted };
  if (current === null) return undefined;
  const added = refusedKeys(current.definition, vetoes);
  return added.length > 0
    ? { cause: 'stops-governing', policy: current, other: then, keys: added }
    : undefined;
}

/** How the sentences write what is not ours (the surface decides). */
export interface UpgradeWords {
  readonly name: (s: string) => string;
}

const DROPPED_WORDS: Record<DroppedWhy, string> = {
  unknown: 'not recognised policy settings there',
  deprecated: 'a deprecated feature its default configuration does not permit',
  operator: 'not a key an operator policy may set there',
};

/** What a finding or a note says, beside the objects it concerns. */
export interface UpgradeSaid {
  readonly target: TargetVersion;
  readonly cause: UpgradeCause;
  /** The keys or arguments concerned. */
  readonly keys: readonly string[];
  /** refused-keys: why each key is refused, in `keys`' order. */
  readonly dropped?: readonly DroppedWhy[];
  /** The policy (`Policy p` / `Operator policy p`), or null where none is concerned. */
  readonly policy: string | null;
  /** governs / stops-governing: the policy the objects use instead (null: none). */
  readonly other?: string | null;
  readonly feature?: DeprecatedUse | null;
  /** How many objects (1 for a note on one object). */
  readonly count: number;
  /** What the objects are: "queue", "classic queue", "object". */
  readonly noun: string;
}

/** One sentence: what would happen on the target version, as the broker would do it. */
export function upgradeWhy(s: UpgradeSaid, words: UpgradeWords): string {
  const t = s.target;
  const keys = s.keys.map((k) => words.name(k)).join(', ');
  const them = plural(s.count, s.noun);
  const policy = s.policy ?? 'no policy';
  const other = s.other === undefined || s.other === null ? 'no policy' : `policy ${words.name(s.other)}`;
  switch (s.cause) {
    case 'refused-keys': {
      const why = [...new Set(s.dropped ?? [])].map((d) => DROPPED_WORDS[d]).join('; ');
      return `${t} refuses ${keys} of ${policy} (${why}): it would refuse the policy whole, and an import of these definitions would stop at it, the policies before it written and no queue or exchange; ${s.count === 0 ? 'it governs nothing now' : `the ${them} it governs now would lose every key of it`}.`;
    }
    case 'refused-argument': {
      const args = s.keys.map((k) => {
        const r = REFUSED_ARGUMENTS.find((a) => a.argument === k);
        return r ? `${words.name(k)} ${JSON.stringify(r.value)} ("${r.broker}")` : words.name(k);
      });
      return `${t} refuses to declare ${s.count === 1 ? 'this queue' : `these ${them}`} with ${args.join(', ')}: an import of these definitions would stop at the first, its queues after it not declared.`;
    }
    case 'governs':
      return `On ${t} ${policy} would govern ${them} it does not govern now (that type refuses its ${keys} here and takes it there), in place of ${other}.`;
    case 'stops-governing':
      return `On ${t} ${policy} would no longer govern ${them} (that type refuses its ${keys} there): ${s.count === 1 ? 'it' : 'they'} would fall back to ${other}.`;
    case 'delivery-limit':
      return `On ${t} ${s.count === 1 ? 'this quorum queue' : `these ${them}`} (${s.policy === null ? 'governed by no policy' : `governed by ${policy}`}) would get a delivery limit of 20 and ${s.count === 1 ? 'has' : 'have'} no dead-letter target: a message delivered 20 times would be dropped, where now it is redelivered without limit.`;
    case 'delivery-limit-dead-letter':
      return `On ${t} ${s.count === 1 ? 'this quorum queue' : `these ${them}`} (${s.policy === null ? 'governed by no policy' : `governed by ${policy}`}) would get a delivery limit of 20: a message delivered 20 times would be dead-lettered, where now it is redelivered without limit.`;
    case 'transient-queue':
      return `${them} ${s.count === 1 ? 'is' : 'are'} transient and not exclusive: a deprecated feature (${words.name(TRANSIENT_FEATURE)}); this broker does not report deprecated features, and 4.0.5 and 4.3.6, measured, still declare such queues and report the feature ${words.name('permitted_by_default')}.`;
    case 'deprecated-feature': {
      const f = s.feature ?? { name: '?', phase: '?' };
      const on = s.count > 0 ? ` (${them})` : '';
      return `The broker reports the deprecated feature ${words.name(f.name)} in use${on}, in phase ${words.name(f.phase)} on this version; whether ${t} permits it is for that version to say.`;
    }
  }
}

/** The severity of a deprecated feature's finding: a phase that permits it by default is for information. */
export function deprecatedSeverity(phase: string): 'warning' | 'info' {
  return PERMITTED_PHASES.has(phase) ? 'info' : 'warning';
}

/** One line of `path`'s upgrade readiness: what this object would do differently on `target`. */
export interface UpgradeNote {
  readonly cause: UpgradeCause;
  readonly severity: 'error' | 'warning' | 'info';
  readonly why: string;
}

/** Each layer's policies whose scope and pattern fit the object, highest priority first (resolve.ts `matches`). */
export interface UpgradeMatches {
  readonly user: readonly Policy[];
  readonly operator: readonly Policy[];
}

/**
 * What one object would do differently on `target`, each with its sentence: its policies' keys the
 * target refuses, the policy that would govern it there when a type's vetoes change (with
 * `matches`; `lint` reads the same rule, `governanceMove`), the rules of `objectUpgrades`, and
 * the deprecated features the broker reports (`deprecated`: null where it does not report them;
 * only `transient_nonexcl_queues` names an object).
 */
export function upgradeNotes(
  o: UpgradeObjectFacts,
  version: BrokerVersion,
  target: TargetVersion,
  words: UpgradeWords,
  deprecated: readonly DeprecatedUse[] | null = null,
  matches?: UpgradeMatches,
): UpgradeNote[] {
  const to = targetBrokerVersion(target, version);
  const noun = o.kind === 'exchange' ? 'exchange' : o.kind === null ? 'queue' : `${o.kind} queue`;
  const base = { target, count: 1, noun } as const;
  const notes: UpgradeNote[] = [];
  for (const [p, operator] of [
    [o.user, false],
    [o.operator, true],
  ] as const) {
    if (p === null) continue;
    const dropped = policyUpgrade(p, operator, version, to);
    if (dropped.length === 0) continue;
    const said: UpgradeSaid = {
      ...base,
      cause: 'refused-keys',
      keys: dropped.map((d) => d.key),
      dropped: dropped.map((d) => d.why),
      policy: `${operator ? 'Operator policy' : 'Policy'} ${words.name(p.name)}`,
    };
    notes.push({ cause: 'refused-keys', severity: 'error', why: upgradeWhy(said, words) });
  }
  if (matches && o.kind !== null && o.kind !== 'exchange') {
    for (const [list, current, operator] of [
      [matches.user, o.user, false],
      [matches.operator, o.operator, true],
    ] as const) {
      const move = governanceMove(list, o.kind, current, operator, version, to);
      if (!move) continue;
      const layer = operator ? 'Operator policy' : 'Policy';
      const said: UpgradeSaid = {
        ...base,
        cause: move.cause,
        keys: move.keys,
        policy: `${layer} ${words.name(move.policy.name)}`,
        other: move.other?.name ?? null,
      };
      notes.push({ cause: move.cause, severity: UPGRADE_SEVERITY[move.cause], why: upgradeWhy(said, words) });
    }
  }
  const reported = deprecated?.find((f) => f.name === TRANSIENT_FEATURE);
  for (const u of objectUpgrades(o, version, to)) {
    const policy = o.user === null ? null : `Policy ${words.name(o.user.name)}`;
    if (u.cause === 'transient-queue' && deprecated !== null) {
      if (!reported) continue;
      const said = { ...base, cause: 'deprecated-feature', keys: [], policy, feature: reported } as const;
      notes.push({
        cause: said.cause,
        severity: deprecatedSeverity(reported.phase),
        why: upgradeWhy(said, words),
      });
      continue;
    }
    const said: UpgradeSaid = { ...base, cause: u.cause, keys: u.keys, policy };
    notes.push({ cause: u.cause, severity: UPGRADE_SEVERITY[u.cause], why: upgradeWhy(said, words) });
  }
  return notes;
}
