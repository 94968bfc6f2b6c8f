import { scopeFits } from '../keys.ts';
import {
  anchoredForm,
  type CompiledPattern,
  isAnchored,
  type NameView,
  PatternCache,
  type PendingVerdicts,
  pendingVerdicts,
} from '../pattern/pattern.ts';
import { PolicyIndex } from '../policyIndex.ts';
import { RISKS } from '../risks.ts';
import { byEngine, byReport, type ChangeContext, Reading, unknownKind } from './objectStep.ts';
import { outcomeOf } from './outcome.ts';
import type {
  InventoryObject,
  Layer,
  ObjectOutcome,
  SimulationInput,
  SimulationResult,
  Unpredictable,
} from './simulationTypes.ts';
import { StepValues } from './stepValues.ts';

export type {
  ChangeAction,
  InventoryObject,
  Layer,
  ObjectOutcome,
  PolicyChange,
  SimulationInput,
  SimulationResult,
  Unpredictable,
} from './simulationTypes.ts';

/**
 * What a create, edit or delete of one policy does to every object of the vhost, before it is
 * made. Pure: the inventory and the policies come in, outcomes come out.
 *
 * The rule is the broker's (see resolve.ts): per layer, the highest-priority applicable match
 * wins alone. What is known *before* the change is the broker's own report for the user layer
 * (the `policy` field, read from the object's record); the engine only works out what changes.
 * That makes the simulation both exact and cheap:
 * - a delete touches only the objects the broker reports governed by the deleted policy;
 * - a create or edit touches only the objects its old version governs or its new version reaches;
 * - for an object whose winner is removed, every applicable policy with a higher priority than
 *   the reported winner is known not to match (else the broker would have chosen it): only the
 *   lower ones are read, and an unreadable pattern above the winner costs nothing.
 * The operator layer is not reported by the cheap listing, so it is the engine's reading of the
 * operator policies (few, in practice), and a tie there is said as a tie.
 * Anything the engine cannot decide is `unpredictable`, with the reason, never guessed.
 *
 * This module is the driver: it is fed the objects, reads each (objectStep.ts: where it stands in
 * each layer before and after), turns what moved into an outcome (outcome.ts, with the values
 * read once per pair in stepValues.ts), parks what waits for the backtracking engine, and sorts.
 * The vocabulary is simulationTypes.ts'; the summary's words are the preview's (src/preview/summary.ts).
 */

const CATCH_NAMES = 1000;

/**
 * Fed the inventory one object at a time (as the listing streams in), keeps only what the change
 * touches. `result()` sorts and summarises.
 */
export class Simulation {
  readonly #ctx: ChangeContext;
  readonly #values: StepValues;
  readonly #catch: { pattern: CompiledPattern; anchored: CompiledPattern; applyTo: string } | undefined;
  readonly #objects: ObjectOutcome[] = [];
  readonly #unpredictable: Unpredictable[] = [];
  /** Objects waiting for the backtracking engine's verdicts (see pending, settle). */
  #parked: { object: InventoryObject; view: NameView }[] = [];
  readonly #catchNames: string[] = [];
  #catchCount = 0;
  #queues = 0;
  #exchanges = 0;

