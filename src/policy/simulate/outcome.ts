import { commonDiff, isEmptyDiff, type KeyDiff } from '../effective.ts';
import { whyUnreadable } from '../policyIndex.ts';
import { keyHasEffect, RISKS, type Risk } from '../risks.ts';
import type { ObjectKind } from '../types.ts';
import {
  beforeOf,
  type ChangeContext,
  type LayerChoice,
  names,
  otherChoice,
  type Reading,
  type Step,
  sameNames,
} from './objectStep.ts';
import type { InventoryObject, ObjectOutcome } from './simulationTypes.ts';
import { diffKeys, NO_RISKS, type StepValues, type ValueStep } from './stepValues.ts';

/**
 * One object's outcome from its step (objectStep.ts): nothing when nothing moved; else what it
 * loses, gains and changes, its risks, and, after a tie, what each candidate would give and only
 * what all agree on; with the notes on ties and unreadable patterns in either layer.
 */

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** The values in use under every pair of candidates but the assumed one (the first of each layer). */
function tieValues(
  values: StepValues,
  changed: Step['after']['candidates'],
  other: LayerChoice,
  args: InventoryObject['arguments'] | undefined,
  kind: ObjectKind,
): Readonly<Record<string, unknown>>[] {
  const others = other.candidates ?? [other.policy ?? undefined];
  const out: Readonly<Record<string, unknown>>[] = [];
  (changed.length ? changed : [undefined]).forEach((e, i) => {
    others.forEach((p, j) => {
      if (i + j > 0)
        out.push(values.inUse(values.effective(e?.policy.definition, p?.definition), args, kind));
    });
  });
  return out;
}

export function outcomeOf(
  ctx: ChangeContext,
  values: StepValues,
  o: InventoryObject,
  kind: ObjectKind,
  step: Step,
  r: Reading,
): ObjectOutcome | null {
  const { after } = step;
  const layer = ctx.change.layer;
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
    reported === undefined || after.candidates.length > 1 ? beforeOf(ctx, step, kind, r) : undefined;
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
        : ctx.changed.before.byName.get(reported)
      : before?.candidates[0];
  const beforeTie = reported === undefined && (before?.candidates.length ?? 0) > 1;
  const afterTie = after.candidates.length > 1;
  const changedNames = ctx.changedNames;
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

  const other = otherChoice(ctx, o, kind, r);
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
  const effBefore = values.effective(beforeEntry?.policy.definition, otherDefinition);
  const args = o.arguments;
  // The arguments, when the rules read one of them (see StepValues.readsArguments).
  const readArgs = values.readsArguments(args, kind) ? args : undefined;
  let primary: ValueStep;
  let diff: KeyDiff;
  let risks: readonly Risk[];
  let possibleRisks: readonly Risk[] = NO_RISKS;
  let ifCandidate: Record<string, KeyDiff> | undefined;
  if (!afterTie) {
    const winner = after.candidates[0];
    primary = values.step(effBefore, values.effective(winner?.policy.definition, otherDefinition));
    diff = primary.diff;
    if (!beforeTie && winner?.name === beforeEntry?.name && isEmptyDiff(diff)) return null;
    risks = values.risks(kind, primary, readArgs);
  } else {
    const perCandidate = after.candidates.map((e) => {
      const t = values.step(effBefore, values.effective(e.policy.definition, otherDefinition));
      return { entry: e, t, risks: values.risks(kind, t, readArgs) };
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
  const beforeChoice =
    beforeTie && before
      ? { policy: null, candidates: names(before.candidates) }
      : values.chosen(beforeTie ? null : (beforeEntry?.name ?? null));
  const afterChoice = afterTie
    ? { policy: null, candidates: names(after.candidates) }
    : values.chosen(after.candidates[0]?.name ?? null);
  const unchangedLayer = other.candidates
    ? {
        layer: layer === 'user' ? ('operator' as const) : ('user' as const),
        policy: null,
        candidates: other.candidates.map((p) => p.name),
        source: other.source,
      }
    : values.otherLayer(other.policy?.name ?? null, other.source);
  const keptByOperator =
    layer === 'user' && primary.keptByOperator.length ? (primary.keptByOperator as string[]) : undefined;
  const argNotes = readArgs ? values.argumentNotes(o, kind, effBefore, primary.after, diff) : undefined;
  const inUseAssumed = readArgs
    ? { before: values.inUse(effBefore, readArgs, kind), after: values.inUse(primary.after, readArgs, kind) }
    : values.sharedInUse(primary, effBefore, kind);
  // A tie in either layer: a state of a sequence (sequence.ts) is every pair the broker may pick,
  // not the one the values assume, or a state would seem to differ by which layer moved last.
  const inUse =
    afterTie || other.candidates
      ? { ...inUseAssumed, tie: tieValues(values, after.candidates, other, readArgs, kind) }
      : inUseAssumed;
  // Built key by key rather than with conditional spreads: the order of the keys is the --json's,
  // and a broad change builds 19,000 of these (bench/preview).
  const outcome = {
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
  if (possibleRisks.length) outcome.possibleRisks = possibleRisks as Risk[];
  const noEffect = diffKeys(diff).filter((k) => keyHasEffect(k, kind, ctx.version) === false);
  if (noEffect.length) outcome.noEffect = noEffect;
  if (newTie) outcome.newTie = true;
  if (r.caught) outcome.unanchoredCatch = true;
  if (notes.length) outcome.notes = notes;
  return outcome;
}
