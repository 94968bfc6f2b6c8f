import { inScope } from '../core/index.ts';
import type { ImpactTotals } from '../policy/impact/index.ts';
import { totalsWords } from '../policy/impact/index.ts';
import { count } from '../text/index.ts';
import type { RefusalOf } from './errors.ts';
import { isSlackUserId } from './filing/approvers.ts';
import { MOVES } from './moves.ts';
import type { ChangeRequest, RequestState, WorkflowEnvironment } from './types.ts';

/**
 * The workflow's rules, pure: who may file, approve, reject and withdraw a change request, how
 * many approvals it needs, what needs a reason, which environment refuses, who may break the glass
 * (apply without approval) and who reviews it. Each check returns the refusal (its code and the
 * facts its sentence needs, errors.ts) or null. workflow.ts asks them on every path that files
 * or decides (the Slack forms, the commands, a Revert, a time box's approved revert); nothing
 * else decides these.
 */

/** The longest reason taken (to file or to decide): approvers read it, and 1,000 characters is a lot. */
export const MAX_REASON = 1000;

/** A refusal of a rule here. */
export type RuleRefusal = RefusalOf<
  | 'read-only-env'
  | 'vhost-outside'
  | 'reason-required'
  | 'reason-too-long'
  | 'self-approval'
  | 'not-approver'
  | 'already-approved'
  | 'not-requester'
  | 'freeze-not-approver'
  | 'freeze-too-long'
  | 'freeze-too-short'
  | 'loss-not-acknowledged'
  | 'break-glass-not-allowed'
  | 'break-glass-not-requester'
  | 'nothing-to-review'
  | 'self-review'
  | 'already-reviewed'
  | 'not-a-user'
  | 'revert-loss-on-the-way'
>;

/**
 * Whether `user` (the signed payload's `user.id`) may act at all: only a person files, approves,
 * rejects, breaks the glass, reviews or freezes. Slack never sends a group's id as a user's; a
 * payload that does is refused anyway, so a group id configured as an approver or a requester never
 * counts as one.
 */
export function actorRefusal(user: string): RuleRefusal | null {
  // Or a token of RMQ_API_TOKENS filing a set (`api:NAME`): only the bot's API route makes one,
  // and no Slack id holds a colon.
  return isSlackUserId(user) || /^api:[A-Za-z0-9_.-]{1,64}$/.test(user) ? null : { code: 'not-a-user' };
}

/** The longest freeze: a week. */
export const MAX_FREEZE_MS = 7 * 86_400_000;

/** What freezing or unfreezing depends on. */
export interface FreezeFacts {
  readonly env: string;
  /** Whether the user is among the environment's approvers. */
  readonly isApprover: boolean;
  /** The reason, trimmed. */
  readonly reason: string;
  /** How long (a freeze; undefined: an unfreeze). */
  readonly forMs?: number;
}

/** Whether the user may freeze (or, without `forMs`, unfreeze) the environment: approvers only, with a reason, for more than zero and at most a week. */
export function freezeRefusal(f: FreezeFacts): RuleRefusal | null {
  if (!f.isApprover) return { code: 'freeze-not-approver', env: f.env };
  if (!f.reason) return REASON_REQUIRED.decision;
  const long = reasonTooLong(f.reason);
  if (long) return long;
  if (f.forMs !== undefined && f.forMs <= 0) return { code: 'freeze-too-short', forMs: f.forMs };
  if (f.forMs !== undefined && f.forMs > MAX_FREEZE_MS)
    return { code: 'freeze-too-long', forMs: f.forMs, maxMs: MAX_FREEZE_MS };
  return null;
}

/** What filing depends on. */
export interface FileFacts {
  readonly env: Pick<WorkflowEnvironment, 'name' | 'mode'>;
  /** The broker operation (a revert is one of these), or a change set (`import`). */
  readonly action: 'create' | 'edit' | 'delete' | 'import';
  /** The requester's reason, trimmed; undefined or '': none. */
  readonly reason: string | undefined;
}

/** Whether the environment takes changes in this vhost (its `vhosts`): asked before the broker is. */
export function vhostRefusal(
  env: Pick<WorkflowEnvironment, 'name' | 'vhosts'>,
  vhost: string,
): RuleRefusal | null {
  return inScope(env, vhost)
    ? null
    : { code: 'vhost-outside', env: env.name, vhosts: env.vhosts ?? [], vhost };
}

