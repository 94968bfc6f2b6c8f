import type {
  AckFn,
  App,
  BlockAction,
  ButtonAction,
  ViewResponseAction,
  ViewSubmitAction,
} from '@slack/bolt';
import * as z from 'zod';
import type { Logger } from '../../log/index.ts';
import type { ChangeRequest } from '../../workflow/index.ts';
import {
  hasApproved,
  isWorkflowError,
  refusalSentence,
  storeUnavailable,
  WorkflowError,
} from '../../workflow/index.ts';
import type { Delivery } from '../delivery.ts';
import type { InFlight } from '../inflight.ts';
import type { HandledInteractions } from '../interactions.ts';
import { VIEW_BUDGET } from '../limits.ts';
import {
  BLOCK,
  blockOfField,
  DraftSchema,
  decisionForm,
  FORMS,
  noticeModal,
  PATTERN_TYPED,
  parseDecisionMeta,
  parseDraft,
  parseMeta,
  parseReasonMeta,
  readLossAcknowledged,
  readPolicyForm,
  readReasonForm,
  UNREADABLE_FORM,
  withPatternHint,
} from '../views/forms.ts';
import type { SlackMessage } from '../views/message.ts';
import { RECREATE_BUTTON, RecreateTargetSchema } from '../views/recreate.ts';
import { alreadyDecidedView, filedView, REQUEST_BUTTONS } from '../views/request.ts';
import { OPEN_FORM } from '../views/requestPrompts.ts';
import { refusalText, requestRefusedView, slackRefusal } from '../views/requestRefusals.ts';
import { registerBreakGlassInteractions } from './breakGlass.ts';
import type { ChangeRequests, FileOutcome } from './service.ts';

/**
 * The buttons and forms of change requests (block_actions and view_submission, at
 * POST /slack/events like every Slack request):
 *
 * - Approve / Reject on the request message open the decision form; its reason is required
 *   (an empty one is refused inline and nothing happens); the decision is the workflow's one
 *   atomic move (counting approvals when the environment needs several). Whoever loses a race
 *   (another approver, another replica) is told who decided and when, ephemerally. A refused
 *   decision (self-approval, not an approver, already approved) is said inline; a second
 *   Approve click by the same approver is refused before the form opens.
 * - Revert on an audit diff asks the reason, then files a new request (its own approval).
 * - The policy form and the reason form file the request; what the validation refuses is shown
 *   on the field it is about (`response_action: errors`) and nothing is filed.
 * - "Open the form" (a mention's answer) opens a form with the click's trigger.
 *
 * Slack waits 3 s for a form's acknowledgement. Filing runs the preview, which on a large vhost
 * may take longer: after `ACK_WITHIN_MS` the form says it is working, and the outcome is posted
 * where the request came from instead of inline.
 */

export const ACK_WITHIN_MS = 2500;

export interface RequestInteractionsDeps {
  readonly changes: ChangeRequests;
  readonly delivery: Delivery;
  readonly logger: Logger;
  readonly inFlight: InFlight;
}

const OpenFormValue = z.object({ form: z.enum(['policy', 'reason']), draft: DraftSchema });

type Ack = AckFn<ViewResponseAction>;

function errorsAck(ack: Ack, errors: Record<string, string>): Promise<void> {
  return ack({ response_action: 'errors', errors });
}

/** Inline errors a form can show for a refusal, by block; `null` when the form cannot fix it. */
function policyFormErrors(err: WorkflowError): Record<string, string> | null {
  if (err.code === 'reason-required' || err.code === 'reason-too-long')
    return { [BLOCK.reason]: err.message };
  if (err.code === 'nothing-to-do') return { [BLOCK.definition]: err.message };
  const p = err.details.preview;
  if (err.code === 'preview-refused' && p?.status === 'refused') {
    const errors: Record<string, string> = {};
    for (const r of p.refusals) {
      const block = blockOfField(r.field);
      errors[block] = errors[block] ? `${errors[block]} ${r.message}` : r.message;
    }
    for (const [k, v] of Object.entries(errors)) errors[k] = v.slice(0, VIEW_BUDGET.formError);
    return errors;
  }
  return null;
}

