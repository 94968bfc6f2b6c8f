import type { PreviewAnswer } from '../../preview/index.ts';
import type { ChangeSet } from '../changeSet.ts';
import { newRequestId } from '../store.ts';
import type { ChangeRequest, Origin, PreviewSnapshot, RequestAction, WorkflowEnvironment } from '../types.ts';

/** How a request is filed beyond its input: as a revert (of an audit record), under a given id. */
export interface Filing {
  readonly action: RequestAction;
  readonly revertOf?: string;
  /** The stale request it files again (`fileAgain`). */
  readonly againOf?: string;
  /** The time box's approved revert, and a request filed again, have an id derived from another's. */
  readonly id?: string;
  readonly approvalsChannel?: string | undefined;
  /**
   * A time box's revert, asked for with its change: who may ask was checked when the change was
   * filed, so a requester removed from `requesters` since does not leave the change in place.
   */
  readonly askedWithChange?: true;
  /** A break-glass change's revert, filed by the approver reviewing it (rules.ts `requesterRefusal`). */
  readonly reviewing?: true;
  /** A user's revert of `revertOf`: one open at a time (the store's claim), another refused `already-filed`. */
  readonly claim?: true;
}

/** A set is filed as an import unless it is a revert. */
export type SetFiling = Omit<Filing, 'action'> & { readonly action?: 'revert' };

/** What the request changes and who asks: the part a single change and a set fill differently. */
export interface RequestContent {
  readonly vhost: string;
  readonly layer: ChangeRequest['layer'];
  readonly policy: string;
  readonly before: ChangeRequest['before'];
  readonly after: ChangeRequest['after'];
  readonly set?: ChangeSet;
  readonly preview: PreviewSnapshot;
  readonly requester: { readonly user: string; readonly reason?: string | undefined };
  readonly origin: Origin;
  readonly timeBoxMs?: number | undefined;
}

/**
 * The new request, pending, as filing stores it: the one place its record is put together, for a
 * single change and a set alike (its id, deadline, approvals needed and channel from the
 * environment and the filing).
 */
export function newRequest(
  env: WorkflowEnvironment,
  filing: Filing,
  content: RequestContent,
  created: Date,
): ChangeRequest {
  const approvalsChannel = 'approvalsChannel' in filing ? filing.approvalsChannel : env.approvalsChannel;
  const reason = content.requester.reason;
  return {
    id: filing.id ?? newRequestId(),
    env: env.name,
    vhost: content.vhost,
    layer: content.layer,
    action: filing.action,
    policy: content.policy,
    before: content.before,
    after: content.after,
    ...(content.set ? { set: content.set } : {}),
    preview: content.preview,
    requester: { user: content.requester.user, ...(reason ? { reason } : {}) },
    origin: content.origin,
    ...(approvalsChannel ? { approvalsChannel } : {}),
    state: 'pending',
    approvalsRequired: env.approvalsRequired ?? 1,
    createdAt: created.toISOString(),
    expiresAt: new Date(created.getTime() + env.requestTtlMs).toISOString(),
    updatedAt: created.toISOString(),
    ...(filing.revertOf ? { revertOf: filing.revertOf } : {}),
    ...(filing.againOf ? { againOf: filing.againOf } : {}),
    ...(content.timeBoxMs !== undefined ? { timeBoxMs: content.timeBoxMs } : {}),
    ...(env.breakGlass ? { breakGlassOffered: true } : {}),
  };
}

/** What a single change's request keeps of its preview. */
export function snapshotOf(p: PreviewAnswer): PreviewSnapshot {
  return {
    brokerVersion: p.brokerVersion,
    summary: p.summary,
    warnings: p.warnings,
    diff: p.diff,
    objects: p.objects.length,
    unpredictable: p.unpredictable.length,
    ...(p.unread?.length ? { unread: p.unread } : {}),
  };
}
