import { type ArgumentNote, argumentName, argumentRule, valueInUse } from './arguments.ts';
import {
  commonDiff,
  diffEffective,
  type Effective,
  type EffectiveValue,
  effectiveDefinition,
  isEmptyDiff,
  type KeyDiff,
} from './effective.ts';
import { scopeFits } from './keys.ts';
import {
  anchoredForm,
  type CompiledPattern,
  isAnchored,
  type NameView,
  nameView,
  PatternCache,
  type PendingVerdicts,
  pendingVerdicts,
} from './pattern.ts';
import { type IndexedPolicy, PolicyIndex, type Scan, scan, whyUnreadable } from './policyIndex.ts';
import { withArguments } from './provenance.ts';
import { keyHasEffect, RISKS, type Risk, riskOf } from './risks.ts';
import type { BrokerVersion, Definition, ObjectKind, Policy, PolicyLayer } from './types.ts';

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
 * Longer than the other modules for a reason: it is one idea, the step from the broker's report
 * (or the engine's reading) before a change to the outcome after it, and its cases (report or
 * none, tie before or after, the other layer, the object's own arguments) read best together.
 * The rules it uses each live in their own module: the index and the scan (policyIndex.ts), the
 * effective values and their diff (effective.ts), the risk table (risks.ts), the argument rule
 * (arguments.ts); the summary's words are the preview's (src/preview/summary.ts).
 */

export type ChangeAction = 'create' | 'edit' | 'delete';

export interface PolicyChange {
  readonly action: ChangeAction;
  readonly layer: PolicyLayer;
  /** The policy as it is now; null for a create. */
  readonly before: Policy | null;
  /** The policy as proposed; null for a delete. */
  readonly after: Policy | null;
}

/** One queue or exchange, as the inventory listed it. */
export interface InventoryObject {
  readonly name: string;
  /** null: a queue of a type this bot does not know (its vetoes are unknown). */
  readonly kind: ObjectKind | null;
  /** The broker's type word, for queues of unknown type. */
  readonly type?: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The user policy the broker reports: a name, null for none, undefined when not reported. */
  readonly policy: string | null | undefined;
  /** The operator policy the broker reports, when the listing carries it. */
  readonly operatorPolicy?: string | null | undefined;
}

// --- outcomes ------------------------------------------------------------------------------

export interface ObjectOutcome extends KeyDiff {
  readonly name: string;
  readonly kind: ObjectKind;
  /** The changed layer's policy (the operator policy for an operator change). */
  readonly before: { policy: string | null; candidates?: string[] };
  /** `policy` is null and `candidates` lists the tie when the broker's choice is undefined. */
  readonly after: { policy: string | null; candidates?: string[] };
  /** The other layer, which the change leaves as it is. */
  readonly unchangedLayer: {
    layer: PolicyLayer;
    policy: string | null;
    candidates?: string[];
    source: 'broker' | 'engine';
  };
  /** After a tie: what each candidate would give. `lost`/`gained`/`changed` then hold only what all agree on. */
  readonly ifCandidate?: Record<string, KeyDiff>;
  /** Where each key's effective value after the change comes from (user policy, operator policy, both). */
  readonly heldBy: Record<string, EffectiveValue['from']>;
  /** Keys the user policy gave (or shared) before and only the operator policy gives after: not lost. */
  readonly keptByOperator?: string[];
  /** Keys the object's own arguments also set, and which value holds (reference section 6). */
  readonly arguments?: Record<string, ArgumentNote>;
  /**
   * Keys it loses, gains or changes that its type takes and does nothing with on this broker
   * (keyHasEffect, as `which`'s `effective.<key>.noEffect`): max-length on an exchange.
   */
  readonly noEffect?: string[];
  /**
   * Every value the object really uses before and after (both layers and its own arguments, by
   * provenance.ts): what the rules of immediate effect (impact.ts) read. Not part of the --json.
   */
  readonly inUse: { readonly before: Record<string, unknown>; readonly after: Record<string, unknown> };
  /** What the object really loses, by risk, first the worst. */
  readonly risks: Risk[];
  /** Risks under some tie candidates only. */
  readonly possibleRisks?: Risk[];
  /** The change leaves the broker's choice undefined where it was defined. */
  readonly newTie?: true;
  /** The new pattern is unanchored and reaches this name without it starting with the pattern. */
  readonly unanchoredCatch?: true;
  readonly notes?: string[];
}

export interface Unpredictable {
  readonly name: string;
  readonly kind: ObjectKind | string;
  readonly why: string;
}

export interface SimulationResult {
  /** Worst risk first, then new ties, then the rest; by name within each. */
  readonly objects: ObjectOutcome[];
  readonly unpredictable: Unpredictable[];
  /** Names an unanchored proposed pattern reaches without them starting with it (at most CATCH_NAMES listed). */
  readonly unanchoredCatch: {
    readonly pattern: string;
    readonly count: number;
    readonly names: string[];
  } | null;
  /** Objects of the vhost read to get here. */
  readonly scanned: { readonly queues: number; readonly exchanges: number };
}

const CATCH_NAMES = 1000;

// --- the simulation -------------------------------------------------------------------------

/** One layer's policies, or an index of them that several simulations share (`PolicyIndex.replacing`). */
export type Layer = readonly Policy[] | PolicyIndex;

export interface SimulationInput {
  readonly version: BrokerVersion;
  /** The vhost's policies and operator policies as they are now. */
  readonly user: Layer;
  readonly operator: Layer;
  readonly change: PolicyChange;
  readonly cache?: PatternCache;
}

interface LayerChoice {
  readonly policy: Policy | null;
  readonly candidates?: Policy[];
  readonly source: 'broker' | 'engine';
  readonly undecided?: string;
}

const names = (entries: readonly IndexedPolicy[]) => entries.map((e) => e.name);

function sameNames(a: readonly IndexedPolicy[], b: readonly IndexedPolicy[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(names(a));
  return b.every((e) => set.has(e.name));
}

/**
 * From one set of effective values to another: what every object making that step shares (its
 * lists frozen, since many outcomes hold them).
 */
interface Transition {
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

/** No definition (no policy in a layer), as a key of the caches. */
const NONE: Definition = Object.freeze({});
const NO_RISKS: readonly Risk[] = Object.freeze([]);
const COLLECT_PENDING = { collectPending: true } as const;

function valuesOf(sourced: Readonly<Record<string, { readonly value: unknown }>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in sourced) out[k] = sourced[k]?.value;
  return out;
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** Before is read only when needed (to tell a new tie from an old one). */
interface Step {
  /** The engine's reading, or the policy the broker reports (its tie, if any, read from it). */
  readonly before: Scan | { readonly inForce: IndexedPolicy | undefined };
  readonly after: Scan;
}

type StepResult = Step | { readonly why: string } | null;

/**
 * One object being read, passed to what reads it: its name, its view (made on first use: most
 * names are told apart by their literal prefix alone), whether the view collects what waits for
 * the backtracking engine, what it found unpredictable (kept only if it is not parked), and
 * whether the unanchored proposed pattern caught it.
 */
class Reading {
  #view: NameView | undefined;
  staged: Unpredictable[] | undefined;
  caught = false;
  constructor(
    readonly name: string,
    readonly collect: boolean,
  ) {}

  /** The name seen both ways, made on first use, once per object. */
  get view(): NameView {
    this.#view ??= nameView(this.name, this.collect ? COLLECT_PENDING : {});
    return this.#view;
  }

  /** The view, if one was made. */
  get made(): NameView | undefined {
    return this.#view;
  }

  stage(u: Unpredictable): void {
    this.staged ??= [];
    this.staged.push(u);
  }
}

/**
 * Fed the inventory one object at a time (as the listing streams in), keeps only what the change
 * touches. `result()` sorts and summarises.
 */
export class Simulation {
  readonly #version: BrokerVersion;
  readonly #change: PolicyChange;
  readonly #cache: PatternCache;
  readonly #changed: { before: PolicyIndex; after: PolicyIndex };
  readonly #other: PolicyIndex;
  readonly #catch: { pattern: CompiledPattern; anchored: CompiledPattern; applyTo: string } | undefined;
  readonly #objects: ObjectOutcome[] = [];
  readonly #unpredictable: Unpredictable[] = [];
  /** Objects waiting for the backtracking engine's verdicts (see pending, settle). */
  #parked: { object: InventoryObject; view: NameView }[] = [];
  readonly #catchNames: string[] = [];
  #catchCount = 0;
  #queues = 0;
  #exchanges = 0;
  readonly #changedNames: ReadonlySet<string | undefined>;
  /** Read once per pair of definitions, per pair of effective values, per effective values (see #effective). */
  readonly #effectives = new Map<Definition, Map<Definition, Effective>>();
  readonly #transitions = new Map<Effective, Map<Effective, Transition>>();
  readonly #values = new Map<Effective, Readonly<Record<string, unknown>>>();
  readonly #argumentsRead = new Map<ObjectKind, Map<string, boolean>>();
  readonly #choices = new Map<string | null, { policy: string | null }>();
  readonly #otherLayers = {
    broker: new Map<string | null, ObjectOutcome['unchangedLayer']>(),
    engine: new Map<string | null, ObjectOutcome['unchangedLayer']>(),
  };

  constructor(input: SimulationInput) {
    const cache = input.cache ?? new PatternCache();
    const { change, version } = input;
    this.#version = version;
    this.#change = change;
    this.#cache = cache;
    // Each kind's lists built on the first object of that kind: a burst of outside changes runs
    // one simulation per change, each fed only the objects its policy reaches (bench/outside).
    const index = (layer: Layer) =>
      layer instanceof PolicyIndex ? layer : new PolicyIndex(layer, version, cache);
    const current = index(change.layer === 'user' ? input.user : input.operator);
    // The proposed layer read through the current one's lists: one policy apart.
    const proposed = current.replacing([change.before?.name, change.after?.name], change.after, cache);
    this.#changed = { before: current, after: proposed };
    this.#other = index(change.layer === 'user' ? input.operator : input.user);
    const after = change.after;
    if (after && !isAnchored(after.pattern)) {
      const pattern = cache.get(after.pattern);
      if (pattern.readable) {
        this.#catch = { pattern, anchored: cache.get(anchoredForm(after.pattern)), applyTo: after.applyTo };
      }
    }
    this.#changedNames = new Set([change.before?.name, change.after?.name]);
  }

  add(o: InventoryObject): void {
    if (o.kind === 'exchange') this.#exchanges++;
    else this.#queues++;
    // The common case of a delete, decided without allocating: the broker reports another policy.
    if (this.#change.after === null && this.#change.layer === 'user' && o.kind !== null) {
      const reported = o.policy;
      if (reported !== undefined && reported !== this.#change.before?.name) return;
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
      this.#unknownKind(o, r);
      return null;
    }
    const kind = o.kind;
    if (this.#catch && scopeFits(this.#catch.applyTo, kind)) {
      r.caught = this.#catch.pattern.match(r.view) === true && this.#catch.anchored.match(r.view) === false;
    }
    const reported = this.#change.layer === 'user' ? o.policy : o.operatorPolicy;
    const step = reported === undefined ? this.#byEngine(kind, r) : this.#byReport(kind, r, reported);
    if (step === null) return null;
    if ('why' in step) {
      r.stage({ name: o.name, kind, why: step.why });
      return null;
    }
    return this.#outcome(o, kind, step, r);
  }

  /** A queue type this bot does not know: reached by the change means unpredictable. */
  #unknownKind(o: InventoryObject, r: Reading): void {
    const { before, after, layer } = this.#change;
    const reaches = (p: Policy | null) =>
      p !== null && scopeFits(p.applyTo, null) && this.#cache.get(p.pattern).match(r.view) !== false;
    const governed = layer === 'user' && before !== null && o.policy === before.name;
    if (governed || reaches(before) || reaches(after)) {
      r.stage({
        name: o.name,
        kind: o.type ?? 'unknown',
        why: `a queue of type ${JSON.stringify(o.type ?? 'unknown')}, whose key vetoes this bot does not know`,
      });
    }
  }

  /**
   * The user layer with the broker's report: `reported` is the policy in force now.
   * Returns null when the change does not touch the object.
   */
  #byReport(kind: ObjectKind, r: Reading, reported: string | null): StepResult {
    const { name } = r;
    const { before: B, after: A } = this.#changed;
    const oldName = this.#change.before?.name;
    const oldGoverns = oldName !== undefined && reported === oldName;
    const next = this.#change.after ? A.applicable(this.#change.after.name, kind) : undefined;
    if (!oldGoverns && !next) return null;
    // Most names do not start with the proposed pattern's literal: told without their views.
    if (!oldGoverns && next && !next.pattern.mayMatch(name)) return null;
    const nextHit = next ? next.pattern.match(r.view) : false;
    if (!oldGoverns && nextHit === false) return null;

    const inForce = reported === null ? undefined : B.byName.get(reported);
    if (reported !== null && !inForce) {
      return {
        why: `the broker reports ${reported}, which is not among the vhost's policies now: it changed a moment ago; preview again`,
      };
    }
    if (next && nextHit === 'undecidable') {
      return { why: `this bot cannot read the proposed pattern for this name (${whyUnreadable(next)})` };
    }
    // The policy being changed, as it is now, should not outrank what the broker reports.
    const old = oldName !== undefined && !oldGoverns ? B.applicable(oldName, kind) : undefined;
    if (
      old &&
      (inForce === undefined || old.priority > inForce.priority) &&
      old.pattern.match(r.view) === true
    ) {
      return {
        why: `the broker reports ${reported ?? 'no policy'}, though this bot reads ${old.name} as matching it first: preview again, and tell the bot's maintainers if it persists`,
      };
    }
    if (inForce && (inForce.pattern.match(r.view) === false || !B.applicable(inForce.name, kind))) {
      return {
        why: `the broker reports ${inForce.name}, which this bot reads as not governing this ${kind}: preview again, and tell the bot's maintainers if it persists`,
      };
    }
    const before = { inForce };

    if (oldGoverns && inForce) {
      // The winner goes or changes: read the rest from its priority down; above it nothing matches,
      // or the broker would have chosen it.
      const after = scan(A.candidatesFor(kind, name), r.view, (e) => {
        if (e === next) return nextHit;
        return e.priority > inForce.priority ? false : undefined;
      });
      return { before, after };
    }
    // The proposed policy reaches the object and the one in force stays.
    if (!next) return null;
    if (inForce === undefined || next.priority > inForce.priority) {
      return { before, after: { candidates: [next], undecided: [] } };
    }
    if (next.priority < inForce.priority) return null;
    // The same priority as the one in force: a tie with it and whatever else matches at that level.
    const after = scan(A.candidatesFor(kind, name), r.view, (e) => {
      if (e.priority !== inForce.priority) return false;
      if (e === next) return nextHit;
      return e.name === inForce.name ? true : undefined;
    });
    return { before, after };
  }

  /** A layer without a report (the operator layer): the engine reads before and after. */
  #byEngine(kind: ObjectKind, r: Reading): StepResult {
    const { name } = r;
    const { before: B, after: A } = this.#changed;
    const old = this.#change.before ? B.applicable(this.#change.before.name, kind) : undefined;
    const next = this.#change.after ? A.applicable(this.#change.after.name, kind) : undefined;
    const oldHit = old ? old.pattern.match(r.view) : false;
    const nextHit = next ? next.pattern.match(r.view) : false;
    if (oldHit === false && nextHit === false) return null;
    const read = scan(B.candidatesFor(kind, name), r.view);
    // A policy this bot cannot read for this name may have been the one in force: then the
    // before is one of several, like a tie, and the object is listed rather than skipped.
    const before = read.undecided.length
      ? { candidates: [...read.candidates, ...read.undecided], undecided: read.undecided }
      : read;
    return { before, after: scan(A.candidatesFor(kind, name), r.view) };
  }

  /** Before the change: the engine's reading, or the one in force and whatever else matches at its priority (lost the tie). */
  #before(step: Step, kind: ObjectKind, r: Reading): Scan {
    if ('candidates' in step.before) return step.before;
    const { inForce } = step.before;
    return inForce
      ? scan(this.#changed.before.candidatesFor(kind, r.name), r.view, (e) =>
          e.priority !== inForce.priority ? false : e === inForce ? true : undefined,
        )
      : { candidates: [], undecided: [] };
  }

  /** The object's choice in the layer the change leaves alone. */
  #otherChoice(o: InventoryObject, kind: ObjectKind, r: Reading): LayerChoice {
    const reported = this.#change.layer === 'user' ? o.operatorPolicy : o.policy;
    if (reported !== undefined) {
      const p = reported === null ? null : (this.#other.byName.get(reported)?.policy ?? null);
      return { policy: p, source: 'broker' };
    }
    const s = scan(this.#other.candidatesFor(kind, o.name), r.view);
    const [first] = s.candidates;
    return {
      policy: first?.policy ?? null,
      source: 'engine',
      candidates: s.candidates.length > 1 ? s.candidates.map((e) => e.policy) : undefined,
      undecided:
        s.undecided.length > 0
          ? s.undecided.map((e) => `${e.name} (${whyUnreadable(e)})`).join(', ')
          : undefined,
    };
  }

  #outcome(o: InventoryObject, kind: ObjectKind, step: Step, r: Reading): ObjectOutcome | null {
    const { after } = step;
    const layer = this.#change.layer;
    if (after.undecided.length > 0) {
      const u = after.undecided.map((e) => `${e.name} (${whyUnreadable(e)})`).join(', ');
      r.stage({
        name: o.name,
        kind,
        why: `a policy whose pattern this bot cannot read for this name may govern it after the change: ${u}`,
      });
      return null;
    }
    const reported = layer === 'user' ? o.policy : o.operatorPolicy;
    const before =
      reported === undefined || after.candidates.length > 1 ? this.#before(step, kind, r) : undefined;
    const notes: string[] = [];
    if (reported === undefined && before && before.undecided.length > 0) {
      notes.push(
        `Before the change, a policy this bot cannot read for this name may have governed it: ${names(before.undecided).join(', ')}; its values before are not known.`,
      );
    }
    // Before: the broker's report when there is one; the engine's reading otherwise.
    const beforeEntry =
      reported !== undefined
        ? reported === null
          ? undefined
          : this.#changed.before.byName.get(reported)
        : before?.candidates[0];
    const beforeTie = reported === undefined && (before?.candidates.length ?? 0) > 1;
    const afterTie = after.candidates.length > 1;
    const changedNames = this.#changedNames;
    // Nothing moved: the same winner as before, and not the policy being changed.
    if (!afterTie && !beforeTie && after.candidates[0]?.name === beforeEntry?.name) {
      if (beforeEntry === undefined || !changedNames.has(beforeEntry.name)) return null;
    }
    if (
      beforeTie &&
      afterTie &&
      before &&
      sameNames(before.candidates, after.candidates) &&
      !after.candidates.some((e) => changedNames.has(e.name))
    ) {
      return null;
    }

    const other = this.#otherChoice(o, kind, r);
    const otherWords = layer === 'user' ? 'operator policy' : 'user policy';
    if (other.undecided) {
      notes.push(
        `The ${otherWords} may be ${other.undecided}, which this bot cannot read for this name; values assume it is not.`,
      );
    }
    if (other.candidates) {
      notes.push(
        `The ${otherWords} is undefined between ${other.candidates.map((p) => p.name).join(' and ')}; values assume ${other.policy?.name}.`,
      );
    }
    if (beforeTie && before) {
      notes.push(
        `Before the change the ${layer === 'user' ? 'policy' : 'operator policy'} is undefined between ${names(before.candidates).join(' and ')}; values assume ${beforeEntry?.name}.`,
      );
    }
    const otherDefinition = other.policy?.definition;
    const effBefore = this.#effective(beforeEntry?.policy.definition, otherDefinition);
    const args = o.arguments;
    // The arguments, when the rules read one of them (see #readsArguments).
    const readArgs = this.#readsArguments(args, kind) ? args : undefined;
    let primary: Transition;
    let diff: KeyDiff;
    let risks: readonly Risk[];
    let possibleRisks: readonly Risk[] = NO_RISKS;
    let ifCandidate: Record<string, KeyDiff> | undefined;
    if (!afterTie) {
      const winner = after.candidates[0];
      primary = this.#transition(effBefore, this.#effective(winner?.policy.definition, otherDefinition));
      diff = primary.diff;
      if (!beforeTie && winner?.name === beforeEntry?.name && isEmptyDiff(diff)) return null;
      risks = this.#risks(kind, primary, readArgs);
    } else {
      const perCandidate = after.candidates.map((e) => {
        const t = this.#transition(effBefore, this.#effective(e.policy.definition, otherDefinition));
        return { entry: e, t, risks: this.#risks(kind, t, readArgs) };
      });
      primary = (perCandidate[0] as (typeof perCandidate)[number]).t;
      diff = commonDiff(perCandidate.map((c) => c.t.diff));
      const sure = RISKS.filter((r) => perCandidate.every((c) => c.risks.includes(r)));
      risks = sure;
      possibleRisks = RISKS.filter((r) => !sure.includes(r) && perCandidate.some((c) => c.risks.includes(r)));
      ifCandidate = Object.fromEntries(perCandidate.map((c) => [c.entry.name, c.t.diff]));
    }

    const newTie =
      afterTie && !(before && before.candidates.length > 1 && sameNames(before.candidates, after.candidates));
    // Built key by key rather than with conditional spreads: the order of the keys is the --json's,
    // and a broad change builds 19,000 of these (bench/preview).
    const beforeChoice =
      beforeTie && before
        ? { policy: null, candidates: names(before.candidates) }
        : this.#chosen(beforeTie ? null : (beforeEntry?.name ?? null));
    const afterChoice = afterTie
      ? { policy: null, candidates: names(after.candidates) }
      : this.#chosen(after.candidates[0]?.name ?? null);
    const unchangedLayer = other.candidates
      ? {
          layer: layer === 'user' ? ('operator' as const) : ('user' as const),
          policy: null,
          candidates: other.candidates.map((p) => p.name),
          source: other.source,
        }
      : this.#otherLayer(other.policy?.name ?? null, other.source);
    const keptByOperator =
      layer === 'user' && primary.keptByOperator.length ? (primary.keptByOperator as string[]) : undefined;
    const argNotes = readArgs ? this.#argumentNotes(o, kind, effBefore, primary.after, diff) : undefined;
    const inUse = readArgs
      ? { before: this.#inUse(effBefore, readArgs, kind), after: this.#inUse(primary.after, readArgs, kind) }
      : this.#sharedInUse(primary, effBefore, kind);
    // The order of the keys is the --json's: one literal when no optional key falls in the middle
    // (most objects), else key by key (a broad change builds 19,000 of these: bench/preview).
    let outcome: Writable<ObjectOutcome>;
    if (!ifCandidate && !keptByOperator && !argNotes) {
      outcome = {
        name: o.name,
        kind,
        before: beforeChoice,
        after: afterChoice,
        lost: diff.lost,
        gained: diff.gained,
        changed: diff.changed,
        unchangedLayer,
        heldBy: primary.heldBy,
        inUse,
        risks: risks as Risk[],
      };
    } else {
      outcome = {
        name: o.name,
        kind,
        before: beforeChoice,
        after: afterChoice,
        lost: diff.lost,
        gained: diff.gained,
        changed: diff.changed,
        unchangedLayer,
      } as Writable<ObjectOutcome>;
      if (ifCandidate) outcome.ifCandidate = ifCandidate;
      outcome.heldBy = primary.heldBy;
      if (keptByOperator) outcome.keptByOperator = keptByOperator;
      if (argNotes) outcome.arguments = argNotes;
      outcome.inUse = inUse;
      outcome.risks = risks as Risk[];
    }
    if (possibleRisks.length) outcome.possibleRisks = possibleRisks as Risk[];
    const noEffect = [
      ...Object.keys(diff.lost),
      ...Object.keys(diff.gained),
      ...Object.keys(diff.changed),
    ].filter((k) => keyHasEffect(k, kind, this.#version) === false);
    if (noEffect.length) outcome.noEffect = noEffect;
    if (newTie) outcome.newTie = true;
    if (r.caught) outcome.unanchoredCatch = true;
    if (notes.length) outcome.notes = notes;
    return outcome;
  }

  /** The values in use of every object making this step without arguments the rules read: one (frozen). */
  #sharedInUse(t: Transition, before: Effective, kind: ObjectKind): ObjectOutcome['inUse'] {
    t.inUse ??= Object.freeze({
      before: this.#inUse(before, undefined, kind),
      after: this.#inUse(t.after, undefined, kind),
    });
    return t.inUse;
  }

  /** `{ policy }`, one (frozen) per policy name: most outcomes of a change share a few. */
  #chosen(policy: string | null): { policy: string | null } {
    let c = this.#choices.get(policy);
    if (!c) {
      c = Object.freeze({ policy });
      this.#choices.set(policy, c);
    }
    return c;
  }

  /** The other layer's choice without a tie, one (frozen) per policy and source. */
  #otherLayer(policy: string | null, source: 'broker' | 'engine'): ObjectOutcome['unchangedLayer'] {
    const bySource = this.#otherLayers[source];
    let c = bySource.get(policy);
    if (!c) {
      c = Object.freeze({ layer: this.#change.layer === 'user' ? 'operator' : 'user', policy, source });
      bySource.set(policy, c);
    }
    return c;
  }

  /**
   * The effective values of a pair of definitions (the changed layer's, the other's), read once
   * per pair: the objects a change moves share a handful of pairs (bench/preview: 19,000 objects).
   */
  #effective(changed: Definition | undefined, other: Definition | undefined): Effective {
    let byOther = this.#effectives.get(changed ?? NONE);
    if (!byOther) {
      byOther = new Map();
      this.#effectives.set(changed ?? NONE, byOther);
    }
    let eff = byOther.get(other ?? NONE);
    if (!eff) {
      eff = Object.freeze(
        this.#change.layer === 'user'
          ? effectiveDefinition(changed, other, this.#version)
          : effectiveDefinition(other, changed, this.#version),
      );
      byOther.set(other ?? NONE, eff);
    }
    return eff;
  }

  /** What going from one set of effective values to another means, read once per pair (shared, frozen). */
  #transition(before: Effective, after: Effective): Transition {
    let byAfter = this.#transitions.get(before);
    if (!byAfter) {
      byAfter = new Map();
      this.#transitions.set(before, byAfter);
    }
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
  #readsArguments(args: Readonly<Record<string, unknown>>, kind: ObjectKind): boolean {
    let known = this.#argumentsRead.get(kind);
    if (!known) {
      known = new Map();
      this.#argumentsRead.set(kind, known);
    }
    for (const arg in args) {
      if (args[arg] === undefined) continue;
      let read = known.get(arg);
      if (read === undefined) {
        // The key an argument sets: `x-message-ttl` -> message-ttl (exchanges: bare names), as withArguments reads it.
        const key = kind === 'exchange' ? arg : arg.startsWith('x-') ? arg.slice(2) : undefined;
        read =
          key !== undefined && argumentName(key, kind) === arg && !!argumentRule(key, kind, this.#version);
        known.set(arg, read);
      }
      if (read) return true;
    }
    return false;
  }

  /** The values an object uses (both layers, then its own arguments on top). */
  #inUse(eff: Effective, args: Readonly<Record<string, unknown>> | undefined, kind: ObjectKind) {
    if (args) return valuesOf(withArguments(eff, args, kind, this.#version));
    let v = this.#values.get(eff);
    if (!v) {
      v = Object.freeze(valuesOf(eff));
      this.#values.set(eff, v);
    }
    return v;
  }

  /** Risky keys the object really stops using: its own arguments (when it has some the rules read) may keep them. */
  #risks(
    kind: ObjectKind,
    t: Transition,
    args: Readonly<Record<string, unknown>> | undefined,
  ): readonly Risk[] {
    if (t.lost.length === 0) return NO_RISKS;
    const v = this.#version;
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

  #lostRisks(kind: ObjectKind, t: Transition, args: Readonly<Record<string, unknown>> | undefined): Risk[] {
    const v = this.#version;
    const found = new Set<Risk>();
    for (const key of t.lost) {
      const risk = riskOf(key, kind, v);
      if (!risk) continue;
      if (args && argumentRule(key, kind, v) && args[argumentName(key, kind)] !== undefined) continue;
      found.add(risk);
    }
    return RISKS.filter((r) => found.has(r));
  }

  #argumentNotes(
    o: InventoryObject,
    kind: ObjectKind,
    before: Effective,
    after: Effective,
    diff: KeyDiff,
  ): Record<string, ArgumentNote> | undefined {
    let out: Record<string, ArgumentNote> | undefined;
    // lost, gained and changed hold distinct keys.
    for (const key of [
      ...Object.keys(diff.lost),
      ...Object.keys(diff.gained),
      ...Object.keys(diff.changed),
    ]) {
      const rule = argumentRule(key, kind, this.#version);
      const argument = argumentName(key, kind);
      const argumentValue = o.arguments[argument];
      if (!rule || argumentValue === undefined) continue;
      const b = valueInUse(rule, key, argumentValue, before[key]?.value, this.#version);
      const a = valueInUse(rule, key, argumentValue, after[key]?.value, this.#version);
      out ??= {};
      out[key] = { argument, argumentValue, rule, before: b.value, after: a.value, holds: a.from };
    }
    return out;
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
    const after = this.#change.after;
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
