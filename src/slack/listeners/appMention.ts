import type { AllMiddlewareArgs, Middleware, SlackEventMiddlewareArgs } from '@slack/bolt';
import { attachedRefs } from '../attachments.ts';
import { decodeSlackText } from '../escape.ts';
import { answer, arrived, type ListenerDeps } from './context.ts';

/**
 * `@rmq which orders.audit` in a channel is answered there; inside a thread, in that thread.
 * Slack redelivers events it thinks were lost, so each event id is answered once (in Redis,
 * shared by every instance); the bot's own messages are never answered. Delivery (retries, the
 * file in the same thread, telling the asker what was lost, the count) is `../delivery.ts`.
 */

/**
 * The words addressed to the bot: what follows its mention ("hey @rmq which x" -> "which x"),
 * or what precedes it when nothing follows; Slack's encoding undone.
 */
export function mentionText(text: string, botUserId: string | undefined): string {
  const id = botUserId?.replace(/[^A-Za-z0-9]/g, '') || '[A-Z0-9]+';
  const mention = new RegExp(`<@${id}(?:\\|[^>]*)?>`);
  const m = mention.exec(text);
  if (!m) return decodeSlackText(text).trim();
  const after = text
    .slice(m.index + m[0].length)
    .replace(new RegExp(mention.source, 'g'), ' ')
    .trim();
  return decodeSlackText(after || text.slice(0, m.index)).trim();
}

export function appMentionListener(deps: ListenerDeps): Middleware<SlackEventMiddlewareArgs<'app_mention'>> {
  return async ({ event, body, context }: SlackEventMiddlewareArgs<'app_mention'> & AllMiddlewareArgs) => {
    if (event.bot_id || (context.botUserId !== undefined && event.user === context.botUserId)) return;
    const request = arrived(deps, 'mention', {
      user: event.user,
      channel: event.channel,
      eventId: body.event_id,
    });
    const { logger } = request;

    let first = true;
    try {
      first = await deps.dedupe.firstDelivery(body.event_id);
    } catch (err) {
      // Without Redis, answering twice beats not answering at all.
      logger.warn({ err }, 'event dedupe unavailable; answering anyway');
    }
    if (!first) {
      deps.metrics.duplicateEvents.inc();
      logger.info({ retryNum: context.retryNum }, 'event delivered again; already answered');
      return;
    }

    const where = { channel: event.channel, threadTs: event.thread_ts };
    const asker = event.user ? { ...where, user: event.user } : undefined;
    const reply = deps.delivery.toChannel({ ...where, user: event.user });
    await answer(
      deps,
      request,
      mentionText(event.text, context.botUserId),
      { prefix: '@rmq', channel: event.channel, asker, files: attachedRefs(event) },
      reply,
    );
  };
}
