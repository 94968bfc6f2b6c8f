import { finish, type SlackMessage, section } from './message.ts';

/**
 * An answer that could not read what it depends on leads with the sentence that says so
 * (src/commands/words.ts `incompleteWords`, its names formatted for Slack): its first block, and
 * the start of the notification's text. Unchanged without one.
 */
export function leadWith<M extends SlackMessage>(message: M, sentence: string | undefined): M {
  if (!sentence) return message;
  return {
    ...message,
    ...finish([section(`:rotating_light: *${sentence}*`), ...message.blocks], `${sentence} ${message.text}`),
  };
}
