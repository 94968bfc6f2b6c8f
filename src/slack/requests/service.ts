import type { Logger } from '../../log/index.ts';
import type { Policy } from '../../policy/index.ts';
import { acceptedApplyTo } from '../../policy/index.ts';
import type {
  ChangeRequest,
  Filed,
  FiledSet,
  Origin,
  ReviewInput,
  ReviewResult,
  Workflow,
} from '../../workflow/index.ts';
import { isWorkflowError, refusalSentence, type WorkflowError } from '../../workflow/index.ts';
import type { Delivery, Sent } from '../delivery.ts';
import type { SlackBroker } from '../environments.ts';
import { SLACK_LIMITS } from '../limits.ts';
import type { AttachedFile } from '../slackCalls.ts';
import { setFile } from '../views/changeSet.ts';
import {
  type Draft,
  encodeMeta,
  noticeModal,
  policyForm,
  type ReasonMeta,
  reasonForm,
} from '../views/forms.ts';
import { previewView } from '../views/preview.ts';
import { requestMessage } from '../views/request.ts';
import { slackRefusal } from '../views/requestRefusals.ts';

/**
 * Filing change requests from Slack, for the commands (`create`, `edit`, `delete`), the forms
 * and the Revert button alike: the workflow files (validation, preview, identity, store), then
 * the request is posted to the approvals channel (the environment's, else
 * SLACK_APPROVALS_CHANNEL, else where it was asked) with the full object list attached in its
 * thread when the summary does not show every object, and the message is recorded on the
 * request so every later state updates it in place.
 */

export type FileOutcome =
  | { readonly ok: true; readonly request: ChangeRequest; readonly approvals: string; readonly posted: Sent }
  | { readonly ok: false; readonly error: WorkflowError };

export interface ChangeRequests {
  readonly workflow: Workflow;
  /** Posts a change set filed through the API (`Workflow.fileSet`) to its approvals channel, its whole list attached. */
  postSet(request: ChangeRequest): Promise<FileOutcome>;
  /** Files `draft` for `user`; posts the request to its approvals channel. */
  file(draft: Draft, user: string, reason: string | undefined): Promise<FileOutcome>;
  /** Files again a request gone stale on a bigger loss, and posts it for its approvers (`Workflow.fileAgain`). */
  fileAgain(stale: ChangeRequest): Promise<FileOutcome>;
  /** An approver's review of a break-glass change; a revert it files is posted like any request. */
  review(
    id: string,
    input: ReviewInput,
  ): Promise<
    | { readonly ok: true; readonly result: ReviewResult }
    | { readonly ok: false; readonly error: WorkflowError }
  >;
  /** Files a request restoring the before state of audit record `auditId` (of a set's record: the whole set). */
  revert(auditId: string, user: string, origin: Origin, reason: string): Promise<FileOutcome>;
  /** Files the re-creation of a policy (`Workflow.recreate`: deleted, then created again as it is) for `user`. */
  recreate(
    target: {
      env: string;
      vhost: string;
      policy: string;
      origin: Origin;
      breakGlass?: boolean | undefined;
    },
    user: string,
    reason: string,
  ): Promise<FileOutcome>;
  /** Opens the policy form of a create or an edit (prefilled with the policy as it is). */
  openPolicyForm(draft: Draft, triggerId: string): Promise<Sent>;
  /** Opens the form that asks the requester for the reason `why` says is required. */
  openReasonForm(meta: ReasonMeta, why: string, triggerId: string): Promise<Sent>;
}

export interface ChangeRequestsOptions {
  readonly workflow: Workflow;
  readonly delivery: Delivery;
  /** The Slack-path broker clients, by environment: the form reads the version and the policy. */
  readonly brokers: ReadonlyMap<string, SlackBroker>;
  readonly logger: Logger;
}

