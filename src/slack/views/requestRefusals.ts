import type { WorkflowError } from '../../workflow/index.ts';
import { prose, truncate } from '../escape.ts';
import { VIEW_BUDGET } from '../limits.ts';
import { INTERNAL_FAILURE } from './errors.ts';
import { finish, type SlackMessage, section } from './message.ts';
import { previewView } from './preview.ts';
import { whoList } from './request.ts';

/**
 * Why a change request was not filed, or a decision not taken: the workflow's sentence of the
 * refusal (src/workflow/errors.ts, the one home of those) plus the detail that code carries
 * (the broker's reason, the validation's refusals), and the forms' own refusals. Pure.
 */

/** The refusals of the Slack side itself (the forms, the set-up), one sentence each. */
const SLACK_REFUSALS = {
  'no-such-policy': 'There is no policy of that name to edit in that vhost (and layer).',
  'name-taken': 'A policy of that name exists already in that vhost: edit it instead.',
  'form-too-large': 'This request is too large for a Slack form: give --reason on the command line.',
  'not-set-up': 'Change requests are not set up on this bot.',
  'no-asker':
    'This message names no user (it came from an integration or a workflow, not a person), and a change request needs a requester who can be asked and told: nothing was filed. Ask from your own account.',
  internal: INTERNAL_FAILURE,
} as const;
export type SlackRefusalCode = keyof typeof SLACK_REFUSALS;

export function slackRefusal(code: SlackRefusalCode): string {
  return SLACK_REFUSALS[code];
}

/** The detail of a refusal, as plain text (for a form's inline error). */
export function refusalDetail(err: WorkflowError): string {
  const r = err.refusal;
  if (r.code === 'identity-cannot-write') return r.reason;
  if (r.code === 'preview-refused') return r.refusals.join(' ');
  if (r.code === 'broker-not-asked') return r.detail ?? r.why;
  return '';
}

/** A form's inline error: the sentence and its detail, plain text, within `VIEW_BUDGET.formError`. */
export function refusalText(err: WorkflowError): string {
  const detail = refusalDetail(err);
  return truncate(detail ? `${err.message} ${detail}` : err.message, VIEW_BUDGET.formError);
}

/** A refusal as a message to the requester. A refused preview shows the preview's own refusal. */
export function requestRefusedView(err: WorkflowError): SlackMessage {
  const p = err.details.preview;
  if ((err.code === 'preview-refused' || err.code === 'broker-not-asked') && p && p.status !== 'answered') {
    const { file: _none, ...message } = previewView(p);
    return message;
  }
  const detail = refusalDetail(err);
  const sentence = err.message;
  const r = err.refusal;
  if (r.code === 'not-requester') {
    return finish(
      [
        section(
          `:no_entry: ${prose(sentence)}\nWho may ask: ${whoList(r.requesters)}. Who may approve: ${whoList(r.approvers)}. Ask one of them to file it.`,
        ),
      ],
      prose(sentence),
    );
  }
  return finish(
    [section(`:no_entry: ${prose(sentence)}${detail ? `\n> ${prose(truncate(detail, 1500))}` : ''}`)],
    prose(sentence),
  );
}
