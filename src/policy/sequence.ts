import { actionOf, type Transition } from './compare.ts';
import type { KeyDiff } from './effective.ts';
import { PatternCache } from './pattern.ts';
import { PolicyIndex } from './policyIndex.ts';
import { RISKS, type Risk, riskOf } from './risks.ts';
import { type InventoryObject, type ObjectOutcome, Simulation } from './simulate.ts';
import { touchIndex } from './touch.ts';
import type { BrokerVersion, ObjectKind, Policy, PolicyLayer } from './types.ts';

/**
 * A sequence of policy changes to one vhost, simulated step by step: step k's "before" is the
 * state after step k-1 (its winners), step 1's the broker's report, as the bot writes a set one
 * policy at a time and every state on the way is real for a moment. Pure: one simulation per
 * step (simulate.ts), all fed by one pass over the objects, each only the objects its policy
 * reaches (touch.ts), as the watcher's burst of outside changes is (src/watch/effect.ts).
 *
 * From step 2 on, a layer some earlier step changed is read by the engine on both sides: the
 * broker's report of it is the state before the whole set, not before the step.
 *
 * `timelines()` then follows each object through the steps: the values it uses in every state,
 * and what the end state gives and takes compared with now.
 */

export interface SequenceInput {
  readonly version: BrokerVersion;
  /** The vhost's policies and operator policies as they are now. */
  readonly user: readonly Policy[];
  readonly operator: readonly Policy[];
  /** In the order of writing; each policy at most once. */
  readonly steps: readonly Transition[];
  readonly cache?: PatternCache;
}

/** A queue and an exchange may share a name: an object is its kind and name. */
export const objectKey = (o: { readonly kind: ObjectKind | null; readonly name: string }): string =>
  `${o.kind === 'exchange' ? 'e' : 'q'}:${o.name}`;

export class SequenceDriver {
  /** One per step, in order. */
  readonly simulations: readonly Simulation[];
  readonly #touched: (o: InventoryObject) => readonly number[];
  /** Per step: whether its objects are fed without the broker's report of each layer. */
  readonly #unreported: readonly Readonly<Record<PolicyLayer, boolean>>[];

  constructor(input: SequenceInput) {
    const cache = input.cache ?? new PatternCache();
    const { version } = input;
    let layers = {
      user: new PolicyIndex(input.user, version, cache),
      operator: new PolicyIndex(input.operator, version, cache),
    };
    const changed = { user: false, operator: false };
    const simulations: Simulation[] = [];
    const unreported: Record<PolicyLayer, boolean>[] = [];
    for (const t of input.steps) {
      simulations.push(
        new Simulation({
          version,
          user: layers.user,
          operator: layers.operator,
          change: { action: actionOf(t), layer: t.layer, before: t.before, after: t.after },
          cache,
        }),
      );
      unreported.push({ ...changed });
      const next = layers[t.layer].replacing([t.before?.name, t.after?.name], t.after, cache);
      layers = { ...layers, [t.layer]: next };
      changed[t.layer] = true;
    }
    this.simulations = simulations;
    this.#unreported = unreported;
    this.#touched = touchIndex(input.steps, version, cache);
  }

  /** The steps that may reach this object. */
  reaching(o: InventoryObject): readonly number[] {
    return this.#touched(o);
  }

  /** Feeds the object to every step that may reach it; true when one does. */
  add(o: InventoryObject): boolean {
    const reach = this.#touched(o);
    if (reach.length === 0) return false;
    const variants = new Map<string, InventoryObject>();
    for (const i of reach) {
      const u = this.#unreported[i];
      if (!u) continue;
      const key = `${u.user}${u.operator}`;
      let v = variants.get(key);
      if (!v) {
        v = {
          ...o,
          ...(u.user ? { policy: undefined } : {}),
          ...(u.operator ? { operatorPolicy: undefined } : {}),
        };
        variants.set(key, v);
      }
      this.simulations[i]?.add(v);
    }
    return true;
  }
}

// --- each object through the steps -----------------------------------------------------------

/** The values an object uses in one state; with a tie, one set per candidate (the engine's assumption first). */
export type StateValues = readonly Readonly<Record<string, unknown>>[];

export interface Timeline {
  readonly name: string;
  readonly kind: ObjectKind;
  /** Now (before step 0). */
  readonly now: Readonly<Record<string, unknown>>;
  /** After each step (index as the steps'): the values in use; several where the state is a tie. */
  readonly states: readonly StateValues[];
  /** The steps whose simulation moved it, in order, with their outcome. */
  readonly outcomes: readonly { readonly step: number; readonly outcome: ObjectOutcome }[];
  /** The policy of each layer now and after the last step (`null`: none; a tie lists its candidates). */
  readonly policies: {
    readonly now: LayerNames;
    readonly end: LayerNames;
  };
  /** The end state compared with now, in effective values (as the preview's lost/gained/changed). */
  readonly end: KeyDiff & { readonly risks: Risk[] };
}

