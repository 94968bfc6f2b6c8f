import type { AllMiddlewareArgs, Middleware, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { dispatch } from '../dispatch.ts';
import { decodeSlackText } from '../escape.ts';
import { commandContext, type ListenerDeps, newRequestId } from './context.ts';

/**
 * `/rmq …`: acknowledged at once (Slack gives three seconds, the broker may take longer), then
 * answered through the response URL: for the channel when it is an answer, to the asker alone
 * when it is usage or a refusal. Delivery (retries, the file, telling the asker what was lost,
 * the count) is `../delivery.ts`.
 */
export function slashCommandListener(deps: ListenerDeps): Middleware<SlackCommandMiddlewareArgs> {
  return async ({ command, ack }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
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
        const answer = await dispatch(
          decodeSlackText(command.text ?? ''),
          commandContext(deps, {
            prefix: command.command || '/rmq',
            logger,
            requestId,
            channel: command.channel_id,
            asker: { user: command.user_id, channel: command.channel_id, triggerId: command.trigger_id },
          }),
        );
        const reply = deps.delivery.toResponseUrl({
          responseUrl: command.response_url,
          channel: command.channel_id,
          user: command.user_id,
        });
        await deps.delivery.deliver(reply, answer, {
          via: 'command',
          command: answer.command,
          started,
          logger,
          requestId,
        });
      })(),
    );
  };
}
