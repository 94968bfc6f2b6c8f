import { actionOf, type Transition } from '../compare.ts';
import type { KeyDiff } from '../effective.ts';
import { PatternCache } from '../pattern/pattern.ts';
import { PolicyIndex } from '../policyIndex.ts';
import { RISKS, type Risk, riskOf } from '../risks.ts';
import type { BrokerVersion, ObjectKind, PolicyLayer } from '../types.ts';
import { type InventoryObject, type Layer, type ObjectOutcome, Simulation } from './simulate.ts';
import { touchIndex } from './touch.ts';

/**
 * A sequence of policy changes to one vhost, simulated step by step: step k's "before" is the
 * state after step k-1 (its winners), step 1's the broker's report, as the bot writes a set one
 * policy at a time and every state on the way is real for a moment. Pure: one simulation per
 * step (simulate.ts), all fed by one pass over the objects, each only the objects its policy
 * reaches (touch.ts). The one way to run many simulations off one listing: the plan's order and
 * its search (order.ts, src/plan/plan.ts) and the watcher's burst of outside changes
 * (src/watch/effect.ts, `made`) all drive it.
 *
 * From step 2 on, a layer some earlier step changed is read by the engine on both sides: the
 * broker's report of it is the state before the whole set, not before the step.
 *
 * `timelines()` then follows each object through the steps: the values it uses in every state,
 * and what the end state gives and takes compared with now.
 */

export interface SequenceInput {
  readonly version: BrokerVersion;
  /** The vhost's policies and operator policies as the listing has them (or an index of them). */
  readonly user: Layer;
  readonly operator: Layer;
  /** In the order of writing; each policy at most once. */
  readonly steps: readonly Transition[];
  readonly cache?: PatternCache;
  /**
   * The layers whose report, as the objects fed carry it, is not the state before step 1 (changes
   * written since the listing): read by the engine on both sides from step 1 on.
   */
  readonly unreported?: Readonly<Record<PolicyLayer, boolean>>;
  /**
   * The steps are changes already made (the watcher's), and the listing is after all of them:
   * each step's before is the listed layers with its own policy put back as it was, and its layer,
   * whose report is already the after, is read by the engine on both sides.
   */
  readonly made?: boolean;
}

/** A queue and an exchange may share a name: an object is its kind and name. */
export const objectKey = (o: { readonly kind: ObjectKind | null; readonly name: string }): string =>
  `${o.kind === 'exchange' ? 'e' : 'q'}:${o.name}`;

type Layers = Readonly<Record<PolicyLayer, PolicyIndex>>;
type Unreported = Readonly<Record<PolicyLayer, boolean>>;

/** The state before each step, and which layers' reports do not describe it. */
interface StepState {
  readonly layers: Layers;
  readonly unreported: Unreported;
}

/** Written one after another: step k's before is step k-1's after. */
function chained(
  now: Layers,
  steps: readonly Transition[],
  first: Unreported,
  cache: PatternCache,
): StepState[] {
  let layers = now;
  const unreported = { ...first };
  return steps.map((t) => {
    const state = { layers, unreported: { ...unreported } };
    layers = {
      ...layers,
      [t.layer]: layers[t.layer].replacing([t.before?.name, t.after?.name], t.after, cache),
    };
    unreported[t.layer] = true;
    return state;
  });
}

/** Already made, the listing after all: each step's before is now with its own policy put back. */
function undone(now: Layers, steps: readonly Transition[], cache: PatternCache): StepState[] {
  return steps.map((t) => ({
    layers: { ...now, [t.layer]: now[t.layer].replacing([t.name], t.before, cache) },
    unreported: { user: t.layer === 'user', operator: t.layer === 'operator' },
  }));
}

export class SequenceDriver {
  /** One per step, in order. */
  readonly simulations: readonly Simulation[];
  readonly #touched: (o: InventoryObject) => readonly number[];
  /** Per step: whether its objects are fed without the broker's report of each layer. */
  readonly #unreported: readonly Unreported[];

  constructor(input: SequenceInput) {
    const cache = input.cache ?? new PatternCache();
    const { version, steps } = input;
    const index = (layer: Layer) =>
      layer instanceof PolicyIndex ? layer : new PolicyIndex(layer, version, cache);
    const now = { user: index(input.user), operator: index(input.operator) };
    const states = input.made
      ? undone(now, steps, cache)
      : chained(now, steps, input.unreported ?? { user: false, operator: false }, cache);
    this.simulations = steps.map((t, i) => {
      const { layers } = states[i] as StepState;
      return new Simulation({
        version,
        user: layers.user,
        operator: layers.operator,
        change: { action: actionOf(t), layer: t.layer, before: t.before, after: t.after },
        cache,
      });
    });
    this.#unreported = states.map((s) => s.unreported);
    this.#touched = touchIndex(steps, version, cache);
  }

  /** The steps that may reach this object. */
  reaching(o: InventoryObject): readonly number[] {
    return this.#touched(o);
  }

  /** Feeds the object to every step that may reach it; true when one does. */
  add(o: InventoryObject): boolean {
    const reach = this.#touched(o);
    if (reach.length === 0) return false;
    this.addTo(o, reach);
    return true;
  }

  /**
   * Feeds the object to these steps (those that may reach it, known already), each without the
   * reports of the layers it reads by the engine: one copy per combination of those layers.
   */
  addTo(o: InventoryObject, steps: readonly number[]): void {
    // Indexed by the layers read by the engine (1: user, 2: operator); most objects need one.
    const variants: (InventoryObject | undefined)[] = [];
    for (const i of steps) {
      const u = this.#unreported[i];
      if (!u) continue;
      const slot = (u.user ? 1 : 0) + (u.operator ? 2 : 0);
      let v = variants[slot];
      if (!v) {
        const user = u.user && o.policy !== undefined;
        const operator = u.operator && o.operatorPolicy !== undefined;
        v =
          user || operator
            ? {
                ...o,
                ...(user ? { policy: undefined } : {}),
                ...(operator ? { operatorPolicy: undefined } : {}),
              }
            : o;
        variants[slot] = v;
      }
      this.simulations[i]?.add(v);
    }
  }
}

// --- each object through the steps -----------------------------------------------------------

/**
 * The values an object uses in one state; with a tie in either layer, one set per pair of
 * candidates (the engine's assumption first).
 */
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

function statesOf(o: ObjectOutcome): StateValues {
  return o.inUse.tie ? [o.inUse.after, ...o.inUse.tie] : [o.inUse.after];
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
