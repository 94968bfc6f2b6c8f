import type { ChangeRecord } from './types.ts';

/**
 * Who approved a recorded change, and who applied it by break-glass, in words: one home for the
 * terminal's and Slack's `history`. A break-glass change was applied without the approvals it
 * needed, so an approval it had before is listed as given before break-glass, never as "approved
 * by": those approvals did not make the change. `user` and `said` render an id and a user's reason as the surface does.
 */

type Words = (s: string) => string;

const withReason = (said: Words, reason: string | undefined) => (reason ? `: ${said(reason)}` : '');

/** The approvals a record holds (older records hold only `approver`). */
export function approvalsOfRecord(e: ChangeRecord): NonNullable<ChangeRecord['approvers']> {
  return e.approvers ?? (e.approver ? [e.approver] : []);
}

/** One line per approval the change had. */
export function approvalWords(e: ChangeRecord, user: Words, said: Words): string[] {
  return approvalsOfRecord(e).map((a) =>
    e.breakGlass
      ? `approval given before break-glass (not enough to apply) by ${user(a.user)}${withReason(said, a.reason)}`
      : `approved by ${user(a.user)}${withReason(said, a.reason)}`,
  );
}

/** Who applied it by break-glass and why, and how many of the approvals it had (without a prefix). */
export function breakGlassWords(e: ChangeRecord, user: Words, said: Words): string | undefined {
  const g = e.breakGlass;
  if (!g) return undefined;
  const had = approvalsOfRecord(e).length;
  const by = `by ${user(g.user)}`;
  const how =
    had === 0
      ? `applied without approval ${by}`
      : `applied by break-glass ${by}, with only ${had} approval${had === 1 ? '' : 's'} (fewer than needed)`;
  return `${how}${withReason(said, g.reason)}`;
}
