import type { AllMiddlewareArgs, Middleware, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { decodeSlackText } from '../escape.ts';
import { answer, arrived, type ListenerDeps } from './context.ts';

/**
 * `/rmq …`: acknowledged at once (Slack gives three seconds, the broker may take longer), then
 * answered through the response URL: for the channel when it is an answer, to the asker alone
 * when it is usage or a refusal. Delivery (retries, the file, telling the asker what was lost,
 * the count) is `../delivery.ts`.
 */
export function slashCommandListener(deps: ListenerDeps): Middleware<SlackCommandMiddlewareArgs> {
  return async ({ command, ack }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
    await ack();
    const request = arrived(deps, 'command', { user: command.user_id, channel: command.channel_id });
    const asker = { user: command.user_id, channel: command.channel_id, triggerId: command.trigger_id };
    const reply = deps.delivery.toResponseUrl({ ...asker, responseUrl: command.response_url });
    const origin = { prefix: command.command || '/rmq', channel: command.channel_id, asker };
    await answer(deps, request, decodeSlackText(command.text ?? ''), origin, reply);
  };
}
