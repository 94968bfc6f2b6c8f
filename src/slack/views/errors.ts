import { asSentence, BROKER_FAILURE_WORDS } from '../../commands/index.ts';
import { codeOf, type InputError } from '../../core/index.ts';
import { RABBIT_ERROR_CODES, type RabbitErrorCode } from '../../rabbit/index.ts';
import { refusalSentence } from '../../workflow/index.ts';
import { code, codeBlock, prose, truncate } from '../escape.ts';
import { finish, type SlackMessage, section } from './message.ts';

/** Refusals and failures: a sentence chosen by the error's code, never a stack trace. */

export const INTERNAL_FAILURE = "Something went wrong on the bot's side. Nothing was changed.";

/** The codes a failure is told by: the management client's, and the bot's own. */
export type FailureCode = RabbitErrorCode | 'defaults-unavailable' | 'store-unavailable' | 'internal';

/** The client's codes, each in the words every front door uses (words.ts), as a sentence. */
const BROKER_FAILURE_SENTENCES = Object.fromEntries(
  RABBIT_ERROR_CODES.map((c) => [c, asSentence(BROKER_FAILURE_WORDS[c])]),
) as Record<RabbitErrorCode, string>;

/** What a person reads for each failure code; the compiler refuses a code without its sentence. */
export const FAILURE_SENTENCES: Readonly<Record<FailureCode, string>> = {
  ...BROKER_FAILURE_SENTENCES,
  'defaults-unavailable':
    "This channel's defaults could not be read or kept (the bot's Redis is unavailable). Nothing was changed; give --env and --vhost meanwhile.",
  // The workflow's sentence (src/workflow/errors.ts): a read of the requests or the trail failed.
  'store-unavailable': refusalSentence({ code: 'store-unavailable', notDone: 'nothing was changed' }),
  internal: INTERNAL_FAILURE,
};

/** An error's code, when a sentence is written for it; else `internal`. */
export function failureCodeOf(err: unknown): FailureCode {
  const code = codeOf(err);
  return code !== undefined && isFailureCode(code) ? code : 'internal';
}

function isFailureCode(code: string): code is FailureCode {
  return Object.hasOwn(FAILURE_SENTENCES, code);
}

export function refusalView(err: InputError, prefix: string): SlackMessage {
  const blocks = [section(`:warning: ${prose(truncate(err.message, 1000))}`)];
  const { hint, usage } = err;
  if (hint?.includes('\n')) blocks.push(section(codeBlock(truncate(hint, 2000))));
  else if (hint) blocks.push(section(prose(truncate(hint, 2000))));
  if (usage) blocks.push(section(`Usage:\n${codeBlock(truncate(`${prefix} ${usage}`, 2000))}`));
  return finish(blocks, prose(truncate(err.message, 500)));
}

export function failureView(code_: FailureCode, requestId: string): SlackMessage {
  const sentence = FAILURE_SENTENCES[code_];
  return finish(
    [section(`:x: ${sentence}`), section(`_Reference for the bot's operators: ${code(requestId)}_`)],
    sentence,
  );
}

/** What a person can do about an upload Slack refused, by Slack's error code. */
const NOT_ATTACHED_HINTS: Readonly<Record<string, string>> = {
  not_in_channel: `The bot is not a member of this channel: invite it (${code('/invite @rmq')}) and ask again.`,
  channel_not_found:
    'The bot cannot see this channel (a private channel it was not invited to?): invite it and ask again.',
  is_archived: 'The channel is archived.',
  missing_scope: `The Slack app lacks the ${code('files:write')} scope: reinstall it from ${code('slack/manifest.yml')}.`,
  file_uploads_disabled: 'This workspace does not allow file uploads.',
  file_uploads_except_images_disabled: 'This workspace allows only images to be uploaded.',
  file_upload_size_restricted: 'This workspace limits the size of uploaded files.',
  slack_webapi_rate_limited_error: 'Slack asked the bot to slow down: ask again in a minute.',
};

/**
 * To the asker alone, after an answer whose file Slack did not take: the answer stands, the
 * full list is missing, and why (Slack's error code, and what to do about it when known).
 */
export function fileNotAttachedView(error: string, file: { readonly filename: string }): SlackMessage {
  const hint = NOT_ATTACHED_HINTS[error];
  const why = code(truncate(error, 100));
  return finish(
    [
      section(
        `:warning: The full list (${code(truncate(file.filename, 200))}) could not be attached to the answer: Slack answered ${why}.${hint ? ` ${hint}` : ''}`,
      ),
      section(
        `The answer above stands as posted. The terminal gives every object: ${code('npx rmq preview … --json')}.`,
      ),
    ],
    `The full list could not be attached: Slack answered ${prose(truncate(error, 100))}.`,
  );
}

/**
 * To the asker alone, when their answer could not be delivered (Slack kept refusing or did not
 * answer within the delivery budget): nothing was posted, so ask again.
 */
export function answerNotDeliveredView(error: string, requestId: string): SlackMessage {
  const why = code(truncate(error, 100));
  return finish(
    [
      section(
        `:warning: The answer to your question could not be delivered: Slack answered ${why}. Nothing was changed; ask again in a moment.`,
      ),
      section(`_Reference for the bot's operators: ${code(requestId)}_`),
    ],
    `The answer could not be delivered: Slack answered ${prose(truncate(error, 100))}. Ask again in a moment.`,
  );
}
