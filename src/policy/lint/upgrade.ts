import type { DroppedWhy } from '../keys.ts';
import type { PolicySet } from '../resolve.ts';
import type { BrokerVersion, Policy, PolicyLayer } from '../types.ts';
import {
  type DeprecatedUse,
  deprecatedSeverity,
  governanceMove,
  objectUpgrades,
  policyUpgrade,
  type TargetVersion,
  TRANSIENT_FEATURE,
  targetBrokerVersion,
  UPGRADE_SEVERITY,
  type UpgradeCause,
  type UpgradeObjectFacts,
  upgradeWhy,
} from '../upgrade.ts';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

import {
  type FindingOf,
  findingBase,
  type Governing,
  type KindTallies,
  type LayerReading,
  type LintContext,
  type LintObject,
  type LintRule,
  type LintWords,
  Names,
  type OutcomeSink,
  policiesOf,
  policyWord,
  type TallyStates,
} from './lintTypes.ts';

/**
 * `upgrade` (`--target-version` only): what the vhost's policies and objects would do differently
 * on that version, by the rules of src/policy/upgrade.ts and keys.ts: a policy the target refuses
 * (an import stops at it), a policy that would govern objects it does not now or stop governing
 * them (a type's vetoes change), a queue argument the target refuses, a quorum queue that would get
 * the delivery limit of 20 with no dead-letter target, a transient non-exclusive queue, and the
 * deprecated features the broker reports in use with the phase it gives them. One finding per
 * cause and policy; `policy` is "" where no policy is concerned.
 */

/** `target`, `cause`, the keys or arguments concerned, the other policy, the feature, the objects' type. */
export interface UpgradeFact {
  readonly kind: 'upgrade';
  readonly target: TargetVersion;
  readonly cause: UpgradeCause;
  readonly keys: readonly string[];
  /** refused-keys: why the target refuses each of `keys`, in its order; else empty. */
  readonly refusal: readonly DroppedWhy[];
  /** governs / stops-governing: the policy the objects use instead (null: none). */
  readonly other: string | null;
  readonly feature: DeprecatedUse | null;
  /** The objects' type ("classic", "quorum", …), null where they are of several or none. */
  readonly type: string | null;
}

interface Group {
  readonly layer: PolicyLayer;
  /** null: no policy concerned. */
  readonly policy: Policy | null;
  readonly cause: UpgradeCause;
  readonly keys: Set<string>;
  readonly other: string | null;
  readonly type: string | null;
  readonly names: Names;
  /** refused-keys: why each key is refused. */
  readonly refusal?: ReadonlyMap<string, DroppedWhy>;
}

const copyGroup = (g: Group): Group => ({ ...g, keys: new Set(g.keys), names: g.names.copy() });

/** Without `--target-version`: nothing asked, nothing found. */
const IDLE: KindTallies<UpgradeFact> = {
  findings: () => [],
  states: () => undefined,
  fork: () => IDLE,
};

