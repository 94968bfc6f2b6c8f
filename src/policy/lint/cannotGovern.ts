import type { PolicySet } from '../resolve.ts';
import {
  ByPolicy,
  type FindingOf,
  findingBase,
  type KindTallies,
  type LayerReading,
  type LintRule,
  type LintWords,
  Names,
  type OutcomeSink,
  objectsWord,
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
  readonly names: Names;
  readonly keys: Set<string>;
}

class CannotGovernTallies implements KindTallies<CannotGovernFact> {
  readonly #refused: ByPolicy<Refused>;

  constructor(refused: ByPolicy<Refused>) {
    this.#refused = refused;
  }

  outcome(r: LayerReading, into: OutcomeSink): void {
    if (!r.known) return;
    for (let h = 0; h < r.count; h++) {
      const i = r.hits[h] as number;
      const keys = r.refused[i] as readonly string[];
      const e = r.list[i];
      if (keys.length === 0 || !e) continue;
      const t = this.#refused.get(e.policy);
      into.names.push(t.names);
      for (const k of keys) t.keys.add(k);
    }
  }

  findings(): FindingOf<CannotGovernFact>[] {
    const out: FindingOf<CannotGovernFact>[] = [];
    for (const { layer, policy, tally } of this.#refused.values())
      if (tally.names.count > 0)
        out.push({
          kind: 'cannot-govern',
          severity: cannotGovernRule.severity,
          ...findingBase(layer, policy.name, tally.names),
          keys: [...tally.keys].sort(),
        });
    return out;
  }

  // The keys only word the finding: they move neither whether it is found nor what it names.
  states(out: TallyStates): void {
    this.#refused.states(out, 'r', (t) => t.names.state);
  }

  fork(set: PolicySet): CannotGovernTallies {
    return new CannotGovernTallies(
      this.#refused.fork(set, (t) => ({ names: t.names.copy(), keys: new Set(t.keys) })),
    );
  }
}

export const cannotGovernRule: LintRule<CannotGovernFact> = {
  kind: 'cannot-govern',
  severity: 'warning',
  why(f: FindingOf<CannotGovernFact>, words: LintWords): string {
    const n = f.objectCount;
    return `${policyWord(f, words)} matches ${objectsWord(n)} whose type refuses its ${f.keys.map((k) => words.name(k)).join(', ')}, so it governs ${n === 1 ? 'it not' : 'none of them'} (a policy with a key the type refuses does not apply at all).`;
  },
  tallies: (set) =>
    new CannotGovernTallies(new ByPolicy(set, () => ({ names: new Names(), keys: new Set() }))),
};
