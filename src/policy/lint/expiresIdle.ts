import { hazardsOf } from '../impact/impact.ts';
import type { PolicySet } from '../resolve.ts';
import type { PolicyLayer } from '../types.ts';
import {
  type FindingOf,
  type FindingsInput,
  type GovernedReading,
  type KindTallies,
  type LintRule,
  type LintWords,
  Names,
  num,
  objectsWord,
  policyWord,
  sourceLayer,
  type TallyStates,
} from './lintTypes.ts';

/**
 * `expires-idle`: the `expires` governing queues will delete those holding messages and no
 * consumer (impact.ts: what `expires` deletes, and by when). The only kind that reads the queues'
 * live numbers: the pass keeps them for the queues it governs (`wantsLive`).
 */

/** `messages`: on the objects listed and counted; `by`: the first deletion, at the latest. */
export interface ExpiresIdleFact {
  readonly kind: 'expires-idle';
  readonly expiresMs: number;
  readonly messages: number;
  readonly by: string;
}

/** What an `expires` does to a queue of a governing pair. */
interface Expires {
  readonly layer: PolicyLayer;
  readonly policy: string;
  readonly expiresMs: number;
  readonly values: Readonly<Record<string, unknown>>;
  readonly kind: 'classic' | 'quorum';
}

interface Expiring extends Expires {
  readonly name: string;
  /** Under a tie: what each pair the broker may pick gives it; deleted only if every one deletes it. */
  readonly alternatives?: readonly Pick<Expires, 'expiresMs' | 'values'>[];
}

class ExpiresIdleTallies implements KindTallies<ExpiresIdleFact, Expires> {
  readonly #expiring: Expiring[] = [];
  readonly #names = new Set<string>();
  /** Some policy of the set sets `expires`: only then may a queue's live numbers be wanted. */
  readonly mayWantLive: boolean;

  constructor(set: PolicySet) {
    this.mayWantLive = [set.user, set.operator].some((index) =>
      [...index.byName.values()].some((e) => e.policy.definition.expires !== undefined),
    );
  }

  wantsLive(name: string): boolean {
    return this.#names.has(name);
  }

  governed(g: GovernedReading): Expires | undefined {
    const { kind, sourced } = g;
    if (kind !== 'classic' && kind !== 'quorum') return undefined;
    const e = sourced.expires;
    const expiresMs = num(e?.value);
    if (e === undefined || expiresMs === undefined || e.from === 'arguments') return undefined;
    const layer = sourceLayer(e, g.operator?.definition.expires);
    const policy = layer === 'user' ? g.user : g.operator;
    if (!policy) return undefined;
    const values: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(sourced)) values[k] = v.value;
    return { layer, policy: policy.name, expiresMs, values, kind };
  }

  apply(e: Expires, name: string): void {
    this.#expiring.push({ name, ...e });
    this.#names.add(name);
  }

  /** Under a tie: the same policy's `expires` under every pair the broker may pick. */
  applyTied(each: readonly (Expires | undefined)[], name: string): void {
    const [e] = each;
    if (!e || !each.every((g) => g?.layer === e.layer && g.policy === e.policy)) return;
    const alternatives = each.map((g) => ({
      expiresMs: g?.expiresMs ?? e.expiresMs,
      values: g?.values ?? e.values,
    }));
    this.#expiring.push({ name, ...e, alternatives });
    this.#names.add(name);
  }

  findings({ live, world, at }: FindingsInput): FindingOf<ExpiresIdleFact>[] {
    if (live === null) return [];
    const byPolicy = new Map<
      string,
      { layer: PolicyLayer; policy: string; expiresMs: number; messages: number; by: string; names: Names }
    >();
    for (const e of this.#expiring) {
      const now = live.get(e.name) ?? null;
      if (now === null) continue;
      // Under a tie, deleted only if every pair the broker may pick deletes it (the latest then).
      let expiresMs = e.expiresMs;
      let deleted: { messages: number; by: string } | undefined;
      for (const way of e.alternatives ?? [e]) {
        const h = hazardsOf({ kind: e.kind, values: way.values, now, at }, world).find(
          (x) => x.effect === 'expires-idle' && x.messages > 0,
        );
        if (h?.effect !== 'expires-idle') {
          deleted = undefined;
          break;
        }
        expiresMs = Math.max(expiresMs, way.expiresMs);
        if (!deleted || h.by > deleted.by) deleted = h;
      }
      if (!deleted) continue;
      const id = `${e.layer}\u0000${e.policy}`;
      let g = byPolicy.get(id);
      if (!g) {
        g = { layer: e.layer, policy: e.policy, expiresMs, messages: 0, by: deleted.by, names: new Names() };
        byPolicy.set(id, g);
      }
      g.messages += deleted.messages;
      if (deleted.by < g.by) g.by = deleted.by;
      g.expiresMs = Math.min(g.expiresMs, expiresMs);
      g.names.add(e.name);
    }
    return [...byPolicy.values()].map((g) => ({
      kind: 'expires-idle' as const,
      severity: expiresIdleRule.severity,
      policy: g.policy,
      operator: g.layer === 'operator',
      objects: g.names.sorted,
      objectCount: g.names.count,
      expiresMs: g.expiresMs,
      messages: g.messages,
      by: g.by,
    }));
  }

  states(out: TallyStates): void {
    for (const e of this.#expiring) {
      const id = `e\u0000${e.layer}\u0000${e.policy}`;
      const entry = JSON.stringify([e.name, e.expiresMs, e.kind, e.values, e.alternatives ?? null]);
      const had = out.get(id);
      if (had) had.state += `\u0002${entry}`;
      else out.set(id, { policies: [`${e.layer}:${e.policy}`], state: entry });
    }
  }

  fork(set: PolicySet): ExpiresIdleTallies {
    const l = new ExpiresIdleTallies(set);
    l.#expiring.push(...this.#expiring);
    for (const n of this.#names) l.#names.add(n);
    return l;
  }
}

export const expiresIdleRule: LintRule<ExpiresIdleFact> = {
  kind: 'expires-idle',
  severity: 'error',
  why(f: FindingOf<ExpiresIdleFact>, words: LintWords): string {
    return `${policyWord(f, words)}'s expires (${words.duration(f.expiresMs)}) will delete ${objectsWord(f.objectCount, 'queue')} holding ${f.messages} message${f.messages === 1 ? '' : 's'} and no consumer, the first by ${f.by} at the latest, unless a consumer comes.`;
  },
  tallies: (set) => new ExpiresIdleTallies(set),
};
