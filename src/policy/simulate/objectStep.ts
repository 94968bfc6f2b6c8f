import { scopeFits } from '../keys.ts';
import { type NameView, nameView, type PatternCache } from '../pattern/pattern.ts';
import { type IndexedPolicy, type PolicyIndex, type Scan, scan, whyUnreadable } from '../policyIndex.ts';
import type { BrokerVersion, ObjectKind, Policy } from '../types.ts';
import type { InventoryObject, PolicyChange, Unpredictable } from './simulationTypes.ts';

/**
 * Where one object stands in the changed layer before and after a change, and in the layer the
 * change leaves alone: from the broker's report when there is one (`byReport`), else the engine's
 * reading of both sides (`byEngine`). What the change touches not, is null; what the engine cannot
 * decide, a reason. The simulation (simulate.ts) asks this of every object it is fed.
 */

/** What a simulation reads every object against: built once per change, never changed after. */
export interface ChangeContext {
  readonly version: BrokerVersion;
  readonly change: PolicyChange;
  readonly cache: PatternCache;
  /** The changed layer as it is now, and as proposed (read through the current one's lists: one policy apart). */
  readonly changed: { readonly before: PolicyIndex; readonly after: PolicyIndex };
  /** The layer the change leaves alone. */
  readonly other: PolicyIndex;
  /** The changed policy's names, before and after. */
  readonly changedNames: ReadonlySet<string | undefined>;
}

/** Before is read only when needed (to tell a new tie from an old one). */
export interface Step {
  /** The engine's reading, or the policy the broker reports (its tie, if any, read from it). */
  readonly before: Scan | { readonly inForce: IndexedPolicy | undefined };
  readonly after: Scan;
}

export type StepResult = Step | { readonly why: string } | null;

export interface LayerChoice {
  readonly policy: Policy | null;
  readonly candidates?: Policy[];
  readonly source: 'broker' | 'engine';
  readonly undecided?: string;
}

const COLLECT_PENDING = { collectPending: true } as const;

export const names = (entries: readonly IndexedPolicy[]): string[] => entries.map((e) => e.name);

export function sameNames(a: readonly IndexedPolicy[], b: readonly IndexedPolicy[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(names(a));
  return b.every((e) => set.has(e.name));
}

/**
 * One object being read, passed to what reads it: its name, its view (made on first use: most
 * names are told apart by their literal prefix alone), whether the view collects what waits for
 * the backtracking engine, what it found unpredictable (kept only if it is not parked), and
 * whether the unanchored proposed pattern caught it.
 */
export class Reading {
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

/** A queue type this bot does not know: reached by the change means unpredictable. */
export function unknownKind(ctx: ChangeContext, o: InventoryObject, r: Reading): void {
  const { before, after, layer } = ctx.change;
  const reaches = (p: Policy | null) =>
    p !== null && scopeFits(p.applyTo, null) && ctx.cache.get(p.pattern).match(r.view) !== false;
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
 * The changed layer with the broker's report: `reported` is the policy in force now.
 * Returns null when the change does not touch the object.
 */
export function byReport(
  ctx: ChangeContext,
  kind: ObjectKind,
  r: Reading,
  reported: string | null,
): StepResult {
  const { name } = r;
  const { before: B, after: A } = ctx.changed;
  const oldName = ctx.change.before?.name;
  const oldGoverns = oldName !== undefined && reported === oldName;
  const next = ctx.change.after ? A.applicable(ctx.change.after.name, kind) : undefined;
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
export function byEngine(ctx: ChangeContext, kind: ObjectKind, r: Reading): StepResult {
  const { name } = r;
  const { before: B, after: A } = ctx.changed;
  const old = ctx.change.before ? B.applicable(ctx.change.before.name, kind) : undefined;
  const next = ctx.change.after ? A.applicable(ctx.change.after.name, kind) : undefined;
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
export function beforeOf(ctx: ChangeContext, step: Step, kind: ObjectKind, r: Reading): Scan {
  if ('candidates' in step.before) return step.before;
  const { inForce } = step.before;
  return inForce
    ? scan(ctx.changed.before.candidatesFor(kind, r.name), r.view, (e) =>
        e.priority !== inForce.priority ? false : e === inForce ? true : undefined,
      )
    : { candidates: [], undecided: [] };
}

/** The object's choice in the layer the change leaves alone. */
export function otherChoice(
  ctx: ChangeContext,
  o: InventoryObject,
  kind: ObjectKind,
  r: Reading,
): LayerChoice {
  const reported = ctx.change.layer === 'user' ? o.operatorPolicy : o.policy;
  if (reported !== undefined) {
    const p = reported === null ? null : (ctx.other.byName.get(reported)?.policy ?? null);
    return { policy: p, source: 'broker' };
  }
  const s = scan(ctx.other.candidatesFor(kind, o.name), r.view);
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
