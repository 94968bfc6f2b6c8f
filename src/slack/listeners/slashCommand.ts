import type { AllMiddlewareArgs, Middleware, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { dispatch } from '../dispatch.ts';
import { decodeSlackText } from '../escape.ts';
import { fileNotAttachedView } from '../views/errors.ts';
import { attachFile } from './attach.ts';
import { type ListenerDeps, newRequestId, requestDone, slackErrorCode } from './context.ts';

/**
 * `/rmq …`: acknowledged at once (Slack gives three seconds, the broker may take longer), then
 * answered through the response URL: for the channel when it is an answer, to the asker alone
 * when it is usage or a refusal. An answer that carries a file (a preview too long for one
 * message) has it uploaded into the command's channel after the message; when Slack does not
 * take the file, the asker is told why through the same response URL.
 */
export function slashCommandListener(deps: ListenerDeps): Middleware<SlackCommandMiddlewareArgs> {
  return async ({ command, ack, respond, client }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
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
          patterns: deps.patterns,
          logger,
          requestId,
        });
        let delivered = false;
        try {
          await respond({
            response_type: answer.audience === 'channel' ? 'in_channel' : 'ephemeral',
            text: answer.message.text,
            blocks: answer.message.blocks,
            unfurl_links: false,
            unfurl_media: false,
          });
          delivered = true;
        } catch (err) {
          deps.metrics.deliveryErrors.inc({ via: 'command' });
          logger.warn({ error: slackErrorCode(err) }, 'Slack did not take the answer');
        }
        // A file goes only with an answer the channel saw (never beside an ephemeral one).
        if (delivered && answer.file && answer.audience === 'channel') {
          const attached = await attachFile(client, answer.file, { channel: command.channel_id }, logger);
          if (!attached.ok) {
            deps.metrics.deliveryErrors.inc({ via: 'command' });
            const notice = fileNotAttachedView(attached.error, answer.file);
            try {
              await respond({
                response_type: 'ephemeral',
                replace_original: false,
                text: notice.text,
                blocks: notice.blocks,
              });
            } catch (err) {
              logger.warn(
                { error: slackErrorCode(err) },
                'Slack did not take the notice of the missing file',
              );
            }
          }
        }
        requestDone(deps.metrics, logger, 'command', started, answer);
      })(),
    );
  };
}
