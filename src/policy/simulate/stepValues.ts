import { type ArgumentNote, argumentName, argumentRule, valueInUse } from '../arguments.ts';
import {
  diffEffective,
  type Effective,
  type EffectiveValue,
  effectiveDefinition,
  type KeyDiff,
} from '../effective.ts';
import { withArguments } from '../provenance.ts';
import { RISKS, type Risk, riskOf } from '../risks.ts';
import type { BrokerVersion, Definition, ObjectKind, PolicyLayer } from '../types.ts';
import type { InventoryObject, ObjectOutcome } from './simulationTypes.ts';

/**
 * What an object's step from one pair of policies to another means in values: its effective
 * values before and after, their diff, the risks of what it loses, the values it really uses
 * (its own arguments on top), and the notes on those arguments. Read once per pair and shared
 * (frozen) by every object making the same step without arguments the rules read: the objects a
 * broad change moves share a handful of pairs (bench/preview: 19,000 objects). One per simulation.
 */

/**
 * From one set of effective values to another: what every object making that step shares (its
 * lists frozen, since many outcomes hold them).
 */
export interface ValueStep {
  readonly after: Effective;
  readonly diff: KeyDiff;
  readonly heldBy: Readonly<Record<string, EffectiveValue['from']>>;
  readonly keptByOperator: readonly string[];
  /** The keys lost, for the risks. */
  readonly lost: readonly string[];
  /** The risks by kind, and the values in use, for objects without arguments the rules read. */
  readonly risks: Map<ObjectKind, readonly Risk[]>;
  inUse?: ObjectOutcome['inUse'];
}

type Args = Readonly<Record<string, unknown>>;

/** No definition (no policy in a layer), as a key of the caches. */
const NONE: Definition = Object.freeze({});
export const NO_RISKS: readonly Risk[] = Object.freeze([]);

function valuesOf(sourced: Readonly<Record<string, { readonly value: unknown }>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in sourced) out[k] = sourced[k]?.value;
  return out;
}

/** The inner map of a two-level cache, made on first use. */
function inner<K, L, V>(outer: Map<K, Map<L, V>>, key: K): Map<L, V> {
  let m = outer.get(key);
  if (!m) {
    m = new Map();
    outer.set(key, m);
  }
  return m;
}

/** The keys a diff names (lost, gained and changed hold distinct keys). */
export const diffKeys = (diff: KeyDiff): string[] => [
  ...Object.keys(diff.lost),
  ...Object.keys(diff.gained),
  ...Object.keys(diff.changed),
];

