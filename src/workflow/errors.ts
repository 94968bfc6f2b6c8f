import { CodedError, outsideScope } from '../core/index.ts';
import type { PreviewResult } from '../preview/index.ts';
import type { ChangeRequest } from './types.ts';

/**
 * Why the workflow refused: each code with the facts it carries, and the one sentence a person
 * reads for it (Slack shows it as written, logs carry it with the code and the facts). The
 * rules that decide most of these are in rules.ts; the rest are the broker's and Redis's.
 */
export type WorkflowRefusal =
  /** `env` names no configured environment. */
  | { readonly code: 'unknown-env'; readonly env: string | undefined; readonly known: readonly string[] }
  /** A revert asked for with no place to answer: the environment has no approvals channel. */
  | { readonly code: 'no-approvals-channel'; readonly env: string }
  /** The vhost is not among the environment's `vhosts` (RMQ_VHOSTS). */
  | {
      readonly code: 'vhost-outside';
      readonly env: string;
      readonly vhosts: readonly string[];
      readonly vhost: string;
    }
  /** The environment is `read-only`: no writes at all (`notDone`: what did not happen). */
  | {
      readonly code: 'read-only-env';
      readonly env: string;
      readonly notDone: 'filed' | 'decided' | 'applied';
    }
  /** A change (a delete, or any write in a `guarded` environment), a decision or a break-glass without a reason. */
  | { readonly code: 'reason-required'; readonly for: 'change' | 'decision' | 'break-glass' }
  /** A reason longer than MAX_REASON (rules.ts). */
  | { readonly code: 'reason-too-long'; readonly length: number; readonly max: number }
  /** The bot's broker identity cannot write policies in this vhost (`reason`: the broker's words). */
  | { readonly code: 'identity-cannot-write'; readonly reason: string }
  /** The change is invalid (`details.preview.refusals`, each with its `field`). */
  | { readonly code: 'preview-refused'; readonly refusals: readonly string[] }
  /** The broker could not be asked (`why`: the client's code; `detail`: what it said). */
  | { readonly code: 'broker-not-asked'; readonly why: string; readonly detail?: string | undefined }
  /** Redis could not be reached; `notDone` says what did not happen ("nothing was filed"). */
  | { readonly code: 'store-unavailable'; readonly notDone: string }
  /** No such request or audit record. */
  | {
      readonly code: 'not-found';
      readonly what: 'change request' | 'audit record' | 'applied change set';
      readonly id: string;
    }
  /** The requester tried to approve their own request. */
  | { readonly code: 'self-approval' }
  /** The user is not among the environment's approvers. */
  | { readonly code: 'not-approver'; readonly env: string }
  /** Only an environment's approvers freeze and unfreeze it. */
  | { readonly code: 'freeze-not-approver'; readonly env: string }
  /** A freeze longer than MAX_FREEZE_MS (rules.ts). */
  | { readonly code: 'freeze-too-long'; readonly forMs: number; readonly maxMs: number }
  /** A freeze is in force already: it is never replaced, only lifted or run out. */
  | { readonly code: 'already-frozen'; readonly env: string; readonly until: string; readonly by: string }
  /** A freeze of zero (or less): it would end as it began. */
  | { readonly code: 'freeze-too-short'; readonly forMs: number }
  /** The approver approved this request already: one approver counts once. */
  | { readonly code: 'already-approved' }
  /** The change removes messages or deletes queues and the approval does not acknowledge it (`loss`: in words). */
  | { readonly code: 'loss-not-acknowledged'; readonly loss: string; readonly by: 'approve' | 'break-glass' }
  /** The user is not among the environment's requesters: who may ask and who may approve (user and group ids). */
  | {
      readonly code: 'not-requester';
      readonly env: string;
      readonly requesters: readonly string[];
      readonly approvers: readonly string[];
    }
  /** The environment does not allow break-glass (`breakGlass.allowed`, RMQ_BREAK_GLASS). */
  | { readonly code: 'break-glass-not-allowed'; readonly env: string }
  /** Only a request's requester may break the glass on it. */
  | { readonly code: 'break-glass-not-requester' }
  /** Not a break-glass change that was applied (`state`: what it is): nothing to review. */
  | { readonly code: 'nothing-to-review'; readonly state: string }
  /** Who broke the glass cannot review their own change. */
  | { readonly code: 'self-review' }
  /** Another approver reviewed the change first. */
  | { readonly code: 'already-reviewed'; readonly by: string; readonly at: string }
  /** The signed payload's user is not a person (a user group's id, `S…`): refused for every act. */
  | { readonly code: 'not-a-user' }
  /**
   * A time-boxed set's revert would harm an object on its way in every order of writing (`loss`: in
   * words), which the approval of the change did not acknowledge (rules.ts `revertWayRefusal`).
   */
  | { readonly code: 'revert-loss-on-the-way'; readonly loss: string }
  /** The broker already has exactly this change. */
  | { readonly code: 'nothing-to-do' }
  /** A request filed once per other (a break-glass change's revert, a time box's) was filed already, as `id`. */
  | { readonly code: 'already-filed'; readonly id: string };

export type WorkflowErrorCode = WorkflowRefusal['code'];
export type RefusalOf<C extends WorkflowErrorCode> = Extract<WorkflowRefusal, { code: C }>;

