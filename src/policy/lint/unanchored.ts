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
 * `unanchored`: a pattern without `^` finds names that merely contain it. Read from the pattern
 * alone (the pass marks the matches whose anchored form misses the name: `LayerReading.caught`),
 * so it counts objects of any type, decided or not.
 */

export interface UnanchoredFact {
  readonly kind: 'unanchored';
  readonly pattern: string;
}

class UnanchoredTallies implements KindTallies<UnanchoredFact> {
  readonly #caught: ByPolicy<Names>;

  constructor(caught: ByPolicy<Names>) {
    this.#caught = caught;
  }

  outcome(r: LayerReading, into: OutcomeSink): void {
    for (let c = 0; c < r.caughtCount; c++) {
      const e = r.list[r.caught[c] as number];
      if (e) into.names.push(this.#caught.get(e.policy));
    }
  }

  findings(): FindingOf<UnanchoredFact>[] {
    const out: FindingOf<UnanchoredFact>[] = [];
    for (const { layer, policy, tally } of this.#caught.values())
      if (tally.count > 0)
        out.push({
          kind: 'unanchored',
          severity: unanchoredRule.severity,
          ...findingBase(layer, policy.name, tally),
          pattern: policy.pattern,
        });
    return out;
  }

  states(out: TallyStates): void {
    this.#caught.states(out, 'c', (t) => t.state);
  }

  fork(set: PolicySet): UnanchoredTallies {
    return new UnanchoredTallies(this.#caught.fork(set, (t) => t.copy()));
  }
}

export const unanchoredRule: LintRule<UnanchoredFact> = {
  kind: 'unanchored',
  severity: 'warning',
  why(f: FindingOf<UnanchoredFact>, words: LintWords): string {
    const n = f.objectCount;
    return `${policyWord(f, words)}'s pattern ${words.name(f.pattern)} has no ^, so it matches ${objectsWord(n, 'name')} that merely contain${n === 1 ? 's' : ''} it without starting with it.`;
  },
  tallies: (set) => new UnanchoredTallies(new ByPolicy(set, () => new Names())),
};