export function createChangeRequests(options: ChangeRequestsOptions): ChangeRequests {
  const { workflow, delivery, logger } = options;

  /** A single change with its preview's object list attached; a set with its whole list of changes. */
  async function post(filed: Filed | FiledSet | { request: ChangeRequest }): Promise<FileOutcome> {
    if ('preview' in filed && filed.preview)
      return postRequest(filed.request, previewView(filed.preview).file);
    const { set } = filed.request;
    return postRequest(filed.request, set ? setFile({ ...filed.request, set }) : undefined);
  }

  async function postRequest(request: ChangeRequest, file: AttachedFile | undefined): Promise<FileOutcome> {
    const approvals = request.approvalsChannel ?? request.origin.channel;
    const message = requestMessage(request, { fileAttached: file !== undefined });
    const posted = await delivery.call('chat.postMessage', {
      channel: approvals,
      text: message.text,
      blocks: message.blocks,
      unfurl_links: false,
      unfurl_media: false,
    });
    const log = logger.child({ requestId: request.id, env: request.env, vhost: request.vhost });
    if (posted.ok && posted.ts) {
      try {
        await workflow.attachMessage(request.id, posted.channel ?? approvals, posted.ts);
      } catch (err) {
        log.error({ err }, 'the approvals message could not be recorded on the request');
      }
      if (file) {
        const attached = await delivery
          .toChannel({ channel: posted.channel ?? approvals, threadTs: posted.ts })
          .attach(file);
        if (!attached.ok) log.warn({ error: attached.error }, 'the full object list was not attached');
      }
      log.info({ approvals, ts: posted.ts }, 'change request filed and posted');
    } else {
      log.error(
        { error: posted.ok ? 'no ts' : posted.error, approvals },
        'the approvals message was not posted',
      );
    }
    return { ok: true, request, approvals, posted };
  }

  async function filing(
    work: () => Promise<Filed | FiledSet | { request: ChangeRequest }>,
  ): Promise<FileOutcome> {
    try {
      return await post(await work());
    } catch (err) {
      if (isWorkflowError(err)) {
        logger.info({ code: err.code, refused: err.message }, 'change request refused');
        return { ok: false, error: err };
      }
      throw err;
    }
  }

  async function load(
    draft: Draft,
  ): Promise<{ applyTo: ReturnType<typeof acceptedApplyTo>; current: Policy | null }> {
    const broker = options.brokers.get(draft.env);
    if (!broker) throw new Error(`no broker client for environment ${draft.env}`);
    const [{ version }, policies] = await Promise.all([
      broker.overview(),
      draft.layer === 'operator'
        ? broker.listOperatorPolicies(draft.vhost)
        : broker.listPolicies(draft.vhost),
    ]);
    return {
      applyTo: acceptedApplyTo(version),
      current: policies.find((p) => p.name === draft.policy) ?? null,
    };
  }

  return {
    workflow,
    postSet: (request) =>
      postRequest(request, request.set ? setFile({ ...request, set: request.set }) : undefined),
    file: (draft, user, reason) =>
      filing(() =>
        workflow.file({
          env: draft.env,
          vhost: draft.vhost,
          layer: draft.layer,
          action: draft.action,
          policy: draft.policy,
          fields: draft.fields,
          requester: { user, ...(reason ? { reason } : {}) },
          origin: draft.origin,
          ...(draft.timeBoxMs === undefined ? {} : { timeBoxMs: draft.timeBoxMs }),
          ...(draft.breakGlass ? { breakGlass: true } : {}),
        }),
      ),
    fileAgain: (stale) => filing(() => workflow.fileAgain(stale.id)),
    async review(id, input) {
      try {
        const result = await workflow.review(id, input);
        if (result.revert) await post(result.revert);
        return { ok: true, result };
      } catch (err) {
        if (isWorkflowError(err)) {
          logger.info({ code: err.code, refused: err.message }, 'review refused');
          return { ok: false, error: err };
        }
        throw err;
      }
    },
    revert: (auditId, user, origin, reason) =>
      filing(() => workflow.revertRequestFor(auditId, user, origin, reason)),
    recreate: (target, user, reason) =>
      filing(() =>
        workflow.recreate({
          env: target.env,
          vhost: target.vhost,
          policy: target.policy,
          requester: { user, reason },
          origin: target.origin,
          ...(target.breakGlass ? { breakGlass: true } : {}),
        }),
      ),

    async openPolicyForm(draft, triggerId) {
      const title = draft.action === 'edit' ? 'Edit policy' : 'Create policy';
      // The trigger lasts 3 s: open at once, then fill the form in once the broker answered.
      const opened = await delivery.call('views.open', {
        trigger_id: triggerId,
        view: noticeModal(title, ':hourglass_flowing_sand: Reading the policy and the broker’s version…'),
      });
      if (!opened.ok) return opened;
      const viewId = (opened.response?.view as { id?: unknown } | undefined)?.id;
      if (typeof viewId !== 'string') return { ok: false, error: 'no_view_id' };
      let view: ReturnType<typeof policyForm>;
      try {
        const { applyTo, current } = await load(draft);
        if (draft.action === 'edit' && !current) {
          view = noticeModal(title, `:warning: ${slackRefusal('no-such-policy')}`);
        } else if (draft.action === 'create' && current) {
          view = noticeModal(title, `:warning: ${slackRefusal('name-taken')}`);
        } else {
          view = policyForm({ draft, applyTo, initial: current });
        }
      } catch (err) {
        logger.warn({ err }, 'the policy form could not be filled');
        view = noticeModal(title, `:x: ${refusalSentence({ code: 'broker-not-asked', why: 'unreachable' })}`);
      }
      return delivery.call('views.update', { view_id: viewId, view });
    },

    async openReasonForm(meta, why, triggerId) {
      if (encodeMeta(meta).length > SLACK_LIMITS.privateMetadata)
        return { ok: false, error: 'metadata_too_long' };
      return delivery.call('views.open', { trigger_id: triggerId, view: reasonForm(meta, why) });
    },
  };
}