/**
 * Whether the environment takes writes at all: a read-only one refuses every path that could write,
 * each time it is taken (filing, asked before the broker is; an approval, a break-glass, a review's
 * revert; and the apply job again before it writes), since the mode may have changed since the
 * step before (a bot restarted with `RMQ_MODE=read-only`). `notDone`: what the refusal says did not happen.
 */
export function environmentRefusal(
  env: FileFacts['env'],
  notDone: RefusalOf<'read-only-env'>['notDone'] = 'filed',
): RuleRefusal | null {
  return env.mode === 'read-only' ? { code: 'read-only-env', env: env.name, notDone } : null;
}

/**
 * Whether a request may be filed. A delete, and every change in a guarded environment, needs a
 * reason; no reason is longer than MAX_REASON; a read-only environment takes none.
 */
export function fileRefusal(f: FileFacts): RuleRefusal | null {
  const env = environmentRefusal(f.env);
  if (env) return env;
  // A delete and a set (which may delete, and is many changes at once) always need a reason.
  if (!f.reason)
    return f.action === 'delete' || f.action === 'import' || f.env.mode === 'guarded'
      ? REASON_REQUIRED.change
      : null;
  return reasonTooLong(f.reason);
}

/** Who may file in an environment: its requesters (user and group ids; none: anyone). */
export interface RequesterFacts {
  readonly env: string;
  readonly requesters: readonly string[];
  /** Whether the user is among them, directly or through a group (not asked when there are none). */
  readonly isRequester: boolean;
  /** The environment's approvers, named in the refusal as the people to ask. */
  readonly approvers: readonly string[];
  /**
   * The user files the revert of a break-glass change they review (reviewRefusal let them: an
   * approver of the environment, the notice offers them Revert): who may ask does not apply.
   */
  readonly reviewing?: boolean;
}

/**
 * Whether the user may file change requests at all: asked before anything is previewed or a form
 * opens. The environment's requesters (none: anyone), and an approver reverting a break-glass change
 * in its review.
 */
export function requesterRefusal(f: RequesterFacts): RuleRefusal | null {
  if (f.requesters.length === 0 || f.isRequester || f.reviewing) return null;
  return { code: 'not-requester', env: f.env, requesters: f.requesters, approvers: f.approvers };
}

/** Approvals a request needs; a request filed before the rule existed needs one. */
export function approvalsNeeded(r: Pick<ChangeRequest, 'approvalsRequired'>): number {
  return r.approvalsRequired ?? 1;
}

/** The approvals a request has, in the order given. */
export function approvalsOf(r: Pick<ChangeRequest, 'approvals'>): NonNullable<ChangeRequest['approvals']> {
  return r.approvals ?? [];
}

/** Whether `user` has approved the request already (an approver counts once). */
export function hasApproved(r: Pick<ChangeRequest, 'approvals'>, user: string): boolean {
  return approvalsOf(r).some((a) => a.by === user);
}

/**
 * Who the decider is to the request: its requester, an approver of its environment, or neither.
 * The caller asks the approver directory only when the decider is not the requester.
 */
export type DeciderRole = 'requester' | 'approver' | 'other';

/** What deciding depends on. */
export interface DecideFacts extends LossFacts {
  readonly kind: 'approve' | 'reject';
  readonly role: DeciderRole;
  /** The request's environment. */
  readonly env: string;
  /** The decider's reason, trimmed. */
  readonly reason: string;
  /** Whether the decider approved this request already (hasApproved). */
  readonly alreadyApproved?: boolean;
  /** The environment's mode now (read-only: no approval may be given; a rejection writes nothing). */
  readonly mode: WorkflowEnvironment['mode'];
}

/**
 * Whether a decision may be taken. Every decision needs a reason (at most MAX_REASON). The
 * requester may withdraw (reject) their own request but never approve it; anyone else deciding,
 * either way, must be among the environment's approvers; an approver's approval counts once (the
 * store's Lua script holds the same rule atomically, for two clicks on two replicas); an approval
 * of a change that removes messages or deletes queues must acknowledge that loss.
 */
export function decideRefusal(f: DecideFacts): RuleRefusal | null {
  if (!f.reason) return REASON_REQUIRED.decision;
  const long = reasonTooLong(f.reason);
  if (long) return long;
  if (f.role === 'requester') return f.kind === 'approve' ? { code: 'self-approval' } : null;
  if (f.role !== 'approver') return { code: 'not-approver', env: f.env };
  if (f.kind !== 'approve') return null;
  const closed = environmentRefusal({ name: f.env, mode: f.mode }, 'decided');
  if (closed) return closed;
  if (f.alreadyApproved) return { code: 'already-approved' };
  return lossRefusal(f, 'approve');
}

