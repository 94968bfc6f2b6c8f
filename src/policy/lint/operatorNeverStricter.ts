import { keySpec, stricterLimit } from '../keys.ts';
import type { PolicySet } from '../resolve.ts';
import type { Policy } from '../types.ts';
import {
  copiedNamed,
  type FindingOf,
  findingBase,
  type GovernedReading,
  type KindTallies,
  type LintRule,
  type LintWords,
  Names,
  num,
  objectsWord,
  policyWord,
  type TallyStates,
} from './lintTypes.ts';

/**
 * `operator-never-stricter`: an operator policy's numeric limit (one the broker merges by the lower
 * value, keys.ts) is above what every queue it governs already uses without it, so it never bites.
 */

/** `limit`: the operator policy's; `highestOwn`: the highest value the governed objects use without it. */
export interface OperatorNeverStricterFact {
  readonly kind: 'operator-never-stricter';
  readonly key: string;
  readonly limit: number;
  readonly highestOwn: number;
}

interface Limit {
  readonly policy: string;
  readonly key: string;
  readonly limit: number;
  governed: number;
  never: number;
  highestOwn: number;
  readonly names: Names;
}

/** Per governed queue: each limit of its operator policy, with what it would use without it (undefined: the limit bites). */
type Weighed = readonly { readonly entry: Limit; readonly own: number | undefined }[];

class OperatorNeverStricterTallies implements KindTallies<OperatorNeverStricterFact, Weighed> {
  /** By operator policy and key. */
  readonly #limits = new Map<string, Limit>();
  /** Each operator policy's numeric limits merged by the lower value, with their entries (made once). */
  readonly #byOperator = new Map<
    Policy,
    readonly { readonly key: string; readonly limit: number; readonly entry: Limit }[]
  >();

  governed(g: GovernedReading): Weighed | undefined {
    const { kind, operator } = g;
    if ((kind !== 'classic' && kind !== 'quorum') || !operator) return undefined;
    const limits = this.#limitsOf(operator);
    if (limits.length === 0) return undefined;
    const own = g.own();
    return limits.map(({ key, limit, entry }) => {
      const mine = num(own[key]?.value);
      const never =
        mine !== undefined && mine !== limit && stricterLimit(key, mine, limit, g.version) === mine;
      return { entry, own: never ? mine : undefined };
    });
  }

  #limitsOf(operator: Policy) {
    let out = this.#byOperator.get(operator);
    if (out) return out;
    const made: { key: string; limit: number; entry: Limit }[] = [];
    for (const [key, raw] of Object.entries(operator.definition)) {
      const limit = num(raw);
      if (limit === undefined || keySpec(key)?.merge !== 'min') continue;
      const id = `${operator.name}\u0000${key}`;
      let entry = this.#limits.get(id);
      if (!entry) {
        entry = {
          policy: operator.name,
          key,
          limit,
          governed: 0,
          never: 0,
          highestOwn: -Infinity,
          names: new Names(),
        };
        this.#limits.set(id, entry);
      }
      made.push({ key, limit, entry });
    }
    out = made;
    this.#byOperator.set(operator, out);
    return out;
  }

  apply(weighed: Weighed, name: string): void {
    for (let i = 0; i < weighed.length; i++) {
      const n = weighed[i] as Weighed[number];
      n.entry.governed++;
      if (n.own === undefined) continue;
      n.entry.never++;
      n.entry.highestOwn = Math.max(n.entry.highestOwn, n.own);
      n.entry.names.add(name);
    }
  }

  /** Under a tie: an operator limit above what each pair the broker may pick would use without it. */
  applyTied(each: readonly (Weighed | undefined)[], name: string): void {
    const [first] = each;
    if (!first) return;
    for (const n of first) {
      const all = each.map((g) => g?.find((x) => x.entry === n.entry));
      // Another operator policy in some pair: this one's limit may not apply at all.
      if (all.some((x) => x === undefined)) continue;
      n.entry.governed++;
      const own = all.map((x) => x?.own);
      if (own.some((v) => v === undefined)) continue;
      n.entry.never++;
      n.entry.highestOwn = Math.max(n.entry.highestOwn, ...(own as number[]));
      n.entry.names.add(name);
    }
  }

  findings(): FindingOf<OperatorNeverStricterFact>[] {
    const out: FindingOf<OperatorNeverStricterFact>[] = [];
    for (const n of this.#limits.values()) {
      if (n.governed === 0 || n.never !== n.governed) continue;
      out.push({
        kind: 'operator-never-stricter',
        severity: operatorNeverStricterRule.severity,
        ...findingBase('operator', n.policy, n.names),
        key: n.key,
        limit: n.limit,
        highestOwn: n.highestOwn,
      });
    }
    return out;
  }

  // `highestOwn` only words the finding: it moves neither whether it is found nor what it names.
  states(out: TallyStates): void {
    for (const [id, n] of this.#limits)
      if (n.governed > 0)
        out.set(`n\u0000${id}`, {
          policies: [`operator:${n.policy}`],
          state: `${n.governed}\u0002${n.never}\u0002${n.names.state}`,
        });
  }

  // The limits by operator policy are not copied: made again, they find the copied entries by id.
  fork(_set: PolicySet): OperatorNeverStricterTallies {
    const l = new OperatorNeverStricterTallies();
    copiedNamed(this.#limits, l.#limits);
    return l;
  }
}

export const operatorNeverStricterRule: LintRule<OperatorNeverStricterFact> = {
  kind: 'operator-never-stricter',
  severity: 'info',
  why(f: FindingOf<OperatorNeverStricterFact>, words: LintWords): string {
    return `${policyWord(f, words)}'s ${f.key} ${words.value(f.limit)} is above what each of the ${objectsWord(f.objectCount)} it governs already uses (at most ${words.value(f.highestOwn)}), so it never applies.`;
  },
  tallies: () => new OperatorNeverStricterTallies(),
};