  constructor(input: SimulationInput) {
    const cache = input.cache ?? new PatternCache();
    const { change, version } = input;
    // Each kind's lists built on the first object of that kind: a burst of outside changes runs
    // one simulation per change, each fed only the objects its policy reaches (bench/outside).
    const index = (layer: Layer) =>
      layer instanceof PolicyIndex ? layer : new PolicyIndex(layer, version, cache);
    const current = index(change.layer === 'user' ? input.user : input.operator);
    // The proposed layer read through the current one's lists: one policy apart.
    const proposed = current.replacing([change.before?.name, change.after?.name], change.after, cache);
    this.#ctx = {
      version,
      change,
      cache,
      changed: { before: current, after: proposed },
      other: index(change.layer === 'user' ? input.operator : input.user),
      changedNames: new Set([change.before?.name, change.after?.name]),
    };
    this.#values = new StepValues(version, change.layer);
    const after = change.after;
    if (after && !isAnchored(after.pattern)) {
      const pattern = cache.get(after.pattern);
      if (pattern.readable) {
        this.#catch = { pattern, anchored: cache.get(anchoredForm(after.pattern)), applyTo: after.applyTo };
      }
    }
  }

  add(o: InventoryObject): void {
    if (o.kind === 'exchange') this.#exchanges++;
    else this.#queues++;
    const change = this.#ctx.change;
    // The common case of a delete, decided without allocating: the broker reports another policy.
    if (change.after === null && change.layer === 'user' && o.kind !== null) {
      const reported = o.policy;
      if (reported !== undefined && reported !== change.before?.name) return;
    }
    const parked = this.#add(o, true);
    if (parked) this.#parked.push({ object: o, view: parked });
  }

  /**
   * The patterns the backtracking engine is to decide, and for which names (by shifted view),
   * before `settle()`: the objects that need them wait, parked, meanwhile.
   */
  pending(): PendingVerdicts {
    return pendingVerdicts(this.#parked.map((p) => p.view));
  }

  /** The parked objects read again, with the verdicts in (a pattern that ran out of budget: unreadable). */
  settle(): void {
    const parked = this.#parked;
    this.#parked = [];
    for (const { object } of parked) this.#add(object, false);
  }

  /**
   * Reads one object; what it finds is kept only when no pattern waits for the backtracking
   * engine (`collect`), else the object's view is returned, to be parked and read again.
   */
  #add(o: InventoryObject, collect: boolean): NameView | undefined {
    const r = new Reading(o.name, collect);
    const outcome = this.#read(o, r);
    const view = r.made;
    if (view?.pending && view.pending.size > 0) return view;
    if (r.caught) {
      this.#catchCount++;
      if (this.#catchNames.length < CATCH_NAMES) this.#catchNames.push(o.name);
    }
    if (r.staged) for (const u of r.staged) this.#unpredictable.push(u);
    if (outcome) this.#objects.push(outcome);
    return undefined;
  }

  #read(o: InventoryObject, r: Reading): ObjectOutcome | null {
    if (o.kind === null) {
      unknownKind(this.#ctx, o, r);
      return null;
    }
    const kind = o.kind;
    if (this.#catch && scopeFits(this.#catch.applyTo, kind)) {
      r.caught = this.#catch.pattern.match(r.view) === true && this.#catch.anchored.match(r.view) === false;
    }
    const ctx = this.#ctx;
    const reported = ctx.change.layer === 'user' ? o.policy : o.operatorPolicy;
    const step = reported === undefined ? byEngine(ctx, kind, r) : byReport(ctx, kind, r, reported);
    if (step === null) return null;
    if ('why' in step) {
      r.stage({ name: o.name, kind, why: step.why });
      return null;
    }
    return outcomeOf(ctx, this.#values, o, kind, step, r);
  }

  result(): SimulationResult {
    // Verdicts nobody asked for: the patterns stay undecided for those names, never guessed.
    this.settle();
    const rank = (o: ObjectOutcome) => {
      const r = o.risks[0] ?? o.possibleRisks?.[0];
      return r === undefined ? RISKS.length + (o.newTie ? 0 : 1) : RISKS.indexOf(r);
    };
    // Each object's rank read once, not at every comparison (a broad change: 19,000 objects).
    const objects = this.#objects
      .map((o) => ({ o, rank: rank(o) }))
      .sort((a, b) => a.rank - b.rank || (a.o.name < b.o.name ? -1 : a.o.name > b.o.name ? 1 : 0))
      .map(({ o }) => o);
    const unpredictable = [...this.#unpredictable].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    const after = this.#ctx.change.after;
    return {
      objects,
      unpredictable,
      unanchoredCatch:
        after && this.#catchCount > 0
          ? { pattern: after.pattern, count: this.#catchCount, names: this.#catchNames }
          : null,
      scanned: { queues: this.#queues, exchanges: this.#exchanges },
    };
  }
}

export function simulate(input: SimulationInput, objects: Iterable<InventoryObject>): SimulationResult {
  const sim = new Simulation(input);
  for (const o of objects) sim.add(o);
  return sim.result();
}
