import type { ChangeRequest, DecisionKind } from './types.ts';

/**
 * The approval rules, pure: who may file, who may decide, and how many approvals a change
 * needs. Each refusal is a code (its sentence is the caller's view's, keyed by the code); the
 * facts come from the signed request's user and the stored request, never from a button's value.
 * The workflow applies them (workflow.ts); the store's Lua script (store.ts) holds the same
 * counting rule atomically, since two approvers on two replicas decide at the same moment.
 */

/** Approvals a request needs; a request filed before the rule existed needs one. */
export function approvalsNeeded(r: Pick<ChangeRequest, 'approvalsRequired'>): number {
  return r.approvalsRequired ?? 1;
}

/** Whether `user` has approved the request already (an approver counts once). */
export function hasApproved(r: Pick<ChangeRequest, 'approvals'>, user: string): boolean {
  return approvalsOf(r).some((a) => a.by === user);
}

/** The approvals a request has, in the order given. */
export function approvalsOf(r: Pick<ChangeRequest, 'approvals'>): NonNullable<ChangeRequest['approvals']> {
  return r.approvals ?? [];
}

export type FileRefusal = 'not-requester';

export interface FileFacts {
  /** The environment's requesters (user and group ids); empty: anyone may file. */
  readonly requesters: readonly string[];
  /** Whether the user is among them (directly or through a group); not asked when there are none. */
  readonly isRequester: boolean;
}

/** Why `user` may not file a change request, or undefined. */
export function fileRefusal(f: FileFacts): FileRefusal | undefined {
  if (f.requesters.length > 0 && !f.isRequester) return 'not-requester';
  return undefined;
}

export type DecideRefusal = 'reason-required' | 'self-approval' | 'not-approver' | 'already-approved';

export interface DecideFacts {
  readonly kind: DecisionKind;
  /** The signed request's user. */
  readonly user: string;
  /** The reason typed, trimmed. */
  readonly reason: string;
  readonly request: Pick<ChangeRequest, 'requester' | 'approvals'>;
  /** Whether `user` is among the environment's approvers. */
  readonly isApprover: boolean;
}

/**
 * Why this decision is refused, or undefined. Every decision needs a reason; the requester may
 * withdraw (reject) their own request but never approve it; anyone else must be an approver;
 * an approver counts once.
 */
export function decideRefusal(f: DecideFacts): DecideRefusal | undefined {
  if (!f.reason) return 'reason-required';
  const own = f.user === f.request.requester.user;
  if (f.kind === 'approve' && own) return 'self-approval';
  if (!own && !f.isApprover) return 'not-approver';
  if (f.kind === 'approve' && hasApproved(f.request, f.user)) return 'already-approved';
  return undefined;
}
