import { createHash } from 'node:crypto';
import { formatDuration, InputError, parseDuration } from '../../core/index.ts';
import type { Policy } from '../../policy/index.ts';
import { actionOf, samePolicy, type Transition } from '../../policy/index.ts';
import type { ChangeAction } from '../../policy/simulate/index.ts';
import { type PolicySetStep, setRecordId, stepKey, transitionOf } from '../changeSet.ts';

/**
 * Time-boxed changes (`--for 2h` on create and edit): the rules, pure. The approver approves the
 * change and its revert together; at the deadline the before state comes back through the same
 * apply job, unless the policy was changed again meanwhile, which turns the revert into a request
 * that needs its own approval.
 */

/** The shortest and longest time box. */
export const MIN_TIMEBOX_MS = 10_000;
export const MAX_TIMEBOX_MS = 7 * 24 * 3_600_000;
/** The warning in the request's thread comes this long before the deadline. */
export const WARNING_BEFORE_MS = 10 * 60_000;

export const FOR_HINT = 'Example: --for 30m, --for 2h (at most a week: --for 7d).';

/** `--for TEXT` -> milliseconds; refused with what to type. Create, edit and import (a set) take it. */
export function parseTimeBox(text: string, action: string): number {
  if (action !== 'create' && action !== 'edit' && action !== 'import') {
    throw new InputError(`--for is for create and edit: a ${action} is not undone at a deadline.`, {
      hint: 'File the delete without --for.',
    });
  }
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new InputError(`--for takes a duration such as 30m or 2h, got ${JSON.stringify(text)}.`, {
      hint: FOR_HINT,
    });
  if (ms < MIN_TIMEBOX_MS)
    throw new InputError(`--for ${text} is too short: at least ${formatDuration(MIN_TIMEBOX_MS)}.`, {
      hint: FOR_HINT,
    });
  if (ms > MAX_TIMEBOX_MS)
    throw new InputError(`--for ${text} is too long: at most a week (7d).`, { hint: FOR_HINT });
  return ms;
}

/** What restores the before state of an applied create or edit. */
export interface Revert {
  readonly action: ChangeAction;
  /** The policy as the change left it (what must still be there to revert without asking). */
  readonly applied: Policy;
  /** The policy to write back; null: delete the created one. */
  readonly restore: Policy | null;
}

export function revertOf(before: Policy | null, after: Policy): Revert {
  return { action: actionOf({ before: after, after: before }), applied: after, restore: before };
}

/**
 * The revert of a time-boxed set, as changes for the planner (src/plan/plan.ts `planChanges`):
 * every policy the set touched from `from(step)` back to its before state (created ones deleted),
 * those already back left out. In no order yet: the revert is planned like any set, against the
 * broker at the deadline. The reverse of the set's order is not enough: it passes through the same
 * states as the set did, but weighed against another end state and other messages (a queue empty
 * when the set was planned holds thousands at the deadline), so a state the set passed safely can
 * cut a queue on the way back.
 */
export function revertChanges(
  steps: readonly PolicySetStep[],
  from: (s: PolicySetStep) => Policy | null,
): Transition[] {
  // A policy the set wrote twice (re-created) goes back to what it was before the first of them.
  const first = new Map<string, PolicySetStep>();
  for (const s of steps) if (!first.has(stepKey(s))) first.set(stepKey(s), s);
  return [...first.values()].flatMap((s) => {
    const back = transitionOf(s).before;
    const now = from(s);
    return samePolicy(now, back)
      ? []
      : [{ layer: s.layer, vhost: s.vhost, name: s.name, before: now, after: back }];
  });
}

/** The revert's steps as planned, each naming the audit record of the set's step it undoes (`a-<set id>-<index>`). */
export function revertSteps(
  set: { readonly id: string; readonly steps: readonly PolicySetStep[] },
  planned: readonly PolicySetStep[],
): PolicySetStep[] {
  const index = new Map(set.steps.map((s, i) => [stepKey(s), i]));
  return planned.map((s) => ({ ...s, revertOf: setRecordId(set.id, index.get(stepKey(s)) as number) }));
}

/**
 * Where a time-boxed set stands at its deadline, from the policies the broker has now: every step
 * as the set left it (revert, approved with the set), every one back as before (nothing to do), or
 * anything else (one was changed since: ask).
 */
export function setRevertDecision(
  steps: readonly PolicySetStep[],
  current: (s: PolicySetStep) => Policy | null,
): RevertDecision {
  const states = steps.map((s) => {
    const t = transitionOf(s);
    const now = current(s);
    return samePolicy(now, t.before) ? 'before' : samePolicy(now, t.after) ? 'after' : 'other';
  });
  if (states.every((s) => s === 'before')) return { kind: 'done' };
  if (states.every((s) => s === 'after')) return { kind: 'revert' };
  const i = states.findIndex((s) => s !== 'after');
  const s = steps[i] as PolicySetStep;
  return {
    kind: 'ask',
    why: `policy ${s.name} of the set (vhost ${s.vhost}) was ${current(s) === null ? 'deleted' : 'changed again'} since the change`,
  };
}

export type RevertDecision =
  /** The policy is as the change left it: revert, already approved. */
  | { readonly kind: 'revert' }
  /** It changed again since (by the bot or outside it): ask for a new approval. */
  | { readonly kind: 'ask'; readonly why: string }
  /** Nothing to do: the before state is already there. */
  | { readonly kind: 'done' };

export function revertDecision(r: Revert, current: Policy | null): RevertDecision {
  if (samePolicy(current, r.restore)) return { kind: 'done' };
  if (samePolicy(current, r.applied)) return { kind: 'revert' };
  return {
    kind: 'ask',
    why:
      current === null
        ? 'the policy was deleted since the change'
        : 'the policy was changed again since the change',
  };
}

export interface TimeBoxSchedule {
  readonly deadline: Date;
  /** When to warn in the thread; null when the box is shorter than the warning. */
  readonly warnAt: Date | null;
}

export function scheduleOf(appliedAt: Date, forMs: number): TimeBoxSchedule {
  const deadline = new Date(appliedAt.getTime() + forMs);
  const warn = deadline.getTime() - WARNING_BEFORE_MS;
  return { deadline, warnAt: warn > appliedAt.getTime() ? new Date(warn) : null };
}

/** The id of the approved revert of request `id`: the same on every replica and every retry. */
export function revertRequestId(id: string): string {
  return derivedRequestId('timebox-revert', id);
}

/** A request id derived from another's, for what is filed once per request (a revert, a refiling). */
export function derivedRequestId(why: string, id: string): string {
  return `r-${createHash('sha256').update(`${why}:${id}`).digest('hex').slice(0, 20)}`;
}
