import { type TargetKey, targetExists, targetKeys } from '../impact/impact.ts';
import type { PolicySet } from '../resolve.ts';
import type { PolicyLayer } from '../types.ts';
import {
  copiedNamed,
  type FindingOf,
  type FindingsInput,
  findingBase,
  type GovernedReading,
  type KindTallies,
  type LintRule,
  type LintWords,
  Names,
  objectsWord,
  policyWord,
  sourceLayer,
  type TallyStates,
} from './lintTypes.ts';

/**
 * `missing-target`: the policy governing objects names a dead-letter or alternate exchange, or a
 * federation upstream (set), the vhost lacks (impact.ts: which targets exist). Read from the values
 * an object uses, its own arguments on top: a target its arguments name is not the policy's.
 */

export interface MissingTargetFact {
  readonly kind: 'missing-target';
  readonly key: TargetKey;
  readonly target: string;
}

interface Target {
  readonly layer: PolicyLayer;
  readonly policy: string;
  readonly key: TargetKey;
  readonly target: string;
  readonly names: Names;
}

const TARGET_LOSS: Readonly<Record<string, string>> = {
  'dead-letter-exchange': 'what they dead-letter (rejected, expired, over a limit) is dropped',
  'alternate-exchange': 'what they cannot route is dropped',
  'federation-upstream': 'no federation link can run for them',
  'federation-upstream-set': 'no federation link can run for them',
};

const TARGET_WHAT: Readonly<Record<string, string>> = {
  'dead-letter-exchange': 'no exchange of this vhost',
  'alternate-exchange': 'no exchange of this vhost',
  'federation-upstream': 'no federation upstream of this vhost',
  'federation-upstream-set': 'no federation upstream set of this vhost',
};

/** Per governed object: the targets its pair names (never empty). */
type Named = readonly Target[];

class MissingTargetTallies implements KindTallies<MissingTargetFact, Named> {
  /** By layer, policy, key and target. */
  readonly #targets = new Map<string, Target>();

  governed(g: GovernedReading): Named | undefined {
    const out: Target[] = [];
    for (const key of targetKeys(g.kind)) {
      const v = g.sourced[key];
      if (v === undefined || typeof v.value !== 'string' || v.from === 'arguments') continue;
      const layer = sourceLayer(v, g.operator?.definition[key]);
      const policy = layer === 'user' ? g.user : g.operator;
      if (!policy) continue;
      const id = `${layer}\u0000${policy.name}\u0000${key}\u0000${v.value}`;
      let t = this.#targets.get(id);
      if (!t) {
        t = { layer, policy: policy.name, key, target: v.value, names: new Names() };
        this.#targets.set(id, t);
      }
      out.push(t);
    }
    return out.length > 0 ? out : undefined;
  }

  apply(targets: Named, name: string): void {
    for (let i = 0; i < targets.length; i++) (targets[i] as Target).names.add(name);
  }

  /** Under a tie: a target every pair the broker may pick names. */
  applyTied(each: readonly (Named | undefined)[], name: string): void {
    const [first] = each;
    if (!first) return;
    for (const t of first) if (each.every((g) => g?.includes(t))) t.names.add(name);
  }

  findings({ world }: FindingsInput): FindingOf<MissingTargetFact>[] {
    const out: FindingOf<MissingTargetFact>[] = [];
    for (const t of this.#targets.values()) {
      // Made for a tie's pairs and named by none of its objects: nothing found.
      if (t.names.count === 0 || targetExists(t.key, t.target, world) !== false) continue;
      out.push({
        kind: 'missing-target',
        severity: missingTargetRule.severity,
        ...findingBase(t.layer, t.policy, t.names),
        key: t.key,
        target: t.target,
      });
    }
    return out;
  }

  states(out: TallyStates): void {
    for (const [id, t] of this.#targets)
      if (t.names.count > 0)
        out.set(`g\u0000${id}`, { policies: [`${t.layer}:${t.policy}`], state: t.names.state });
  }

  fork(_set: PolicySet): MissingTargetTallies {
    const l = new MissingTargetTallies();
    copiedNamed(this.#targets, l.#targets);
    return l;
  }
}

export const missingTargetRule: LintRule<MissingTargetFact> = {
  kind: 'missing-target',
  severity: 'error',
  why(f: FindingOf<MissingTargetFact>, words: LintWords): string {
    return `${policyWord(f, words)} sets ${f.key} to ${words.name(f.target)}, ${TARGET_WHAT[f.key]}, on ${objectsWord(f.objectCount)} it governs: ${TARGET_LOSS[f.key]}.`;
  },
  tallies: () => new MissingTargetTallies(),
};
