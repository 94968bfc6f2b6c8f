import { scopesMeet } from '../keys.ts';
import type { IndexedPolicy } from '../policyIndex.ts';
import type { PolicySet } from '../resolve.ts';
import type { Policy, PolicyLayer } from '../types.ts';
import {
  copiedNamed,
  type FindingOf,
  findingBase,
  type KindTallies,
  type LayerReading,
  type LintRule,
  type LintWords,
  Names,
  type OutcomeSink,
  objectsWord,
  type TallyStates,
} from './lintTypes.ts';

/**
 * `tie`: policies of one layer share the top priority for objects there now, and their apply-to
 * values meet; the broker picks one as it likes (resolve.ts: the highest applicable match wins
 * alone).
 */

/** `policies`: every policy of the tie, by name; `policy` is the first. */
export interface TieFact {
  readonly kind: 'tie';
  readonly policies: readonly string[];
  readonly priority: number;
}

interface Tie {
  readonly policies: string[];
  readonly priority: number;
  readonly layer: PolicyLayer;
  readonly names: Names;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

class TieTallies implements KindTallies<TieFact> {
  /** By layer and the tie's policies. */
  readonly #ties = new Map<string, Tie>();

  outcome(r: LayerReading, into: OutcomeSink): void {
    if (!r.decided || r.candidates < 2) return;
    const { list, hits, count, first, refused } = r;
    const top = r.top as number;
    // The engine's candidates all reach this object; the rule `policies` marks ties by, all the same.
    const head = (list[hits[first] as number] as IndexedPolicy).policy;
    const tied: Policy[] = [];
    for (let h = first; h < count; h++) {
      const i = hits[h] as number;
      const p = (list[i] as IndexedPolicy).policy;
      if (p.priority < top) break;
      if ((refused[i] as readonly string[]).length === 0 && scopesMeet(head.applyTo, p.applyTo)) tied.push(p);
    }
    if (tied.length < 2) return;
    const policies = tied.map((p) => p.name).sort(byCodeUnit);
    const key = `${r.layer}\u0000${policies.join('\u0000')}`;
    let tie = this.#ties.get(key);
    if (!tie) {
      tie = { policies, priority: tied[0]?.priority ?? 0, layer: r.layer, names: new Names() };
      this.#ties.set(key, tie);
    }
    into.names.push(tie.names);
  }

  findings(): FindingOf<TieFact>[] {
    return [...this.#ties.values()].map((t) => ({
      kind: 'tie' as const,
      severity: tieRule.severity,
      ...findingBase(t.layer, t.policies[0] ?? '', t.names),
      policies: t.policies,
      priority: t.priority,
    }));
  }

  states(out: TallyStates): void {
    for (const [id, t] of this.#ties)
      out.set(`t\u0000${id}`, { policies: t.policies.map((p) => `${t.layer}:${p}`), state: t.names.state });
  }

  fork(_set: PolicySet): TieTallies {
    const l = new TieTallies();
    copiedNamed(this.#ties, l.#ties);
    return l;
  }
}

export const tieRule: LintRule<TieFact> = {
  kind: 'tie',
  severity: 'error',
  why(f: FindingOf<TieFact>, words: LintWords): string {
    const n = f.objectCount;
    return `${f.operator ? 'Operator policies' : 'Policies'} ${f.policies.map((p) => words.name(p)).join(' and ')} share priority ${f.priority} and both match ${objectsWord(n)} there now: which one the broker applies to ${n === 1 ? 'it' : 'them'} is not defined.`;
  },
  tallies: () => new TieTallies(),
};
