import type { ChangeEntry, ChangeRecord, Observation } from '../../audit/index.ts';
import { maskUris } from '../../core/index.ts';
import {
  isParameterSetStep,
  type SetStep,
  setRecordId,
  stepAction,
  stepsOf,
  undoLinks,
} from '../changeSet.ts';
import { approvalsOf } from '../rules.ts';
import type { ChangeRequest } from '../types.ts';
import type { Prepared } from './applyOne.ts';

/**
 * What an apply writes in the audit trail, step by step (applySet.ts `finish`): a set's step, its
 * undo (or that the rollback left it), and a single change's one record, each with the request's requester, approvers and
 * break-glass. The record ids are made here: a retry that appends again finds the same id.
 */

/** A step's record id: a single change's is the request's (`a-` + its id), a set's adds the step's place. */
const entryId = (r: ChangeRequest, i: number) => (r.set ? setRecordId(r.id, i) : `a-${r.id}`);

function baseEntry(r: ChangeRequest, steps: readonly SetStep[], i: number) {
  const step = steps[i] as SetStep;
  return {
    env: r.env,
    vhost: step.vhost,
    policy: step.name,
    operator: !isParameterSetStep(step) && step.layer === 'operator',
    requestId: r.id,
    requester: r.requester,
    ...approversOf(r),
    requestedAt: r.createdAt,
    ...(r.decision ? { approvedAt: r.decision.at } : {}),
    ...breakGlassOf(r),
    ...(r.set ? { set: { id: r.id, index: i, size: steps.length } } : {}),
    objects: [],
    unpredictable: 0,
  };
}

/** What a step's record says it did: a set's step its own action; a single change as it was asked for (a revert, or the create, edit or delete filed). */
function actionEntry(r: ChangeRequest, step: SetStep): Pick<ChangeEntry, 'action' | 'revertOf'> {
  if (r.set)
    return !isParameterSetStep(step) && step.revertOf
      ? { action: 'revert', revertOf: step.revertOf }
      : { action: stepAction(step) };
  return {
    action: r.action === 'import' ? stepAction(step) : r.action,
    ...(r.revertOf ? { revertOf: r.revertOf } : {}),
  };
}

export function stepEntry(r: ChangeRequest, steps: readonly SetStep[], i: number, at: string): ChangeEntry {
  const step = steps[i] as SetStep;
  return {
    ...baseEntry(r, steps, i),
    id: entryId(r, i),
    at,
    appliedAt: at,
    ...actionEntry(r, step),
    ...written(step, step.before, step.after),
    ...(step.links ? { links: step.links } : {}),
    ...(i === 0 && r.preview.summary.impact ? { impact: r.preview.summary.impact.totals } : {}),
  };
}

/** A single change's record: its step's, with what its fresh preview found and the broker then showed. */
export function oneEntry(
  r: ChangeRequest,
  prepared: Prepared,
  matchedPreview: boolean,
  observed: Observation | undefined,
  at: string,
): ChangeEntry {
  return {
    ...stepEntry(r, stepsOf(r), 0, at),
    objects: prepared.objects ?? [],
    unpredictable: prepared.unpredictable ?? 0,
    matchedPreview,
    ...(observed ? { observed } : {}),
  };
}

export function undoEntry(r: ChangeRequest, steps: readonly SetStep[], i: number, at: string): ChangeEntry {
  const step = steps[i] as SetStep;
  return {
    ...baseEntry(r, steps, i),
    id: `${entryId(r, i)}-undo`,
    at,
    appliedAt: at,
    action: 'revert',
    revertOf: entryId(r, i),
    ...written(step, step.after, step.before),
    ...(step.links ? { links: undoLinks(step.links) } : {}),
  };
}

/**
 * A step the rollback left as someone else changed it (applySet.ts `rollBack`): no undo was
 * written, and the record says so. `before` is what the rollback would have restored (the policy
 * as the set found it), `after` what the broker held, left as it is (`holds`).
 */
export function leftEntry(
  r: ChangeRequest,
  steps: readonly SetStep[],
  i: number,
  holds: unknown,
  at: string,
): ChangeEntry {
  const step = steps[i] as SetStep;
  return {
    ...baseEntry(r, steps, i),
    id: `${entryId(r, i)}-left`,
    at,
    action: 'left',
    ...written(step, step.before, holds),
  };
}

/**
 * What a record says was there before and after: a policy's fields, or a parameter's component
 * and values with every URI masked (`before`/`after` then null: the trail never holds a password).
 */
function written(
  step: SetStep,
  before: unknown,
  after: unknown,
): Pick<ChangeEntry, 'before' | 'after' | 'component' | 'value'> {
  if (isParameterSetStep(step))
    return {
      before: null,
      after: null,
      component: step.component,
      value: { before: maskUris(before ?? null), after: maskUris(after ?? null) },
    };
  return { before: before as ChangeEntry['before'], after: after as ChangeEntry['after'] };
}

/** The audit record's approvers: every approval in order (`approver` the first); a request decided before approvals were counted has its decision. */
function approversOf(r: ChangeRequest): Pick<ChangeRecord, 'approver' | 'approvers'> {
  const given = approvalsOf(r);
  const people = (given.length ? given : r.decision ? [r.decision] : []).map((a) => ({
    user: a.by,
    reason: a.reason,
  }));
  const [first] = people;
  return first ? { approver: first, approvers: people } : {};
}

/** A break-glass change's record says so: who applied it without approval, and why. */
function breakGlassOf(r: ChangeRequest): Pick<ChangeRecord, 'breakGlass'> {
  return r.breakGlass ? { breakGlass: { user: r.breakGlass.by, reason: r.breakGlass.reason } } : {};
}
