import type { AllMiddlewareArgs, Middleware, SlackEventMiddlewareArgs } from '@slack/bolt';
import { dispatch } from '../dispatch.ts';
import { decodeSlackText } from '../escape.ts';
import { fileNotAttachedView } from '../views/errors.ts';
import { attachFile } from './attach.ts';
import { type ListenerDeps, newRequestId, requestDone, slackErrorCode } from './context.ts';

/**
 * `@rmq which orders.audit` in a channel is answered there; inside a thread, in that thread.
 * Slack redelivers events it thinks were lost, so each event id is answered once (in Redis,
 * shared by every instance); the bot's own messages are never answered. An answer's file (a
 * preview too long for one message) is uploaded after it, into the same channel and thread;
 * when Slack does not take it, the asker is told why, in an ephemeral message there.
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
  return async ({
    event,
    body,
    context,
    client,
  }: SlackEventMiddlewareArgs<'app_mention'> & AllMiddlewareArgs) => {
    if (event.bot_id || (context.botUserId !== undefined && event.user === context.botUserId)) return;
    const started = performance.now();
    const requestId = newRequestId();
    const logger = deps.logger.child({
      requestId,
      via: 'mention',
      user: event.user,
      channel: event.channel,
      eventId: body.event_id,
    });

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

    await deps.inFlight.track(
      (async () => {
        const answer = await dispatch(mentionText(event.text, context.botUserId), {
          prefix: '@rmq',
          environments: deps.environments,
          patterns: deps.patterns,
          logger,
          requestId,
        });
        const thread = event.thread_ts ? { thread_ts: event.thread_ts } : {};
        const { text, blocks } = answer.message;
        let delivered = false;
        try {
          if (answer.audience === 'asker' && event.user) {
            await client.chat.postEphemeral({
              channel: event.channel,
              user: event.user,
              text,
              blocks,
              ...thread,
            });
          } else {
            await client.chat.postMessage({
              channel: event.channel,
              text,
              blocks,
              unfurl_links: false,
              unfurl_media: false,
              ...thread,
            });
          }
          delivered = true;
        } catch (err) {
          deps.metrics.deliveryErrors.inc({ via: 'mention' });
          logger.warn({ error: slackErrorCode(err) }, 'Slack did not take the answer');
        }
        // A file goes only with an answer the channel saw (never beside an ephemeral one).
        if (delivered && answer.file && answer.audience === 'channel') {
          const attached = await attachFile(
            client,
            answer.file,
            { channel: event.channel, threadTs: event.thread_ts },
            logger,
          );
          if (!attached.ok) {
            deps.metrics.deliveryErrors.inc({ via: 'mention' });
            const notice = fileNotAttachedView(attached.error, answer.file);
            try {
              if (!event.user) throw Object.assign(new Error('no user to tell'), { code: 'no_user' });
              await client.chat.postEphemeral({
                channel: event.channel,
                user: event.user,
                text: notice.text,
                blocks: notice.blocks,
                ...thread,
              });
            } catch (err) {
              logger.warn(
                { error: slackErrorCode(err) },
                'Slack did not take the notice of the missing file',
              );
            }
          }
        }
        requestDone(deps.metrics, logger, 'mention', started, answer);
      })(),
    );
  };
}