export function registerRequestInteractions(app: App, deps: RequestInteractionsDeps): HandledInteractions {
  const { changes, delivery, logger } = deps;
  const { workflow } = changes;

  const tell = (channel: string | undefined, user: string, message: SlackMessage) =>
    channel
      ? delivery.toChannel({ channel, user }).tellAsker(message)
      : delivery.call('chat.postMessage', { channel: user, text: message.text, blocks: message.blocks });

  /** After a request was filed from a form: the origin is told, for everyone there. */
  async function announce(outcome: FileOutcome & { ok: true }, user: string): Promise<void> {
    const { request, approvals, posted } = outcome;
    const sent = await delivery
      .toChannel({ channel: request.origin.channel, threadTs: request.origin.threadTs, user })
      .send(filedView(request, approvals, posted), 'channel');
    if (!sent.ok) {
      logger.warn(
        { error: sent.error, requestId: request.id },
        'the filed notice was not posted where asked',
      );
      await tell(request.origin.channel, user, filedView(request, approvals, posted));
    }
  }

  /**
   * Files from a form: acknowledged with the outcome when it comes within ACK_WITHIN_MS (inline
   * errors, or the form closed and the request announced), else acknowledged as working and the
   * outcome told where the request came from.
   */
  async function submitFiling(
    ack: Ack,
    user: string,
    channel: string,
    work: () => Promise<FileOutcome>,
    errorsFor: (err: WorkflowError) => Record<string, string> | null,
  ): Promise<void> {
    const pending = deps.inFlight.track(
      work().then(
        (o) => ({ o }),
        (error: unknown) => ({ error }),
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const first = await Promise.race([
      pending,
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), ACK_WITHIN_MS);
      }),
    ]);
    clearTimeout(timer);
    if (first === null) {
      await ack({
        response_action: 'update',
        view: noticeModal(
          'Change request',
          ':hourglass_flowing_sand: Previewing and filing… the outcome is posted where you asked.',
        ),
      });
    }
    const done = first ?? (await pending);
    if ('error' in done) {
      logger.error({ err: done.error }, 'filing from a form failed');
      const sentence = slackRefusal('internal');
      if (first !== null)
        await ack({ response_action: 'update', view: noticeModal('Not filed', `:x: ${sentence}`) });
      else await tell(channel, user, { text: sentence, blocks: [] });
      return;
    }
    const outcome = done.o;
    if (outcome.ok) {
      if (first !== null) await ack();
      await announce(outcome, user);
      return;
    }
    const errors = errorsFor(outcome.error);
    if (first !== null) {
      if (errors) return errorsAck(ack, errors);
      const view = requestRefusedView(outcome.error);
      return ack({
        response_action: 'update',
        view: { ...noticeModal('Not filed', view.text), blocks: view.blocks },
      });
    }
    await tell(channel, user, requestRefusedView(outcome.error));
  }

  const decisionButton =
    (kind: 'approve' | 'reject') =>
    async ({ ack, body, action }: { ack: () => Promise<void>; body: BlockAction; action: ButtonAction }) => {
      await ack();
      const user = body.user.id;
      const channel = body.container?.channel_id ?? body.channel?.id;
      const log = logger.child({ requestId: action.value, user, kind });
      let request: ChangeRequest | undefined;
      try {
        request = await workflow.get(action.value ?? '');
      } catch (err) {
        log.warn({ err }, 'the request could not be read');
        await tell(channel, user, requestRefusedView(storeDown()));
        return;
      }
      if (!request) {
        await tell(channel, user, requestRefusedView(notFound(action.value ?? '')));
        return;
      }
      if (request.state === 'pending' && Date.parse(request.expiresAt) <= Date.now()) {
        // The sweep would get there; the click gets there first, and the message says so now.
        await workflow.expireDue().catch((err: unknown) => log.warn({ err }, 'expiring failed'));
        request = (await workflow.get(request.id).catch(() => undefined)) ?? request;
      }
      if (request.state !== 'pending' || Date.parse(request.expiresAt) <= Date.now()) {
        await tell(channel, user, alreadyDecidedView(request));
        return;
      }
      if (kind === 'approve' && hasApproved(request, user)) {
        // The form would only be refused: say it now. decide() checks it again, atomically.
        await tell(channel, user, requestRefusedView(new WorkflowError({ code: 'already-approved' })));
        return;
      }
      const opened = await delivery.call('views.open', {
        trigger_id: body.trigger_id,
        view: decisionForm(request, kind),
      });
      if (!opened.ok) log.warn({ error: opened.error }, 'the decision form did not open');
    };

  app.action<BlockAction<ButtonAction>>(REQUEST_BUTTONS.approve, decisionButton('approve'));
  app.action<BlockAction<ButtonAction>>(REQUEST_BUTTONS.reject, decisionButton('reject'));

  app.view<ViewSubmitAction>(FORMS.decision, async ({ ack, body, view }) => {
    const form = readReasonForm(view, parseDecisionMeta, 'button', 'decision');
    if ('errors' in form) return errorsAck(ack, form.errors);
    const { meta, reason } = form;
    const user = body.user.id;
    const log = logger.child({ requestId: meta.id, user, kind: meta.kind });
    let result: Awaited<ReturnType<typeof workflow.decide>>;
    try {
      const acknowledgedLoss = readLossAcknowledged(view.state.values as never);
      result = await workflow.decide(meta.id, { kind: meta.kind, user, reason, acknowledgedLoss });
    } catch (err) {
      if (isWorkflowError(err)) {
        log.info({ code: err.code }, 'decision refused');
        const block = err.code === 'loss-not-acknowledged' ? BLOCK.acknowledgeLoss : BLOCK.reason;
        return errorsAck(ack, { [block]: refusalText(err) });
      }
      log.error({ err }, 'decision failed');
      return errorsAck(ack, { [BLOCK.reason]: slackRefusal('internal') });
    }
    await ack();
    log.info({ outcome: result.outcome, state: result.request.state }, 'decision');
    if (result.outcome === 'already-decided' || result.outcome === 'expired') {
      await tell(
        result.request.message?.channel ?? result.request.approvalsChannel,
        user,
        alreadyDecidedView(result.request),
      );
    }
  });

  app.action<BlockAction<ButtonAction>>(REQUEST_BUTTONS.revert, async ({ ack, body, action }) => {
    await ack();
    const channel = body.container?.channel_id ?? body.channel?.id;
    const user = body.user.id;
    if (!channel) return;
    const container = body.container as { thread_ts?: string; message_ts?: string };
    const threadTs = container.thread_ts ?? container.message_ts;
    const opened = await changes.openReasonForm(
      { for: 'revert', auditId: action.value ?? '', origin: { channel, ...(threadTs ? { threadTs } : {}) } },
      'A revert is a new change request and needs its own approval: say why, approvers read it.',
      body.trigger_id,
    );
    if (!opened.ok) logger.warn({ error: opened.error, user }, 'the revert form did not open');
  });

  // "Re-create policy P" on a links answer or post: the clicking user's reason, then the request (theirs).
  app.action<BlockAction<ButtonAction>>(RECREATE_BUTTON, async ({ ack, body, action }) => {
    await ack();
    const channel = body.container?.channel_id ?? body.channel?.id;
    const user = body.user.id;
    if (!channel) return;
    const target = parseMeta(RecreateTargetSchema, action.value ?? '');
    if (!target) {
      logger.warn({ user }, 'a re-create button whose value cannot be read');
      return;
    }
    const container = body.container as { thread_ts?: string; message_ts?: string };
    const threadTs = container.thread_ts ?? container.message_ts;
    const opened = await changes.openReasonForm(
      { for: 'recreate', ...target, origin: { channel, ...(threadTs ? { threadTs } : {}) } },
      'Re-creating a policy is a change request and needs its own approval: say why, approvers read it.',
      body.trigger_id,
    );
    if (!opened.ok) logger.warn({ error: opened.error, user }, 'the re-create form did not open');
  });

  app.action<BlockAction<ButtonAction>>(OPEN_FORM, async ({ ack, body, action }) => {
    await ack();
    const user = body.user.id;
    let value: unknown;
    try {
      value = JSON.parse(action.value ?? 'null');
    } catch {
      value = null;
    }
    const parsed = OpenFormValue.safeParse(value);
    if (!parsed.success) {
      logger.warn({ user }, 'an open-form button whose value cannot be read');
      return;
    }
    const { form, draft } = parsed.data;
    const opened =
      form === 'policy'
        ? await changes.openPolicyForm(draft, body.trigger_id)
        : await changes.openReasonForm(
            { for: 'file', draft },
            refusalSentence(REASON_REQUIRED),
            body.trigger_id,
          );
    if (!opened.ok) logger.warn({ error: opened.error, user, form }, 'the form did not open');
  });

  // The pattern's hint follows what is typed: "unanchored" until it starts with ^.
  app.action<BlockAction>(PATTERN_TYPED, async ({ ack, body, action }) => {
    await ack();
    const typed = (action as { value?: string }).value ?? '';
    const open = body.view;
    if (!open) return;
    const view = withPatternHint(open as never, typed);
    if (!view) return;
    const updated = await delivery.call('views.update', { view_id: open.id, hash: open.hash, view });
    // hash_conflict: the user typed on, and a newer update is on its way.
    if (!updated.ok && updated.error !== 'hash_conflict')
      logger.debug({ error: updated.error }, 'pattern hint not updated');
  });

  app.view<ViewSubmitAction>(FORMS.policy, async ({ ack, body, view }) => {
    const draft = parseDraft(view.private_metadata);
    const user = body.user.id;
    if (!draft) return errorsAck(ack, { [BLOCK.pattern]: UNREADABLE_FORM.command });
    const read = readPolicyForm(view.state.values as never);
    if ('errors' in read) return errorsAck(ack, read.errors);
    const filled = { ...draft, fields: read.fields };
    await submitFiling(
      ack,
      user,
      draft.origin.channel,
      () => changes.file(filled, user, read.reason),
      policyFormErrors,
    );
  });

  app.view<ViewSubmitAction>(FORMS.reason, async ({ ack, body, view }) => {
    const form = readReasonForm(view, parseReasonMeta, 'command', 'change');
    if ('errors' in form) return errorsAck(ack, form.errors);
    const { meta, reason } = form;
    const user = body.user.id;
    const channel = meta.for === 'file' ? meta.draft.origin.channel : meta.origin.channel;
    await submitFiling(
      ack,
      user,
      channel,
      () =>
        meta.for === 'file'
          ? changes.file(meta.draft, user, reason)
          : meta.for === 'recreate'
            ? changes.recreate(meta, user, reason)
            : changes.revert(meta.auditId, user, meta.origin, reason),
      (err) =>
        err.code === 'reason-required' || err.code === 'reason-too-long'
          ? { [BLOCK.reason]: err.message }
          : null,
    );
  });

  const breakGlass = registerBreakGlassInteractions(app, { changes, delivery, logger, tell });
  return {
    actions: new Set([
      REQUEST_BUTTONS.approve,
      REQUEST_BUTTONS.reject,
      REQUEST_BUTTONS.revert,
      RECREATE_BUTTON,
      OPEN_FORM,
      PATTERN_TYPED,
      ...breakGlass.actions,
    ]),
    callbacks: new Set([FORMS.decision, FORMS.policy, FORMS.reason, ...breakGlass.callbacks]),
  };
}

const REASON_REQUIRED = { code: 'reason-required', for: 'change' } as const;
const storeDown = () => storeUnavailable('nothing was decided');
const notFound = (id: string) => new WorkflowError({ code: 'not-found', what: 'change request', id });
