import type { PolicySet } from '../resolve.ts';
import type { Policy, PolicyLayer } from '../types.ts';
import {
  type FindingOf,
  findingBase,
  type KindTallies,
  type LayerReading,
  type LintRule,
  type LintWords,
  Names,
  type OutcomeSink,
  objectsWord,
  policiesOf,
  policyWord,
  type TallyStates,
} from './lintTypes.ts';

/**
 * `cannot-govern`: a policy matches objects whose type refuses one of its keys, and a policy with
 * a key the type refuses does not apply at all (keys.ts). Only objects of a type this bot knows.
 */

/** `keys`: the keys of the policy the objects' types refuse. */
export interface CannotGovernFact {
  readonly kind: 'cannot-govern';
  readonly keys: readonly string[];
}

interface Refused {
  readonly layer: PolicyLayer;
  readonly policy: Policy;
  readonly names: Names;
  readonly keys: Set<string>;
}

class CannotGovernTallies implements KindTallies<CannotGovernFact> {
  readonly #byPolicy = new Map<Policy, Refused>();

  constructor(set: PolicySet) {
    for (const { layer, policy } of policiesOf(set))
      this.#byPolicy.set(policy, { layer, policy, names: new Names(), keys: new Set() });
  }

  outcome(r: LayerReading, into: OutcomeSink): void {
    if (!r.known) return;
    for (let h = 0; h < r.count; h++) {
      const i = r.hits[h] as number;
      const keys = r.refused[i] as readonly string[];
      if (keys.length === 0) continue;
      const t = this.#byPolicy.get(r.list[i]?.policy as Policy) as Refused;
      into.names.push(t.names);
      for (const k of keys) t.keys.add(k);
    }
  }

  findings(): FindingOf<CannotGovernFact>[] {
    const out: FindingOf<CannotGovernFact>[] = [];
    for (const t of this.#byPolicy.values())
      if (t.names.count > 0)
        out.push({
          kind: 'cannot-govern',
          severity: cannotGovernRule.severity,
          ...findingBase(t.layer, t.policy.name, t.names),
          keys: [...t.keys].sort(),
        });
    return out;
  }

  // The keys only word the finding: they move neither whether it is found nor what it names.
  states(out: TallyStates): void {
    for (const t of this.#byPolicy.values())
      out.set(`r\u0000${t.layer}\u0000${t.policy.name}`, {
        policies: [`${t.layer}:${t.policy.name}`],
        state: t.names.state,
      });
  }

  fork(set: PolicySet): CannotGovernTallies {
    const l = new CannotGovernTallies(set);
    for (const [policy, t] of this.#byPolicy)
      if (l.#byPolicy.has(policy))
        l.#byPolicy.set(policy, { ...t, names: t.names.copy(), keys: new Set(t.keys) });
    return l;
  }
}

export const cannotGovernRule: LintRule<CannotGovernFact> = {
  kind: 'cannot-govern',
  severity: 'warning',
  why(f: FindingOf<CannotGovernFact>, words: LintWords): string {
    const n = f.objectCount;
    return `${policyWord(f, words)} matches ${objectsWord(n)} whose type refuses its ${f.keys.map((k) => words.name(k)).join(', ')}, so it governs ${n === 1 ? 'it not' : 'none of them'} (a policy with a key the type refuses does not apply at all).`;
  },
  tallies: (set) => new CannotGovernTallies(set),
};
