import type { Middleware, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { dispatch } from '../dispatch.ts';
import { decodeSlackText } from '../escape.ts';
import { type ListenerDeps, measure, newRequestId, slackErrorCode } from './context.ts';

/**
 * `/rmq …`: acknowledged at once (Slack gives three seconds, the broker may take longer), then
 * answered through the response URL: for the channel when it is an answer, to the asker alone
 * when it is usage or a refusal.
 */
export function slashCommandListener(deps: ListenerDeps): Middleware<SlackCommandMiddlewareArgs> {
  return async ({ command, ack, respond }) => {
    await ack();
    const started = performance.now();
    const requestId = newRequestId();
    const logger = deps.logger.child({
      requestId,
      via: 'command',
      user: command.user_id,
      channel: command.channel_id,
    });
    await deps.inFlight.track(
      (async () => {
        const answer = await dispatch(decodeSlackText(command.text ?? ''), {
          prefix: command.command || '/rmq',
          environments: deps.environments,
          logger,
          requestId,
        });
        try {
          await respond({
            response_type: answer.audience === 'channel' ? 'in_channel' : 'ephemeral',
            text: answer.message.text,
            blocks: answer.message.blocks,
            unfurl_links: false,
            unfurl_media: false,
          });
        } catch (err) {
          deps.metrics.deliveryErrors.inc({ via: 'command' });
          logger.warn({ error: slackErrorCode(err) }, 'Slack did not take the answer');
        }
        measure(deps.metrics, 'command', started, answer.command, answer.outcome);
        logger.info(
          { command: answer.command, outcome: answer.outcome, ms: Math.round(performance.now() - started) },
          'request done',
        );
      })(),
    );
  };
}