/** The sentence of each refusal: one per code, so a new code without one does not compile. */
const SENTENCES: { readonly [C in WorkflowErrorCode]: (facts: RefusalOf<C>) => string } = {
  'unknown-env': (f) =>
    `That environment is not configured on this bot (it knows ${f.known.join(', ')}). Nothing was filed.`,
  'no-approvals-channel': (f) =>
    `Environment ${f.env} has no approvals channel to answer in. Nothing was filed.`,
  'vhost-outside': (f) => outsideScope({ name: f.env, vhosts: f.vhosts }, f.vhost) ?? '',
  'read-only-env': (f) =>
    `The environment ${f.env} is read-only: the bot changes no policy there. Nothing was ${f.notDone}.`,
  'reason-required': (f) =>
    f.for === 'decision'
      ? 'A reason is required: say why, for the audit trail.'
      : f.for === 'break-glass'
        ? 'A break-glass reason is required: it is posted to the approvals channel, and an approver reviews it.'
        : 'A reason is required: for every delete, and for every change in a guarded environment.',
  'reason-too-long': (f) =>
    `The reason is ${f.length} characters; at most ${f.max}. Nothing was filed or decided.`,
  'identity-cannot-write': () =>
    "The bot's broker identity may not write policies here, so nothing was filed. The broker says:",
  'preview-refused': () => 'The change was refused before anything was filed:',
  'broker-not-asked': () => 'The broker could not be asked, so nothing was filed. Try again when it answers.',
  'store-unavailable': (f) =>
    `The request store (Redis) cannot be reached: ${f.notDone}. Try again in a moment.`,
  'not-found': (f) => `There is no ${f.what} ${f.id}.`,
  'self-approval': () => 'You filed this request: another approver must decide it.',
  'not-approver': (f) => `You are not among the approvers of environment ${f.env}: nothing was decided.`,
  'freeze-not-approver': (f) =>
    `Only the approvers of environment ${f.env} may freeze or unfreeze it: nothing changed.`,
  'already-frozen': (f) =>
    `Environment ${f.env} is frozen already (by ${f.by}, until ${f.until}): \`unfreeze\` it first, or freeze again when it ends. Nothing changed.`,
  'freeze-too-long': () => 'A freeze lasts at most a week (--for 7d): nothing changed.',
  'freeze-too-short': () =>
    'A freeze must last more than zero (--for 2h; at most --for 7d): nothing changed.',
  'already-approved': () =>
    'You already approved this request: another approver must give the next approval.',
  'loss-not-acknowledged': (f) =>
    f.by === 'break-glass'
      ? `This change removes data (${f.loss}): tick the acknowledgement to apply it. Nothing was applied.`
      : `This change removes data (${f.loss}): tick the acknowledgement to approve it. Nothing was approved.`,
  'not-requester': (f) =>
    `You may not file change requests in environment ${f.env}: nothing was filed or posted.`,
  'break-glass-not-allowed': (f) =>
    `Environment ${f.env} does not allow break-glass: the change needs an approval. Nothing was applied.`,
  'break-glass-not-requester': () =>
    'Only the requester may break the glass on a request: approve or reject it instead. Nothing was applied.',
  'nothing-to-review': (f) =>
    `There is nothing to review: this is not a break-glass change that was applied (it is ${f.state}).`,
  'self-review': () => 'You broke the glass on this change: another approver must review it.',
  'already-reviewed': (f) =>
    `This change was already reviewed (by ${f.by} at ${f.at}): nothing was recorded.`,
  'not-a-user': () =>
    'This did not come from a Slack user (a user group never files, approves or reviews as itself): nothing was done.',
  'revert-loss-on-the-way': (f) =>
    `Restoring the set would cost ${f.loss} on the way, in every order of writing; the approval of the time-boxed change did not acknowledge that, so the revert needs a new approval. Nothing was written.`,
  'nothing-to-do': () =>
    'The broker already has exactly this: there is nothing to change. Nothing was filed.',
  'already-filed': (f) => `This was filed already, as request ${f.id}: nothing more was filed.`,
};

/** What a person reads for `refusal`. */
export function refusalSentence(refusal: WorkflowRefusal): string {
  return (SENTENCES[refusal.code] as (f: WorkflowRefusal) => string)(refusal);
}

export interface WorkflowErrorDetails {
  /** For `preview-refused` and `broker-not-asked`. */
  readonly preview?: PreviewResult;
  readonly request?: ChangeRequest;
}

export class WorkflowError extends CodedError<WorkflowErrorCode> {
  override readonly name = 'WorkflowError';
  readonly code: WorkflowErrorCode;
  constructor(
    /** The code and its facts; the message is its sentence. */
    readonly refusal: WorkflowRefusal,
    readonly details: WorkflowErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(refusalSentence(refusal), options);
    this.code = refusal.code;
  }
}

/**
 * The one rule for Redis trouble in the request store or the audit trail: `call`'s failure,
 * unless it is already a refusal, becomes `store-unavailable`, saying what was not done
 * (`nothing was filed`, `nothing was read`…). `onFailure` sees the original error (to log it).
 */
export async function orStoreUnavailable<T>(
  notDone: string,
  call: () => Promise<T>,
  onFailure?: (err: unknown) => void,
): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof WorkflowError) throw err;
    onFailure?.(err);
    throw storeUnavailable(notDone, err);
  }
}

/** `store-unavailable`: the request store or the audit trail cannot be used; `notDone` says what did not happen. */
export function storeUnavailable(notDone: string, cause?: unknown): WorkflowError {
  return new WorkflowError({ code: 'store-unavailable', notDone }, {}, cause === undefined ? {} : { cause });
}

export function isWorkflowError(e: unknown, code?: WorkflowErrorCode): e is WorkflowError {
  return e instanceof WorkflowError && (code === undefined || e.code === code);
}

/** For what is filed once per other request: one filed already (by another replica, a retry) is what was wanted. */
export function orFiledAlready(err: unknown): undefined {
  if (err instanceof WorkflowError && err.code === 'already-filed') return undefined;
  throw err;
}
