import type { RequestState } from './types.ts';

/**
 * A change request's life: every state move it can make, by name. The store's Lua scripts take
 * their from-states and to-state from this table (store.ts), and a caller names a move, never a
 * (from, to) of its own; a move not named here is refused by the store. docs/change-requests.md
 * ("A request's life") lists the same table, and test/unit/workflow-moves.test.ts holds the two
 * together.
 *
 * Filed, a request is `pending`. Then (each arrow a move of MOVES, by its name; the unit test
 * holds this drawing to the table):
 *
 *   pending --approve, breakGlass, approveWithChange--> approved --start--> applying --finish--> applied
 *   pending --reject--> rejected             applying --fail--> failed
 *   pending --expire--> expired              applying --markStale--> stale
 *   applying --progress--> applying          approved, applying --refuse--> failed
 */

/** How a move out of `pending` treats the request's deadline (`expiresAt`). */
export type DeadlineRule =
  /** Past the deadline the move is refused and the request expires instead (the script answers `expired`). */
  | 'refuse'
  /** The move happens only past the deadline: it is the deadline's own move. */
  | 'only-past'
  /** Not asked. */
  | 'none';

export interface Move {
  readonly from: readonly RequestState[];
  readonly to: RequestState;
  readonly deadline: DeadlineRule;
}

export const MOVES = {
  /** The approval that makes the number needed (store.approve; the earlier ones only count). */
  approve: { from: ['pending'], to: 'approved', deadline: 'refuse' },
  /** Applied by its requester without approval (store.breakGlass); reviewed afterwards. */
  breakGlass: { from: ['pending'], to: 'approved', deadline: 'refuse' },
  /**
   * A time box's revert, approved with its change (`Workflow.approveTimeBoxRevert`, timeboxDeadline.ts): filed and approved in the
   * same breath at the time box's end, so its own deadline has not come.
   */
  approveWithChange: { from: ['pending'], to: 'approved', deadline: 'none' },
  /** Rejected by an approver, or withdrawn by its requester. */
  reject: { from: ['pending'], to: 'rejected', deadline: 'refuse' },
  /** Undecided past its deadline (the sweep; or found so by any other move out of pending). */
  expire: { from: ['pending'], to: 'expired', deadline: 'only-past' },
  /** The apply job begins. */
  start: { from: ['approved'], to: 'applying', deadline: 'none' },
  /** A change set's progress recorded while it applies (or rolls back): the state stays. */
  progress: { from: ['applying'], to: 'applying', deadline: 'none' },
  /** Written, verified and recorded in the audit trail. */
  finish: { from: ['applying'], to: 'applied', deadline: 'none' },
  /** The write failed for good (a 4xx, or the retries ran out). */
  fail: { from: ['applying'], to: 'failed', deadline: 'none' },
  /** A rule refuses the write now (rules.ts: the environment takes no writes), before or while applying. */
  refuse: { from: ['approved', 'applying'], to: 'failed', deadline: 'none' },
  /** The broker is not what was approved: nothing (more) is written. */
  markStale: { from: ['applying'], to: 'stale', deadline: 'none' },
} as const satisfies Record<string, Move>;

export type MoveName = keyof typeof MOVES;

/** The move of that name; undefined for any other string (a caller cannot make up a move). */
export function moveNamed(name: string): Move | undefined {
  return Object.hasOwn(MOVES, name) ? MOVES[name as MoveName] : undefined;
}

/** Whether the move `name` may leave from `state` (a caller asking before it tries; the store decides). */
export function leavesFrom(name: MoveName, state: RequestState): boolean {
  return (MOVES[name].from as readonly RequestState[]).includes(state);
}