export interface LayerNames {
  readonly policy: string | null;
  readonly operatorPolicy: string | null;
  readonly candidates?: string[];
}

type Values = Readonly<Record<string, unknown>>;

/** The values after a candidate's diff, read onto the values before (a tie's other candidates). */
function applied(before: Values, d: KeyDiff): Values {
  const out: Record<string, unknown> = { ...before };
  for (const k of Object.keys(d.lost)) delete out[k];
  for (const [k, v] of Object.entries(d.gained)) out[k] = v;
  for (const [k, v] of Object.entries(d.changed)) out[k] = v[1];
  return out;
}

function statesOf(o: ObjectOutcome): StateValues {
  const primary = o.inUse.after;
  if (!o.ifCandidate || !o.after.candidates) return [primary];
  const [first, ...rest] = o.after.candidates;
  const out: Values[] = [primary];
  for (const c of rest) {
    const d = o.ifCandidate[c];
    if (d && first !== c) out.push(applied(o.inUse.before, d));
  }
  return out;
}

const ABSENT = Symbol('absent');

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function layerNames(o: ObjectOutcome, side: 'before' | 'after'): LayerNames {
  const changed = o[side];
  const other = o.unchangedLayer;
  const user = other.layer === 'operator' ? changed : other;
  const operator = other.layer === 'operator' ? other : changed;
  const candidates = changed.candidates ?? other.candidates;
  return {
    policy: user.policy,
    operatorPolicy: operator.policy,
    ...(candidates ? { candidates } : {}),
  };
}

/**
 * Each object some step moved, through every state: its values after each step, and the end
 * state against now. The primary diff (the engine's assumed candidate) is what composes a tie.
 */
export function timelines(
  steps: number,
  results: readonly { readonly objects: readonly ObjectOutcome[] }[],
  version: BrokerVersion,
): Timeline[] {
  const byObject = new Map<string, { step: number; outcome: ObjectOutcome }[]>();
  results.forEach((r, step) => {
    for (const outcome of r.objects) {
      const key = objectKey(outcome);
      let list = byObject.get(key);
      if (!list) {
        list = [];
        byObject.set(key, list);
      }
      list.push({ step, outcome });
    }
  });
  const out: Timeline[] = [];
  for (const outcomes of byObject.values()) {
    const first = outcomes[0]?.outcome as ObjectOutcome;
    const last = outcomes[outcomes.length - 1]?.outcome as ObjectOutcome;
    const states: StateValues[] = [];
    let current: StateValues = [first.inUse.before];
    let next = 0;
    for (let k = 0; k < steps; k++) {
      const o = outcomes[next];
      if (o && o.step === k) {
        current = statesOf(o.outcome);
        next++;
      }
      states.push(current);
    }
    // The end against now, key by key: the first value seen and the last.
    const firstSeen = new Map<string, unknown>();
    const lastSeen = new Map<string, unknown>();
    for (const { outcome } of outcomes) {
      const primary = outcome.after.candidates?.[0];
      const d = (primary !== undefined ? outcome.ifCandidate?.[primary] : undefined) ?? outcome;
      const see = (k: string, before: unknown, after: unknown) => {
        if (!firstSeen.has(k)) firstSeen.set(k, before);
        lastSeen.set(k, after);
      };
      for (const [k, v] of Object.entries(d.lost)) see(k, v, ABSENT);
      for (const [k, v] of Object.entries(d.gained)) see(k, ABSENT, v);
      for (const [k, v] of Object.entries(d.changed)) see(k, v[0], v[1]);
    }
    const lost: Record<string, unknown> = {};
    const gained: Record<string, unknown> = {};
    const changed: Record<string, [unknown, unknown]> = {};
    for (const k of [...firstSeen.keys()].sort()) {
      const a = firstSeen.get(k);
      const b = lastSeen.get(k);
      if (a !== ABSENT && b === ABSENT) lost[k] = a;
      else if (a === ABSENT && b !== ABSENT) gained[k] = b;
      else if (a !== ABSENT && b !== ABSENT && !sameValue(a, b)) changed[k] = [a, b];
    }
    const endValues = current[0] ?? {};
    const found = new Set<Risk>();
    for (const k of Object.keys(lost)) {
      // A key the object's own arguments keep is not lost to it.
      if (k in endValues) continue;
      const r = riskOf(k, first.kind, version);
      if (r) found.add(r);
    }
    out.push({
      name: first.name,
      kind: first.kind,
      now: first.inUse.before,
      states,
      outcomes,
      policies: { now: layerNames(first, 'before'), end: layerNames(last, 'after') },
      end: { lost, gained, changed, risks: RISKS.filter((r) => found.has(r)) },
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.kind < b.kind ? -1 : 1));
}
