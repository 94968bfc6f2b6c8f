import type { IndexedPolicy } from '../policyIndex.ts';
import type { PolicySet } from '../resolve.ts';
import {
  ByPolicy,
  Count,
  type FindingOf,
  findingBase,
  type KindTallies,
  type LayerReading,
  LISTED_OBJECTS,
  type LintRule,
  type LintWords,
  Names,
  type OutcomeSink,
  objectsWord,
  policyWord,
  type TallyStates,
} from './lintTypes.ts';

/**
 * `shadowed`: a policy governs none of the objects it matches and may govern, another winning
 * each at a higher priority (resolve.ts). A policy that matches an object whose resolution is not
 * decided (an unreadable pattern, an unknown type) is not called shadowed.
 */

/** `by`: the policies that govern the objects it matches instead (at most LISTED_OBJECTS). */
export interface ShadowedFact {
  readonly kind: 'shadowed';
  readonly by: readonly string[];
}

interface Shadow {
  /** Objects it matches and may govern (no refused key). */
  readonly applicable: Count;
  /** Of those, the ones another policy governs. */
  readonly lost: Names;
  readonly winners: Set<string>;
  /** It matches an object whose resolution is not decided: nothing is claimed. */
  unsure: boolean;
}

const shadow = (): Shadow => ({
  applicable: new Count(),
  lost: new Names(),
  winners: new Set(),
  unsure: false,
});

class ShadowedTallies implements KindTallies<ShadowedFact> {
  readonly #shadows: ByPolicy<Shadow>;

  constructor(shadows: ByPolicy<Shadow>) {
    this.#shadows = shadows;
  }

  outcome(r: LayerReading, into: OutcomeSink): void {
    const { list, hits, count, refused, decided, top, first } = r;
    for (let h = 0; h < count; h++) {
      const i = hits[h] as number;
      if ((refused[i] as readonly string[]).length > 0) continue;
      const e = list[i] as IndexedPolicy;
      const t = this.#shadows.get(e.policy);
      into.counts.push(t.applicable);
      if (!decided) t.unsure = true;
      else if (e.priority !== top) {
        // Below the top priority: not a candidate (every applicable match of the top priority is).
        into.names.push(t.lost);
        for (let c = first; c < count && t.winners.size < LISTED_OBJECTS; c++) {
          const j = hits[c] as number;
          const w = list[j] as IndexedPolicy;
          if (w.priority < (top as number)) break;
          if ((refused[j] as readonly string[]).length === 0) t.winners.add(w.name);
        }
      }
    }
  }

  findings(): FindingOf<ShadowedFact>[] {
    const out: FindingOf<ShadowedFact>[] = [];
    for (const { layer, policy, tally: t } of this.#shadows.values())
      if (t.applicable.n > 0 && !t.unsure && t.lost.count === t.applicable.n)
        out.push({
          kind: 'shadowed',
          severity: shadowedRule.severity,
          ...findingBase(layer, policy.name, t.lost),
          by: [...t.winners].sort(),
        });
    return out;
  }

  // The winners only word the finding: they move neither whether it is found nor what it names.
  states(out: TallyStates): void {
    this.#shadows.states(out, 'p', (t) => `${t.applicable.n}\u0002${t.unsure}\u0002${t.lost.state}`);
  }

  fork(set: PolicySet): ShadowedTallies {
    return new ShadowedTallies(
      this.#shadows.fork(set, (t) => {
        const applicable = new Count();
        applicable.n = t.applicable.n;
        return { applicable, lost: t.lost.copy(), winners: new Set(t.winners), unsure: t.unsure };
      }),
    );
  }
}

export const shadowedRule: LintRule<ShadowedFact> = {
  kind: 'shadowed',
  severity: 'info',
  why(f: FindingOf<ShadowedFact>, words: LintWords): string {
    const n = f.objectCount;
    return `${policyWord(f, words)} matches ${objectsWord(n)} and governs none of ${n === 1 ? 'it' : 'them'}: ${f.by.map((p) => words.name(p)).join(', ')} win${f.by.length === 1 ? 's' : ''} at a higher priority.`;
  },
  tallies: (set) => new ShadowedTallies(new ByPolicy(set, shadow)),
};