export class StepValues {
  readonly #effectives = new Map<Definition, Map<Definition, Effective>>();
  readonly #steps = new Map<Effective, Map<Effective, ValueStep>>();
  readonly #values = new Map<Effective, Readonly<Record<string, unknown>>>();
  readonly #argumentsRead = new Map<ObjectKind, Map<string, boolean>>();
  readonly #choices = new Map<string | null, { policy: string | null }>();
  readonly #otherLayers = {
    broker: new Map<string | null, ObjectOutcome['unchangedLayer']>(),
    engine: new Map<string | null, ObjectOutcome['unchangedLayer']>(),
  };

  constructor(
    readonly version: BrokerVersion,
    /** The layer the change is in. */
    readonly layer: PolicyLayer,
  ) {}

  /**
   * The effective values of a pair of definitions (the changed layer's, the other's), read once
   * per pair.
   */
  effective(changed: Definition | undefined, other: Definition | undefined): Effective {
    const byOther = inner(this.#effectives, changed ?? NONE);
    let eff = byOther.get(other ?? NONE);
    if (!eff) {
      eff = Object.freeze(
        this.layer === 'user'
          ? effectiveDefinition(changed, other, this.version)
          : effectiveDefinition(other, changed, this.version),
      );
      byOther.set(other ?? NONE, eff);
    }
    return eff;
  }

  /** What going from one set of effective values to another means, read once per pair (shared, frozen). */
  step(before: Effective, after: Effective): ValueStep {
    const byAfter = inner(this.#steps, before);
    let t = byAfter.get(after);
    if (!t) {
      const d = diffEffective(before, after);
      const heldBy: Record<string, EffectiveValue['from']> = {};
      for (const [k, e] of Object.entries(after)) heldBy[k] = e.from;
      // The operator policy keeps a value the user policy no longer gives (or gave the stricter value already).
      const keptByOperator = Object.keys(before).filter(
        (k) => before[k]?.from !== 'operator-policy' && after[k]?.from === 'operator-policy',
      );
      t = {
        after,
        diff: Object.freeze({
          lost: Object.freeze(d.lost),
          gained: Object.freeze(d.gained),
          changed: Object.freeze(d.changed),
        }),
        heldBy: Object.freeze(heldBy),
        keptByOperator: Object.freeze(keptByOperator),
        lost: Object.keys(d.lost),
        risks: new Map(),
      };
      byAfter.set(after, t);
    }
    return t;
  }

  /**
   * Whether the object has an argument the broker combines with a policy's value (arguments.ts):
   * if not (none, or only `x-queue-type`), its values, risks and argument notes are its policies'
   * alone, and shared with every object making the same step. Read once per argument name and kind.
   */
  readsArguments(args: Args, kind: ObjectKind): boolean {
    const known = inner(this.#argumentsRead, kind);
    for (const arg in args) {
      if (args[arg] === undefined) continue;
      let read = known.get(arg);
      if (read === undefined) {
        // The key an argument sets: `x-message-ttl` -> message-ttl (exchanges: bare names), as withArguments reads it.
        const key = kind === 'exchange' ? arg : arg.startsWith('x-') ? arg.slice(2) : undefined;
        read =
          key !== undefined && argumentName(key, kind) === arg && !!argumentRule(key, kind, this.version);
        known.set(arg, read);
      }
      if (read) return true;
    }
    return false;
  }

  /** The values an object uses (both layers, then its own arguments on top). */
  inUse(eff: Effective, args: Args | undefined, kind: ObjectKind): Readonly<Record<string, unknown>> {
    if (args) return valuesOf(withArguments(eff, args, kind, this.version));
    let v = this.#values.get(eff);
    if (!v) {
      v = Object.freeze(valuesOf(eff));
      this.#values.set(eff, v);
    }
    return v;
  }

  /** The values in use of every object making this step without arguments the rules read: one (frozen). */
  sharedInUse(t: ValueStep, before: Effective, kind: ObjectKind): ObjectOutcome['inUse'] {
    t.inUse ??= Object.freeze({
      before: this.inUse(before, undefined, kind),
      after: this.inUse(t.after, undefined, kind),
    });
    return t.inUse;
  }

  /** Risky keys the object really stops using: its own arguments (when it has some the rules read) may keep them. */
  risks(kind: ObjectKind, t: ValueStep, args: Args | undefined): readonly Risk[] {
    if (t.lost.length === 0) return NO_RISKS;
    const v = this.version;
    // An argument keeps a lost key only where a rule reads it: else the risks are the shared ones.
    if (
      args &&
      t.lost.some((key) => argumentRule(key, kind, v) && args[argumentName(key, kind)] !== undefined)
    )
      return this.#lostRisks(kind, t, args);
    let risks = t.risks.get(kind);
    if (!risks) {
      risks = Object.freeze(this.#lostRisks(kind, t, undefined));
      t.risks.set(kind, risks);
    }
    return risks;
  }

  #lostRisks(kind: ObjectKind, t: ValueStep, args: Args | undefined): Risk[] {
    const v = this.version;
    const found = new Set<Risk>();
    for (const key of t.lost) {
      const risk = riskOf(key, kind, v);
      if (!risk) continue;
      if (args && argumentRule(key, kind, v) && args[argumentName(key, kind)] !== undefined) continue;
      found.add(risk);
    }
    return RISKS.filter((r) => found.has(r));
  }

  /** For each key the step moves that the object's own arguments also set: which value holds, before and after. */
  argumentNotes(
    o: InventoryObject,
    kind: ObjectKind,
    before: Effective,
    after: Effective,
    diff: KeyDiff,
  ): Record<string, ArgumentNote> | undefined {
    let out: Record<string, ArgumentNote> | undefined;
    for (const key of diffKeys(diff)) {
      const rule = argumentRule(key, kind, this.version);
      const argument = argumentName(key, kind);
      const argumentValue = o.arguments[argument];
      if (!rule || argumentValue === undefined) continue;
      const b = valueInUse(rule, key, argumentValue, before[key]?.value, this.version);
      const a = valueInUse(rule, key, argumentValue, after[key]?.value, this.version);
      out ??= {};
      out[key] = { argument, argumentValue, rule, before: b.value, after: a.value, holds: a.from };
    }
    return out;
  }

  /** `{ policy }`, one (frozen) per policy name: most outcomes of a change share a few. */
  chosen(policy: string | null): { policy: string | null } {
    let c = this.#choices.get(policy);
    if (!c) {
      c = Object.freeze({ policy });
      this.#choices.set(policy, c);
    }
    return c;
  }

  /** The other layer's choice without a tie, one (frozen) per policy and source. */
  otherLayer(policy: string | null, source: 'broker' | 'engine'): ObjectOutcome['unchangedLayer'] {
    const bySource = this.#otherLayers[source];
    let c = bySource.get(policy);
    if (!c) {
      c = Object.freeze({ layer: this.layer === 'user' ? 'operator' : 'user', policy, source });
      bySource.set(policy, c);
    }
    return c;
  }
}