class UpgradeTallies implements KindTallies<UpgradeFact> {
  readonly #target: TargetVersion;
  readonly #to: BrokerVersion;
  readonly #from: BrokerVersion;
  readonly #deprecated: readonly DeprecatedUse[] | null;
  readonly #refusedGroups = new Map<Policy, Group>();
  readonly #groups: Map<string, Group>;
  /** The group the last object joined: the next one, alike, most often joins it too. */
  #last: Group | undefined;
  readonly #facts: Mutable<UpgradeObjectFacts> = {
    kind: null,
    arguments: {},
    user: null,
    operator: null,
  };

  constructor(
    set: PolicySet,
    target: TargetVersion,
    deprecated: readonly DeprecatedUse[] | null,
    groups?: Map<string, Group>,
  ) {
    this.#target = target;
    this.#from = set.version;
    this.#to = targetBrokerVersion(target, set.version);
    this.#deprecated = deprecated;
    this.#groups = groups ?? new Map();
    for (const { layer, policy } of policiesOf(set)) {
      const dropped = policyUpgrade(policy, layer === 'operator', this.#from, this.#to);
      if (dropped.length === 0) continue;
      const keys = new Set(dropped.map((d) => d.key));
      const refusal = new Map(dropped.map((d) => [d.key, d.why]));
      this.#refusedGroups.set(policy, {
        layer,
        policy,
        cause: 'refused-keys',
        keys,
        other: null,
        type: null,
        names: new Names(),
        refusal,
      });
    }
  }

  #group(
    layer: PolicyLayer,
    policy: Policy | null,
    cause: UpgradeCause,
    other: string | null,
    type: string | null,
  ): Group {
    const id = `${layer}\u0000${policy?.name ?? ''}\u0000${cause}\u0000${other ?? ''}\u0000${type ?? ''}`;
    let g = this.#groups.get(id);
    if (!g) {
      g = { layer, policy, cause, keys: new Set(), other, type, names: new Names() };
      this.#groups.set(id, g);
    }
    return g;
  }

  outcome(r: LayerReading, into: OutcomeSink): void {
    if (!r.known || !r.decided || r.kind === null || r.candidates > 1) return;
    const current = r.candidates === 1 ? (r.list[r.hits[r.first] as number]?.policy ?? null) : null;
    const refused = current === null ? undefined : this.#refusedGroups.get(current);
    if (refused) {
      // The policy would not be there: what the objects fall back to is the import's to say.
      into.names.push(refused.names);
      return;
    }
    if (r.kind === 'exchange') return;
    // Once per outcome (objects alike share one), never per object.
    const matches: Policy[] = [];
    for (let h = 0; h < r.count; h++)
      matches.push((r.list[r.hits[h] as number] as (typeof r.list)[number]).policy);
    const move = governanceMove(matches, r.kind, current, r.layer === 'operator', this.#from, this.#to, (p) =>
      this.#refusedGroups.has(p),
    );
    if (!move) return;
    const g = this.#group(r.layer, move.policy, move.cause, move.other?.name ?? null, r.kind);
    for (const k of move.keys) g.keys.add(k);
    into.names.push(g.names);
  }

  object(o: LintObject, governing: Governing): void {
    if (o.kind === 'exchange') return;
    // The object with its governing policies in reused scratch: nothing made per object.
    const facts = this.#facts;
    facts.kind = o.kind;
    facts.durable = o.durable;
    facts.exclusive = o.exclusive;
    facts.arguments = o.arguments;
    facts.user = governing?.user ?? null;
    facts.operator = governing?.operator ?? null;
    const found = objectUpgrades(facts, this.#from, this.#to);
    for (let i = 0; i < found.length; i++) {
      const u = found[i] as (typeof found)[number];
      // Under a tie, which policies' dead-letter target and limit hold is the broker's pick.
      if (u.cause !== 'transient-queue' && u.cause !== 'refused-argument' && governing === undefined)
        continue;
      const policy = u.cause === 'transient-queue' ? null : (governing?.user ?? null);
      const last = this.#last;
      const g =
        last !== undefined && last.policy === policy && last.cause === u.cause && last.type === o.kind
          ? last
          : this.#group('user', policy, u.cause, null, o.kind);
      this.#last = g;
      for (const k of u.keys) g.keys.add(k);
      g.names.add(o.name);
    }
  }

  findings(): FindingOf<UpgradeFact>[] {
    const out: FindingOf<UpgradeFact>[] = [];
    const transient = new Names();
    const fact = (g: Group, severity: FindingOf<UpgradeFact>['severity']): FindingOf<UpgradeFact> => {
      const keys = [...g.keys].sort();
      return {
        kind: 'upgrade',
        severity,
        ...findingBase(g.layer, g.policy?.name ?? '', g.names),
        target: this.#target,
        cause: g.cause,
        keys,
        refusal: g.refusal ? keys.map((k) => g.refusal?.get(k) ?? 'unknown') : [],
        other: g.other,
        feature: null,
        type: g.type,
      };
    };
    for (const g of this.#refusedGroups.values()) out.push(fact(g, UPGRADE_SEVERITY['refused-keys']));
    for (const g of this.#groups.values()) {
      if (g.names.count === 0) continue;
      if (g.cause === 'transient-queue') {
        for (const n of g.names.list) transient.add(n);
        transient.count += g.names.count - g.names.list.length;
        if (this.#deprecated !== null) continue;
      }
      out.push(fact(g, UPGRADE_SEVERITY[g.cause]));
    }
    for (const feature of this.#deprecated ?? []) {
      const names = feature.name === TRANSIENT_FEATURE ? transient : new Names();
      out.push({
        kind: 'upgrade',
        severity: deprecatedSeverity(feature.phase),
        ...findingBase('user', '', names),
        target: this.#target,
        cause: 'deprecated-feature',
        keys: [],
        refusal: [],
        other: null,
        feature,
        type: null,
      });
    }
    return out;
  }

  states(out: TallyStates): void {
    for (const [policy, g] of this.#refusedGroups)
      out.set(`u\u0000${g.layer}\u0000${policy.name}`, {
        policies: [`${g.layer}:${policy.name}`],
        state: g.names.state,
      });
    for (const [id, g] of this.#groups)
      out.set(`u\u0000${id}`, {
        policies: g.policy === null ? [] : [`${g.layer}:${g.policy.name}`],
        state: g.names.state,
      });
  }

  fork(set: PolicySet): UpgradeTallies {
    const held = new Set(policiesOf(set).map((p) => p.policy));
    const groups = new Map<string, Group>();
    for (const [id, g] of this.#groups)
      if (g.policy === null || held.has(g.policy)) groups.set(id, copyGroup(g));
    const t = new UpgradeTallies(set, this.#target, this.#deprecated, groups);
    for (const [policy, g] of this.#refusedGroups) {
      const mine = t.#refusedGroups.get(policy);
      if (mine) t.#refusedGroups.set(policy, { ...mine, names: g.names.copy() });
    }
    return t;
  }
}

const NOUN: Record<string, string> = {
  classic: 'classic queue',
  quorum: 'quorum queue',
  stream: 'stream',
  exchange: 'exchange',
};

export const upgradeRule: LintRule<UpgradeFact> = {
  kind: 'upgrade',
  severity: 'warning',
  why(f: FindingOf<UpgradeFact>, words: LintWords): string {
    return upgradeWhy(
      {
        target: f.target,
        cause: f.cause,
        keys: f.keys,
        dropped: f.refusal,
        policy: f.policy === '' ? null : policyWord(f, words),
        other: f.other,
        feature: f.feature,
        count: f.objectCount,
        noun: (f.type !== null && NOUN[f.type]) || (f.cause === 'refused-keys' ? 'object' : 'queue'),
      },
      words,
    );
  },
  tallies: (set: PolicySet, context: LintContext) =>
    context.target === undefined ? IDLE : new UpgradeTallies(set, context.target, context.deprecated ?? null),
};
