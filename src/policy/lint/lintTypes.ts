import type { LiveQueue, World } from '../impact/impact.ts';
import type { IndexedPolicy, KindOrUnknown } from '../policyIndex.ts';
import type { SourcedValue } from '../provenance.ts';
import type { PolicySet } from '../resolve.ts';
import type { BrokerVersion, ObjectKind, Policy, PolicyLayer } from '../types.ts';
import type { DeprecatedUse, TargetVersion } from '../upgrade.ts';

/**
 * What the pass (lint.ts) and the kinds of finding (one module each, listed in kinds.ts) share:
 * the severities, the names a finding lists, the readings the pass hands each kind, and the
 * contract a kind keeps. Types and small helpers only; no kind is named here.
 */

export const SEVERITIES = ['error', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** `severity` is `floor` or worse (`--fail-on`). */
export const atLeastAsSevere = (severity: Severity, floor: Severity): boolean =>
  SEVERITIES.indexOf(severity) <= SEVERITIES.indexOf(floor);

/** Names listed per finding; `objectCount` has them all. */
export const LISTED_OBJECTS = 20;

/** An object of the vhost as the listings give it. */
export interface LintObject {
  readonly name: string;
  /** null: a queue of a type this bot does not know. */
  readonly kind: KindOrUnknown;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** A queue's, where the listing gives them (undefined: not read). */
  readonly durable?: boolean | undefined;
  readonly exclusive?: boolean | undefined;
}

/**
 * What a lint is asked beyond the policies and objects: `--target-version` (the upgrade kind), and
 * the deprecated features the broker reports in use (null: this version does not report them).
 */
export interface LintContext {
  readonly target?: TargetVersion | undefined;
  readonly deprecated?: readonly DeprecatedUse[] | null | undefined;
}

/** What every finding says beside its kind's facts. */
export interface FindingBase {
  readonly severity: Severity;
  readonly policy: string;
  readonly operator: boolean;
  /** At most LISTED_OBJECTS names, in code-unit order. */
  readonly objects: readonly string[];
  readonly objectCount: number;
}

/** A finding of a kind whose facts are `F`: kind, severity, the base, then the facts, in that order (the `--json` order). */
export type FindingOf<F extends { readonly kind: string }> = F & FindingBase;

/**
 * The first LISTED_OBJECTS names seen, and how many. One class for every kind: the pass adds an
 * object's name to the lists its outcome names, the same call for all of them.
 */
export class Names {
  readonly list: string[] = [];
  count = 0;
  add(name: string): void {
    this.count++;
    if (this.list.length < LISTED_OBJECTS) this.list.push(name);
  }
  copy(): Names {
    const n = new Names();
    n.list.push(...this.list);
    n.count = this.count;
    return n;
  }
  get sorted(): string[] {
    return [...this.list].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
  /** Equal for two lists exactly when they hold the same (`tallyStates`). */
  get state(): string {
    return `${this.count}\u0001${this.list.join('\u0001')}`;
  }
}

/** A number an outcome adds one to per object (a policy's applicable matches). */
export class Count {
  n = 0;
}

/** The policy, layer and listed names of a finding, in the order its JSON has them. */
export const findingBase = (layer: PolicyLayer, policy: string, names: Names) => ({
  policy,
  operator: layer === 'operator',
  objects: names.sorted,
  objectCount: names.count,
});

/** How a kind's sentence writes what is not ours (names quoted, durations, values): the surface decides. */
export interface LintWords {
  readonly name: (s: string) => string;
  readonly duration: (ms: number) => string;
  readonly value: (v: unknown) => string;
}

export const objectsWord = (n: number, what = 'object'): string => `${n} ${what}${n === 1 ? '' : 's'}`;
export const policyWord = (f: FindingBase, words: LintWords): string =>
  `${f.operator ? 'Operator policy' : 'Policy'} ${words.name(f.policy)}`;

export const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;

/** The layer whose value the object uses for a key (`both`: the one whose value holds). */
export function sourceLayer(v: SourcedValue, operatorValue: unknown): PolicyLayer {
  if (v.from === 'policy') return 'user';
  if (v.from === 'operator-policy') return 'operator';
  return v.value === operatorValue ? 'operator' : 'user';
}

/**
 * One layer of one object as the pass resolved it (resolve.ts's rule): what a kind reads when an
 * outcome is worked out. Matches come highest priority first; positions index `list`.
 */
export interface LayerReading {
  readonly layer: PolicyLayer;
  /** The object's type (null: a queue type this bot does not know). */
  readonly kind: KindOrUnknown;
  readonly list: readonly IndexedPolicy[];
  /** By position in `list`: the keys the object's type refuses of that policy (empty: none). */
  readonly refused: readonly (readonly string[])[];
  /** The positions of the policies whose pattern finds the name, the first `count`. */
  readonly hits: readonly number[];
  readonly count: number;
  /** The first applicable match's priority: the candidates'. */
  readonly top: number | undefined;
  /** The object's type is known. */
  readonly known: boolean;
  /** Known, and no unreadable pattern could change the winner. */
  readonly decided: boolean;
  /** The position in `hits` of the first candidate (-1: none), and how many there are. */
  readonly first: number;
  readonly candidates: number;
  /** The positions of the matches whose unanchored pattern finds the name only past its start, the first `caughtCount`. */
  readonly caught: readonly number[];
  readonly caughtCount: number;
}

/** Where a kind puts what an outcome does to each object it stands for. */
export interface OutcomeSink {
  /** The lists the object's name joins. */
  readonly names: Names[];
  /** The numbers it adds one to. */
  readonly counts: Count[];
}

/** The policies governing an object as the pass read it: both null for none; undefined under a tie. */
export type Governing = { readonly user: Policy | null; readonly operator: Policy | null } | undefined;

/** The pair of policies governing an object (decided), and the values it uses. */
export interface GovernedReading {
  readonly object: LintObject;
  readonly kind: ObjectKind;
  readonly user: Policy | null;
  readonly operator: Policy | null;
  readonly version: BrokerVersion;
  /** The values it uses: both layers merged, its own arguments on top. */
  readonly sourced: Readonly<Record<string, SourcedValue>>;
  /** What it would use without the operator policy (the user layer's, its arguments on top). */
  own(): Readonly<Record<string, SourcedValue>>;
}

/** What `findings` is given: the queues' live numbers (null: not read), the vhost's federation, the time. */
export interface FindingsInput {
  readonly live: ReadonlyMap<string, LiveQueue | null> | null;
  readonly world: World;
  readonly at: number;
}

/** A tally's state (`Linter.tallyStates`): the policies that feed it, and a string equal when what it holds is. */
export type TallyStates = Map<string, { policies: string[]; state: string }>;

/**
 * One pass's tallies of a kind. `outcome` is asked once per outcome (objects alike share one), for
 * each layer; `governed` once per governing pair, type and arguments, and what it returns
 * (undefined: nothing) is handed to `apply` for each object so governed, or to `applyTied`, one
 * per pair the broker may pick under a tie (undefined where that pair does nothing).
 */
export interface KindTallies<F extends { readonly kind: string }, E = unknown> {
  outcome?(layer: LayerReading, into: OutcomeSink): void;
  governed?(g: GovernedReading): E | undefined;
  apply?(effect: E, name: string): void;
  applyTied?(effects: readonly (E | undefined)[], name: string): void;
  /** Whether it keeps this queue's live numbers (`Linter.wantsLive`); `mayWantLive` false: never. */
  readonly mayWantLive?: boolean;
  /**
   * Asked of every object, with the policies governing it (undefined under a tie): only a kind
   * whose facts are the object's own (durable, exclusive) has it, and only when it is asked for.
   */
  object?(o: LintObject, governing: Governing): void;
  wantsLive?(name: string): boolean;
  findings(input: FindingsInput): FindingOf<F>[];
  states(out: TallyStates): void;
  /** The same tallies for another set (`Linter.fork`): those of policies it no longer holds left out. */
  fork(set: PolicySet): KindTallies<F, E>;
}

/** A kind of finding: its name, its severity, its sentence and its tallies. */
export interface LintRule<F extends { readonly kind: string }> {
  readonly kind: F['kind'];
  readonly severity: Severity;
  why(f: FindingOf<F>, words: LintWords): string;
  tallies(set: PolicySet, context: LintContext): KindTallies<F>;
}

/** Every policy of the set with its layer: the user layer's, then the operator layer's, in the index's order. */
export function policiesOf(set: PolicySet): { readonly layer: PolicyLayer; readonly policy: Policy }[] {
  const out: { layer: PolicyLayer; policy: Policy }[] = [];
  for (const e of set.user.byName.values()) out.push({ layer: 'user', policy: e.policy });
  for (const e of set.operator.byName.values()) out.push({ layer: 'operator', policy: e.policy });
  return out;
}

/** A tally a kind keeps per policy of the set, with the policy and its layer. */
export interface PolicyTally<T> {
  readonly layer: PolicyLayer;
  readonly policy: Policy;
  readonly tally: T;
}

/**
 * A kind's tallies per policy of the set, in the set's order (user layer first), which is the
 * order its findings are made in; `fork` keeps those of the policies the other set holds too.
 */
export class ByPolicy<T> {
  readonly #map = new Map<Policy, PolicyTally<T>>();
  readonly #make: () => T;

  constructor(set: PolicySet, make: () => T) {
    this.#make = make;
    for (const { layer, policy } of policiesOf(set)) this.#map.set(policy, { layer, policy, tally: make() });
  }

  get(policy: Policy): T {
    return (this.#map.get(policy) as PolicyTally<T>).tally;
  }

  values(): IterableIterator<PolicyTally<T>> {
    return this.#map.values();
  }

  fork(set: PolicySet, copy: (t: T) => T): ByPolicy<T> {
    const l = new ByPolicy(set, this.#make);
    for (const [policy, t] of this.#map)
      if (l.#map.has(policy)) l.#map.set(policy, { ...t, tally: copy(t.tally) });
    return l;
  }

  /** Each policy's state under `tag` (`Linter.tallyStates`). */
  states(out: TallyStates, tag: string, stateOf: (t: T) => string): void {
    for (const { layer, policy, tally } of this.#map.values())
      out.set(`${tag}\u0000${layer}\u0000${policy.name}`, {
        policies: [`${layer}:${policy.name}`],
        state: stateOf(tally),
      });
  }
}

/** A kind's tallies by id, each with its names, copied for `fork`. */
export function copiedNamed<T extends { readonly names: Names }>(
  from: ReadonlyMap<string, T>,
  into: Map<string, T>,
): void {
  for (const [id, t] of from) into.set(id, { ...t, names: t.names.copy() });
}
