import type { types } from '@slack/bolt';
import * as z from 'zod';
import type { ChangeRecord } from '../../audit/index.ts';
import { type ChangeRequest, MAX_REASON, REVIEW_OUTCOMES, type ReviewOutcome } from '../../workflow/index.ts';
import { prose, truncate } from '../escape.ts';
import { BLOCK, encodeMeta, lossAcknowledgement, modal, parseMeta, textInput } from './forms.ts';
import { actions, type Block, button, finish, type SlackMessage, section } from './message.ts';
import { breakGlassLine, requestTitle, when, whereWords, who, whoList } from './request.ts';
import { appliedView } from './setApplied.ts';

/**
 * Break-glass in Slack, pure: the form its requester gives the reason in, the loud notice once it
 * is applied (in the approvals channel and where it was asked) with Review and Revert, the review
 * form, the notice of the review, and the reminder when it is unreviewed past its deadline. The
 * Break glass button itself is on the request message (request.ts `REQUEST_BUTTONS.breakGlass`).
 */

export const BREAK_GLASS_BUTTONS = {
  review: 'rmq_break_glass_review',
  revert: 'rmq_break_glass_revert',
} as const;

export const BREAK_GLASS_FORMS = {
  breakGlass: 'rmq_break_glass_form',
  review: 'rmq_review_form',
} as const;

const BreakGlassMetaSchema = z.object({ id: z.string().min(1) });
const ReviewMetaSchema = z.object({ id: z.string().min(1), outcome: z.enum(REVIEW_OUTCOMES) });
export type ReviewMeta = z.infer<typeof ReviewMetaSchema>;

export const parseBreakGlassMeta = (text: string) => parseMeta(BreakGlassMetaSchema, text);
export const parseReviewMeta = (text: string) => parseMeta(ReviewMetaSchema, text);

/** The requester's reason for applying without an approval, and the acknowledgement of its loss (as an approval's). */
export function breakGlassForm(r: ChangeRequest): types.ModalView {
  return modal(BREAK_GLASS_FORMS.breakGlass, 'Break glass', 'Apply now', encodeMeta({ id: r.id }), [
    section(
      `${requestTitle(r)} in ${whereWords(r)}\n:rotating_light: Applied at once, without an approval: posted in the approvals channel and where you asked, and reviewed by an approver afterwards (who may revert it).`,
    ),
    textInput(BLOCK.reason, 'Why it cannot wait for an approval', {
      multiline: true,
      maxLength: MAX_REASON,
      hint: 'Required. Everyone in the approvals channel reads it; it goes into the audit trail.',
    }),
    ...lossAcknowledgement(r),
  ]);
}

/** An approver's review: keep it (`reviewed`) or file its revert (`reverted`). */
export function reviewForm(r: ChangeRequest, outcome: ReviewOutcome): types.ModalView {
  const revert = outcome === 'reverted';
  return modal(
    BREAK_GLASS_FORMS.review,
    revert ? 'Revert break-glass' : 'Review break-glass',
    revert ? 'File the revert' : 'Reviewed',
    encodeMeta({ id: r.id, outcome } satisfies ReviewMeta),
    [
      section(
        `${requestTitle(r)}\n${breakGlassLine(r)}${revert ? '\nThe revert is a new change request restoring the state before, with its own approval.' : ''}`,
      ),
      textInput(BLOCK.reason, revert ? 'Why revert it' : 'Why it may stand', {
        multiline: true,
        maxLength: MAX_REASON,
        hint: 'Required. It goes into the audit trail.',
      }),
    ],
  );
}

function reviewButtons(r: ChangeRequest): types.ActionsBlock {
  return actions(
    'rmq_break_glass_review',
    button(BREAK_GLASS_BUTTONS.review, 'Review', r.id, { style: 'primary' }),
    button(BREAK_GLASS_BUTTONS.revert, 'Revert', r.id, { style: 'danger' }),
  );
}

/**
 * Once applied, loudly: applied without approval by whom and why, the audit diff, and Review /
 * Revert for an approver (in place of the audit diff's own Revert: a revert from here is the review).
 */
export function breakGlassAppliedView(rec: ChangeRecord, r: ChangeRequest): SlackMessage {
  // A set's every change, as its post after an approval shows them.
  const diff = appliedView(r, rec);
  const by = rec.breakGlass?.user ?? r.breakGlass?.by ?? r.requester.user;
  const because = rec.breakGlass?.reason ?? r.breakGlass?.reason ?? '';
  const blocks: Block[] = [
    section(
      `:rotating_light: *Applied without approval* by ${who(by)}, because ${prose(truncate(because, 600))}`,
    ),
    ...(diff.blocks as Block[]).filter((b) => (b as { block_id?: string }).block_id !== 'rmq_audit_actions'),
    section(
      `*An approver reviews it*${r.breakGlass ? ` by ${when(r.breakGlass.reviewBy)}` : ''}: Review if it may stand, Revert to file a request restoring the state before (approved like every revert).`,
    ),
    reviewButtons(r),
  ];
  return finish(
    blocks,
    `Applied without approval by ${by}: ${rec.action} ${prose(truncate(rec.policy, 200))} in ${prose(rec.env)}/${prose(truncate(rec.vhost, 100))} (audit ${rec.id}). An approver reviews it.`,
  );
}

/** After the review: who reviewed it, how, and why. */
export function reviewedView(r: ChangeRequest): SlackMessage {
  return finish(
    [section(requestTitle(r)), section(breakGlassLine(r))],
    `Break-glass change ${r.id} ${r.review?.outcome === 'reverted' ? 'reverted on review' : 'reviewed'}.`,
  );
}

/** In the approvals channel, once, when a break-glass change is still unreviewed past its deadline. */
export function reviewReminderView(r: ChangeRequest, approvers: readonly string[]): SlackMessage {
  return finish(
    [
      section(
        `:bell: ${requestTitle(r)} was applied without approval and is still *unreviewed*${r.breakGlass ? ` (due by ${when(r.breakGlass.reviewBy)})` : ''}.\n${breakGlassLine(r)}\n${whoList(approvers)}: please review it, or revert it.`,
      ),
      reviewButtons(r),
    ],
    `Break-glass change ${r.id} is still unreviewed.`,
  );
}
