import type { WorkflowError } from '../../workflow/errors.ts';
import { prose, truncate } from '../escape.ts';
import { finish, type SlackMessage, section } from './message.ts';
import { previewView } from './preview.ts';
import { whoList } from './request.ts';

/**
 * Why a change request was not filed, or a decision not taken: one sentence per code (the
 * workflow's codes, and the forms' own), plus the detail that code carries (the broker's
 * reason, the validation's refusals). Pure.
 */

const SENTENCES: Readonly<Record<string, string>> = {
  'unknown-env': 'That environment is not configured on this bot. Nothing was filed.',
  'read-only-env': 'This environment is read-only: the bot changes no policy there. Nothing was filed.',
  'reason-required': 'A reason is required: for every delete, and for every change in a guarded environment.',
  'identity-cannot-write':
    "The bot's broker identity may not write policies here, so nothing was filed. The broker says:",
  'preview-refused': 'The change was refused before anything was filed:',
  'broker-not-asked': 'The broker could not be asked, so nothing was filed. Try again when it answers.',
  'store-unavailable':
    'The request store (Redis) cannot be reached: nothing was filed or decided. Try again in a moment.',
  'not-found': 'There is no such request or audit record.',
  'self-approval': 'You filed this request: another approver must decide it.',
  'not-approver': 'You are not among the approvers of this environment: nothing was decided.',
  'already-approved': 'You already approved this request: another approver must give the next approval.',
  'not-requester': 'You may not file change requests in this environment: nothing was filed or posted.',
  'nothing-to-do': 'The broker already has exactly this: there is nothing to change. Nothing was filed.',
  'no-such-policy': 'There is no policy of that name to edit in that vhost (and layer).',
  'name-taken': 'A policy of that name exists already in that vhost: edit it instead.',
  'form-too-large': 'This request is too large for a Slack form: give --reason on the command line.',
  'not-set-up': 'Change requests are not set up on this bot.',
};

export function refusalSentence(code: string): string {
  return SENTENCES[code] ?? "Something went wrong on the bot's side. Nothing was changed.";
}

/** The detail of a refusal, as plain text (for a form's inline error). */
export function refusalDetail(err: WorkflowError): string {
  if (err.code === 'identity-cannot-write') return err.details.reason ?? err.message;
  const p = err.details.preview;
  if (err.code === 'preview-refused' && p?.status === 'refused')
    return p.refusals.map((r) => r.message).join(' ');
  if (err.code === 'broker-not-asked' && p?.status === 'not-asked') return p.detail ?? p.why;
  return '';
}

/** A form's inline error: the sentence and its detail, plain text (Slack shows at most 2,000). */
export function refusalText(err: WorkflowError): string {
  const detail = refusalDetail(err);
  return truncate(detail ? `${refusalSentence(err.code)} ${detail}` : refusalSentence(err.code), 1900);
}

/** A refusal as a message to the requester. A refused preview shows the preview's own refusal. */
export function requestRefusedView(err: WorkflowError): SlackMessage {
  const p = err.details.preview;
  if ((err.code === 'preview-refused' || err.code === 'broker-not-asked') && p && p.status !== 'answered') {
    const { file: _none, ...message } = previewView(p);
    return message;
  }
  const detail = refusalDetail(err);
  const sentence = refusalSentence(err.code);
  const who = err.code === 'not-requester' ? err.details.who : undefined;
  if (who) {
    return finish(
      [
        section(
          `:no_entry: ${prose(sentence)}\nWho may ask: ${whoList(who.requesters)}. Who may approve: ${whoList(who.approvers)}. Ask one of them to file it.`,
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
