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
 * `unanchored`: a pattern without `^` finds names that merely contain it. Read from the pattern
 * alone (the pass marks the matches whose anchored form misses the name: `LayerReading.caught`),
 * so it counts objects of any type, decided or not.
 */

export interface UnanchoredFact {
  readonly kind: 'unanchored';
  readonly pattern: string;
}

interface Caught {
  readonly layer: PolicyLayer;
  readonly policy: Policy;
  readonly names: Names;
}

class UnanchoredTallies implements KindTallies<UnanchoredFact> {
  readonly #byPolicy = new Map<Policy, Caught>();

  constructor(set: PolicySet) {
    for (const { layer, policy } of policiesOf(set))
      this.#byPolicy.set(policy, { layer, policy, names: new Names() });
  }

  outcome(r: LayerReading, into: OutcomeSink): void {
    for (let c = 0; c < r.caughtCount; c++) {
      const policy = r.list[r.caught[c] as number]?.policy as Policy;
      into.names.push((this.#byPolicy.get(policy) as Caught).names);
    }
  }

  findings(): FindingOf<UnanchoredFact>[] {
    const out: FindingOf<UnanchoredFact>[] = [];
    for (const t of this.#byPolicy.values())
      if (t.names.count > 0)
        out.push({
          kind: 'unanchored',
          severity: unanchoredRule.severity,
          ...findingBase(t.layer, t.policy.name, t.names),
          pattern: t.policy.pattern,
        });
    return out;
  }

  states(out: TallyStates): void {
    for (const t of this.#byPolicy.values())
      out.set(`c\u0000${t.layer}\u0000${t.policy.name}`, {
        policies: [`${t.layer}:${t.policy.name}`],
        state: t.names.state,
      });
  }

  fork(set: PolicySet): UnanchoredTallies {
    const l = new UnanchoredTallies(set);
    for (const [policy, t] of this.#byPolicy)
      if (l.#byPolicy.has(policy)) l.#byPolicy.set(policy, { ...t, names: t.names.copy() });
    return l;
  }
}

export const unanchoredRule: LintRule<UnanchoredFact> = {
  kind: 'unanchored',
  severity: 'warning',
  why(f: FindingOf<UnanchoredFact>, words: LintWords): string {
    const n = f.objectCount;
    return `${policyWord(f, words)}'s pattern ${words.name(f.pattern)} has no ^, so it matches ${objectsWord(n, 'name')} that merely contain${n === 1 ? 's' : ''} it without starting with it.`;
  },
  tallies: (set) => new UnanchoredTallies(set),
};
