import type { InputError } from '../../errors.ts';
import { code, codeBlock, prose, truncate } from '../escape.ts';
import { finish, type SlackMessage, section } from './message.ts';

/** Refusals and failures: a sentence chosen by the error's code, never a stack trace. */

/** What a person reads for each failure code (RabbitError codes, and the bot's own). */
export const FAILURE_SENTENCES: Readonly<Record<string, string>> = {
  unreachable: 'The broker could not be reached.',
  timeout: 'The broker did not answer in time.',
  unauthorized: "The broker refused the bot's credentials.",
  forbidden: "The bot's broker user may not read this.",
  'not-found': 'The broker does not know that vhost or object.',
  'refused-by-broker': 'The broker refused the request.',
  'broker-error': 'The broker answered with an error.',
  'bad-response': "The broker's answer could not be read.",
  internal: "Something went wrong on the bot's side. Nothing was changed.",
};

/** A hint that is a command's usage line, to be shown with the prefix the user typed. */
const USAGE_LINE = /^(which|preview|create|edit|delete|history|requests|help)\b/;

export function refusalView(err: InputError, prefix: string): SlackMessage {
  const blocks = [section(`:warning: ${prose(truncate(err.message, 1000))}`)];
  const hint = err.hint;
  if (hint) {
    if (USAGE_LINE.test(hint))
      blocks.push(section(`Usage:\n${codeBlock(truncate(`${prefix} ${hint}`, 2000))}`));
    else if (hint.includes('\n')) blocks.push(section(codeBlock(truncate(hint, 2000))));
    else blocks.push(section(prose(truncate(hint, 2000))));
  }
  return finish(blocks, prose(truncate(err.message, 500)));
}

export function failureView(code_: string, requestId: string): SlackMessage {
  const sentence = FAILURE_SENTENCES[code_] ?? FAILURE_SENTENCES.internal ?? '';
  return finish(
    [section(`:x: ${sentence}`), section(`_Reference for the bot's operators: ${code(requestId)}_`)],
    sentence,
  );
}