/** The loss a change was previewed with and whether it was acknowledged (an approval, a break-glass). */
export interface LossFacts {
  /** The loss in words (messages removed, queues deleted; impactWords.ts `lossToAcknowledge`); null: none. */
  readonly loss?: string | null;
  /** Whether the user ticked the acknowledgement of that loss. */
  readonly acknowledgedLoss?: boolean;
}

/**
 * Whoever makes a change that removes messages or deletes queues happen (an approver approving it,
 * its requester breaking the glass) accepts that loss explicitly, in numbers: break-glass skips the
 * approver, never the knowledge of what the change destroys.
 */
export function lossRefusal(f: LossFacts, by: 'approve' | 'break-glass'): RuleRefusal | null {
  return f.loss && !f.acknowledgedLoss ? { code: 'loss-not-acknowledged', loss: f.loss, by } : null;
}

/** What breaking the glass depends on: on a pending request (its Break glass button) or at filing (`--break-glass`). */
export interface BreakGlassFacts extends LossFacts {
  readonly env: string;
  /** Whether the environment allows break-glass now (its config, never the request's message). */
  readonly allowed: boolean;
  /** Who the user is to the request (at filing: its requester). */
  readonly role: DeciderRole;
  /** The break-glass reason, trimmed. */
  readonly reason: string;
  /** The environment's mode now: a read-only one refuses break-glass as it refuses an approval. */
  readonly mode: WorkflowEnvironment['mode'];
}

/**
 * Whether the user may apply a change without an approval: only where the environment allows
 * break-glass, only the request's requester (anyone else decides through the approval), always
 * with a reason (at most MAX_REASON), since an approver reviews it afterwards, and with the loss it
 * was previewed with acknowledged, as an approval would (lossRefusal).
 */
export function breakGlassRefusal(f: BreakGlassFacts): RuleRefusal | null {
  const closed = environmentRefusal({ name: f.env, mode: f.mode }, 'applied');
  if (closed) return closed;
  if (!f.allowed) return { code: 'break-glass-not-allowed', env: f.env };
  if (f.role !== 'requester') return { code: 'break-glass-not-requester' };
  if (!f.reason) return REASON_REQUIRED.breakGlass;
  return reasonTooLong(f.reason) ?? lossRefusal(f, 'break-glass');
}

/** What reviewing a break-glass change depends on. */
export interface ReviewFacts {
  readonly env: string;
  /** Who the reviewer is to the change: who broke the glass counts as its requester. */
  readonly role: DeciderRole;
  readonly reason: string;
  /** The request's break-glass and review, and its state. */
  readonly request: Pick<ChangeRequest, 'breakGlass' | 'review' | 'state'>;
}

/**
 * Whether the user may review a break-glass change: one applied without approval, not yet
 * reviewed, by an approver of its environment other than who broke the glass, with a reason.
 */
export function reviewRefusal(f: ReviewFacts): RuleRefusal | null {
  const r = f.request;
  if (!takesReview(r)) return { code: 'nothing-to-review', state: r.state };
  if (r.review) return { code: 'already-reviewed', by: r.review.by, at: r.review.at };
  if (f.role === 'requester') return { code: 'self-review' };
  if (f.role !== 'approver') return { code: 'not-approver', env: f.env };
  if (!f.reason) return REASON_REQUIRED.decision;
  return reasonTooLong(f.reason);
}

/**
 * Who gave a time box's revert together with its change (`--for`): the change's approver (its
 * decision), or, for a change applied by break-glass, who broke the glass (the time box was part of
 * what they applied; break-glass records no decision, even after some of the approvals). Null: the
 * change was applied through neither. The revert is then taken through the same rule again
 * (decideRefusal, breakGlassRefusal), as the environment and its approvers are now.
 */
export type TimeBoxRevertAuthority = {
  readonly kind: 'approval' | 'break-glass';
  readonly by: string;
  readonly reason: string;
};

export function timeBoxRevertAuthority(
  r: Pick<ChangeRequest, 'decision' | 'breakGlass'>,
): TimeBoxRevertAuthority | null {
  if (r.breakGlass) return { kind: 'break-glass', by: r.breakGlass.by, reason: r.breakGlass.reason };
  if (r.decision?.kind === 'approve')
    return { kind: 'approval', by: r.decision.by, reason: r.decision.reason };
  return null;
}

