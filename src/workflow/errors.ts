import { CodedError } from '../errors.ts';
import type { PreviewResult } from '../preview/preview.ts';
import type { ChangeRequest } from './types.ts';

/**
 * Why the workflow refused. Each code has one sentence chosen by the caller's view; `message`
 * is for logs and the terminal.
 */
export const WORKFLOW_ERROR_CODES = [
  /** `env` names no configured environment. */
  'unknown-env',
  /** The environment is `read-only`: no writes at all. */
  'read-only-env',
  /** A delete, or any write in a `guarded` environment, needs the requester's reason (or: a decision needs one). */
  'reason-required',
  /** The bot's broker identity cannot write policies in this vhost (`reason`: the broker's words). */
  'identity-cannot-write',
  /** The change is invalid (`details.preview.refusals`, each with its `field`). */
  'preview-refused',
  /** The broker could not be asked (`details.preview.why`). */
  'broker-not-asked',
  /** Redis could not be reached: nothing was stored. */
  'store-unavailable',
  /** No such request or audit record. */
  'not-found',
  /** The requester tried to approve their own request. */
  'self-approval',
  /** The user is not among the environment's approvers. */
  'not-approver',
  /** A revert of a record whose before state is already on the broker, or a request not in a state for this. */
  'nothing-to-do',
] as const;
export type WorkflowErrorCode = (typeof WORKFLOW_ERROR_CODES)[number];

export interface WorkflowErrorDetails {
  /** For `preview-refused` and `broker-not-asked`. */
  readonly preview?: PreviewResult;
  /** For `identity-cannot-write`: what the broker said (or the missing tag/permission). */
  readonly reason?: string;
  readonly request?: ChangeRequest;
}

export class WorkflowError extends CodedError<WorkflowErrorCode> {
  override readonly name = 'WorkflowError';
  constructor(
    readonly code: WorkflowErrorCode,
    message: string,
    readonly details: WorkflowErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isWorkflowError(e: unknown, code?: WorkflowErrorCode): e is WorkflowError {
  return e instanceof WorkflowError && (code === undefined || e.code === code);
}
