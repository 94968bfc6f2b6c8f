import { type SetCursor, type SetProgress, type SetStep, undoneCount } from '../changeSet.ts';
import type { ChangeRequest, Failure } from '../types.ts';

/**
 * What the request and its message say of an apply, the edge where a single change (a set of one
 * filed as one change, no `set`) reads differently from a set; the apply itself (applySet.ts) does
 * not ask which it runs:
 *
 * - the steps' progress while writing and at the end: a single change's message has no steps to
 *   show (a rollback waiting is told either way: `progressOf`);
 * - a failure's words: a single change says the broker's reason alone (the job's tries counted);
 *   a set, how far it got too (one job try: its steps are saved, not tried again);
 * - gone stale: a single change's Notifier is shown the change previewed again.
 */

/** A change filed as one change, not a set: its records, failure and notices are its own. */
export const filedAsOne = (r: ChangeRequest): boolean => r.set === undefined;

/** The steps' progress, told while writing (`retrying`: why the apply waits); none for a single change. */
export function writingProgress(
  r: ChangeRequest,
  size: number,
  c: SetCursor,
  now: Date,
  retrying?: string,
  unknown?: readonly number[],
): SetProgress | undefined {
  return filedAsOne(r) ? undefined : progressOf(size, c, retrying, now, unknown);
}

/** The last state's `setProgress`, absent for a single change. */
export function endProgress(r: ChangeRequest, size: number, c: SetCursor, now: Date) {
  const setProgress = writingProgress(r, size, c, now);
  return setProgress ? { setProgress } : {};
}

/** Why the apply failed or was refused, in the words its kind of request says it. */
export function endFailure(
  r: ChangeRequest,
  steps: readonly SetStep[],
  c: SetCursor,
  attempts: number,
  at: string,
): Failure {
  const because = c.because;
  const one = filedAsOne(r);
  return {
    code: because?.code ?? 'internal',
    message:
      one && because
        ? `${because.message}${c.left?.length ? '; the policy was changed outside this request meanwhile, and left as found' : ''}`
        : `${because?.message ?? 'the set was rolled back'}: ${outcomeWords(steps, c)}`,
    ...(because?.status !== undefined ? { status: because.status } : {}),
    attempts: one ? attempts : 1,
    at,
  };
}

/** How far a set got, in words: written, rolled back, and each step left as someone else changed it. */
export function outcomeWords(steps: readonly SetStep[], c: SetCursor): string {
  const left = c.left ?? [];
  const names = left.map((l) => steps[l.step]?.name ?? `step ${l.step + 1}`).join(', ');
  return `${c.written} of ${steps.length} steps written, ${undoneCount(c)} rolled back${left.length ? `, ${left.length} left as changed outside this request (${names})` : ''}`;
}

export function progressOf(
  size: number,
  c: SetCursor,
  retrying: string | undefined,
  now: Date,
  unknown?: readonly number[],
): SetProgress {
  return {
    size,
    written: c.written,
    undone: c.undone,
    ...(c.left?.length ? { left: c.left } : {}),
    ...(unknown?.length ? { unknown: [...unknown] } : {}),
    ...(retrying ? { retrying: { why: retrying, at: now.toISOString() } } : {}),
  };
}