/** What the plan of a time-boxed set's revert says its way does that its end state does not (the plan's `transitional`). */
export interface RevertWayFacts {
  /** Objects a state on the revert's way harms (messages removed, a queue deleted, a target missing). */
  readonly objects: number;
  /** What those states remove, summed. */
  readonly totals: ImpactTotals;
}

/**
 * Whether a time-boxed set's revert may be written as approved with the set. The approver of a
 * `--for` approved going back to the state before the change: the revert's end state, and what it
 * costs, is that approval's, as a single change's revert is (applied at the deadline whatever its
 * end state removes: it restores the state the approver saw as it was). A loss on the revert's
 * way is not: a set is written one policy at a time, and where the planner finds no order that
 * spares every object on the way, that loss must be acknowledged in numbers like any other (an
 * automatic write nobody watches must not cost what nobody agreed to). Its numbers depend on the messages at the deadline, so nobody saw them when the
 * change was approved: such a revert is filed for a new approval (as one whose policies changed
 * since), showing its figures, never written on an approval that did not cover them. Any harm on
 * the way counts, a missing dead-letter target too: nobody watches an automatic write.
 */
export function revertWayRefusal(f: RevertWayFacts): RuleRefusal | null {
  if (f.objects === 0) return null;
  const loss =
    totalsWords(f.totals) ?? `a dead-letter or alternate target missing for ${count(f.objects, 'object')}`;
  return { code: 'revert-loss-on-the-way', loss };
}

/**
 * Whether a freeze of its environment holds the request's apply: every request's but a break-glass
 * change's, the one exception the freeze makes (its requester applies it now, and an approver
 * reviews it afterwards).
 */
export function freezeHolds(r: Pick<ChangeRequest, 'breakGlass'>): boolean {
  return r.breakGlass === undefined;
}

/** What the held order compares: when a request was approved (its decision, else its last move) and its id. */
type Approved = Pick<ChangeRequest, 'decision' | 'updatedAt' | 'id'>;

/** Approval order, who goes first after a freeze: when the request was approved, then its id for a tie. */
export function approvalOrder(a: Approved, b: Approved): number {
  const at = (r: Approved) => Date.parse(r.decision?.at ?? r.updatedAt);
  return at(a) - at(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Whether a request a freeze held must wait its turn now that the freeze is over: another request
 * of its environment, held too and approved before it, is among `unfinished` (approved or
 * applying). So held requests are applied one at a time in approval order, whatever the workers'
 * concurrency.
 */
export function waitsItsTurn(
  r: Pick<ChangeRequest, 'held' | 'env'> & Approved,
  unfinished: readonly (Pick<ChangeRequest, 'held' | 'env'> & Approved)[],
): boolean {
  if (!r.held) return false;
  return unfinished.some(
    (o) => o.id !== r.id && o.env === r.env && o.held !== undefined && approvalOrder(o, r) < 0,
  );
}

/** The state in which a break-glass change takes its review: applied (the move `finish`). */
export const REVIEWED_IN: RequestState = MOVES.finish.to;

/** A break-glass change on its way (moved by `breakGlass`, then `start`) or applied: it is reviewed. */
const UNREVIEWED_IN: readonly RequestState[] = [MOVES.breakGlass.to, MOVES.start.to, REVIEWED_IN];

/**
 * Whether a change is unreviewed: applied without approval (or on its way to it), and no approver
 * has reviewed it yet. The one definition: the store keeps such a change in its unreviewed set,
 * `requests` lists it as unreviewed, its message says so. Failed or stale, nothing was changed,
 * and nothing is left to review.
 */
export function awaitsReview(r: Pick<ChangeRequest, 'breakGlass' | 'review' | 'state'>): boolean {
  return r.breakGlass !== undefined && r.review === undefined && UNREVIEWED_IN.includes(r.state);
}

/** Whether a break-glass change is where a review is taken (REVIEWED_IN), reviewed already or not. */
export function takesReview(r: Pick<ChangeRequest, 'breakGlass' | 'state'>): boolean {
  return r.breakGlass !== undefined && r.state === REVIEWED_IN;
}

const REASON_REQUIRED = {
  change: { code: 'reason-required', for: 'change' },
  decision: { code: 'reason-required', for: 'decision' },
  breakGlass: { code: 'reason-required', for: 'break-glass' },
} as const satisfies Record<string, RuleRefusal>;

function reasonTooLong(reason: string): RuleRefusal | null {
  return reason.length > MAX_REASON
    ? { code: 'reason-too-long', length: reason.length, max: MAX_REASON }
    : null;
}
