/**
 * Slack's ids, as the configuration and the workflow read them: a user (`U…`, or `W…` on
 * Enterprise Grid) or a user group (`S…`). Their one home, below both (the import graph's arrows).
 */

/** A Slack user's id: a person (`U…`, or `W…` on Enterprise Grid). */
export function isSlackUserId(id: string): boolean {
  return /^[UW][A-Z0-9]+$/.test(id);
}

/** A Slack user group's id (`S…`): a group approves or files through its members, never as itself. */
export function isSlackGroupId(id: string): boolean {
  return /^S[A-Z0-9]+$/.test(id);
}
