import type {
  AckFn,
  App,
  BlockAction,
  ButtonAction,
  types,
  ViewResponseAction,
  ViewSubmitAction,
} from '@slack/bolt';
import type { Logger } from '../../log/index.ts';
import type { ChangeRequest, ReviewOutcome } from '../../workflow/index.ts';
import { isWorkflowError, WorkflowError } from '../../workflow/index.ts';
import type { Delivery } from '../delivery.ts';
import type { HandledInteractions } from '../interactions.ts';
import {
  BREAK_GLASS_BUTTONS,
  BREAK_GLASS_FORMS,
  breakGlassForm,
  parseBreakGlassMeta,
  parseReviewMeta,
  reviewForm,
} from '../views/breakGlass.ts';
import { BLOCK, readLossAcknowledged, readReasonForm } from '../views/forms.ts';
import type { SlackMessage } from '../views/message.ts';
import { alreadyDecidedView, REQUEST_BUTTONS } from '../views/request.ts';
import { refusalText, requestRefusedView, slackRefusal } from '../views/requestRefusals.ts';
import type { ChangeRequests } from './service.ts';

/**
 * Break-glass in Slack (block_actions and view_submission at POST /slack/events):
 *
 * - Break glass on a pending request opens the form its requester gives the reason in; the
 *   workflow checks everything again from the signed user on submission (allowed in the
 *   environment now, the requester, a reason) and applies it through the apply job.
 * - Review and Revert on the break-glass notice open the review form (reason required); Revert
 *   files the revert request (approved like every revert). Refusals are said inline.
 *
 * A click that can only be refused (someone else's request, a review already given) is told
 * ephemerally before any form opens; the workflow checks it again regardless.
 */

export interface BreakGlassInteractionsDeps {
  readonly changes: ChangeRequests;
  readonly delivery: Delivery;
  readonly logger: Logger;
  /** Tells `user` ephemerally in `channel` (interactions.ts's `tell`). */
  readonly tell: (channel: string | undefined, user: string, message: SlackMessage) => Promise<unknown>;
}

type Ack = AckFn<ViewResponseAction>;
const errorsAck = (ack: Ack, message: string | Record<string, string>) =>
  ack({
    response_action: 'errors',
    errors: typeof message === 'string' ? { [BLOCK.reason]: message } : message,
  });
const refused = (refusal: ConstructorParameters<typeof WorkflowError>[0]) =>
  requestRefusedView(new WorkflowError(refusal));

export function registerBreakGlassInteractions(
  app: App,
  deps: BreakGlassInteractionsDeps,
): HandledInteractions {
  const { changes, delivery, logger, tell } = deps;
  const { workflow } = changes;

  /** The request a button names, or undefined after telling the clicker why there is none. */
  async function requestOf(body: BlockAction, id: string, log: Logger): Promise<ChangeRequest | undefined> {
    const channel = body.container?.channel_id ?? body.channel?.id;
    try {
      const r = await workflow.get(id);
      if (!r) await tell(channel, body.user.id, refused({ code: 'not-found', what: 'change request', id }));
      return r;
    } catch (err) {
      log.warn({ err }, 'the request could not be read');
      await tell(channel, body.user.id, refused({ code: 'store-unavailable', notDone: 'nothing was done' }));
      return undefined;
    }
  }

  async function open(triggerId: string, view: types.ModalView, log: Logger) {
    const opened = await delivery.call('views.open', { trigger_id: triggerId, view });
    if (!opened.ok) log.warn({ error: opened.error }, 'the break-glass form did not open');
  }

  app.action<BlockAction<ButtonAction>>(REQUEST_BUTTONS.breakGlass, async ({ ack, body, action }) => {
    await ack();
    const user = body.user.id;
    const channel = body.container?.channel_id ?? body.channel?.id;
    const log = logger.child({ requestId: action.value, user, kind: 'break-glass' });
    const r = await requestOf(body, action.value ?? '', log);
    if (!r) return;
    if (r.state !== 'pending' || Date.parse(r.expiresAt) <= Date.now())
      return void (await tell(channel, user, alreadyDecidedView(r)));
    if (user !== r.requester.user)
      return void (await tell(channel, user, refused({ code: 'break-glass-not-requester' })));
    await open(body.trigger_id, breakGlassForm(r), log);
  });

  app.view<ViewSubmitAction>(BREAK_GLASS_FORMS.breakGlass, async ({ ack, body, view }) => {
    const form = readReasonForm(view, parseBreakGlassMeta, 'button', 'break-glass');
    if ('errors' in form) return errorsAck(ack, form.errors);
    const { meta, reason } = form;
    const user = body.user.id;
    const log = logger.child({ requestId: meta.id, user, kind: 'break-glass' });
    let result: Awaited<ReturnType<typeof workflow.breakGlass>>;
    try {
      const acknowledgedLoss = readLossAcknowledged(view.state.values as never);
      result = await workflow.breakGlass(meta.id, { user, reason, acknowledgedLoss });
    } catch (err) {
      if (isWorkflowError(err)) {
        log.info({ code: err.code }, 'break glass refused');
        const block = err.code === 'loss-not-acknowledged' ? BLOCK.acknowledgeLoss : BLOCK.reason;
        return errorsAck(ack, { [block]: refusalText(err) });
      }
      log.error({ err }, 'break glass failed');
      return errorsAck(ack, slackRefusal('internal'));
    }
    await ack();
    log.info({ outcome: result.outcome, state: result.request.state }, 'break glass');
    if (result.outcome !== 'decided')
      await tell(
        result.request.message?.channel ?? result.request.approvalsChannel,
        user,
        alreadyDecidedView(result.request),
      );
  });

  const reviewButton =
    (outcome: ReviewOutcome) =>
    async ({ ack, body, action }: { ack: () => Promise<void>; body: BlockAction; action: ButtonAction }) => {
      await ack();
      const user = body.user.id;
      const channel = body.container?.channel_id ?? body.channel?.id;
      const log = logger.child({ requestId: action.value, user, kind: `review-${outcome}` });
      const r = await requestOf(body, action.value ?? '', log);
      if (!r) return;
      if (r.review)
        return void (await tell(
          channel,
          user,
          refused({ code: 'already-reviewed', by: r.review.by, at: r.review.at }),
        ));
      if (user === r.breakGlass?.by)
        return void (await tell(channel, user, refused({ code: 'self-review' })));
      await open(body.trigger_id, reviewForm(r, outcome), log);
    };
  app.action<BlockAction<ButtonAction>>(BREAK_GLASS_BUTTONS.review, reviewButton('reviewed'));
  app.action<BlockAction<ButtonAction>>(BREAK_GLASS_BUTTONS.revert, reviewButton('reverted'));

  app.view<ViewSubmitAction>(BREAK_GLASS_FORMS.review, async ({ ack, body, view }) => {
    const form = readReasonForm(view, parseReviewMeta, 'button', 'decision');
    if ('errors' in form) return errorsAck(ack, form.errors);
    const { meta, reason } = form;
    const user = body.user.id;
    const log = logger.child({ requestId: meta.id, user, kind: `review-${meta.outcome}` });
    let outcome: Awaited<ReturnType<typeof changes.review>>;
    try {
      outcome = await changes.review(meta.id, { user, reason, outcome: meta.outcome });
    } catch (err) {
      log.error({ err }, 'review failed');
      return errorsAck(ack, slackRefusal('internal'));
    }
    if (!outcome.ok) {
      log.info({ code: outcome.error.code }, 'review refused');
      return errorsAck(ack, refusalText(outcome.error));
    }
    await ack();
    log.info({ outcome: outcome.result.outcome }, 'review');
    const r = outcome.result.request;
    if (outcome.result.outcome === 'already-reviewed' && r.review)
      await tell(
        r.message?.channel ?? r.approvalsChannel,
        user,
        refused({ code: 'already-reviewed', by: r.review.by, at: r.review.at }),
      );
  });

  return {
    actions: new Set([REQUEST_BUTTONS.breakGlass, BREAK_GLASS_BUTTONS.review, BREAK_GLASS_BUTTONS.revert]),
    callbacks: new Set([BREAK_GLASS_FORMS.breakGlass, BREAK_GLASS_FORMS.review]),
  };
}
