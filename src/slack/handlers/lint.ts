import { lint, parseLint } from '../../commands/lint/index.ts';
import { InputError } from '../../core/index.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { lintView } from '../views/lint.ts';
import { channelFlags } from './defaults.ts';
import type { SlackCommand } from './types.ts';

/**
 * `/rmq lint [--vhost V]`: every surprise the vhost's policies hold, for everyone in the channel
 * or thread, the most severe first; every finding as a file beside the message when the message
 * cannot hold them all.
 */
export const lintCommand: SlackCommand = {
  async run(words, ctx) {
    const channel = await channelFlags(ctx);
    const input = parseLint(words, channel.defaults);
    if (input.file !== undefined)
      throw new InputError('In Slack, lint takes no file: /rmq lint [--vhost V] [--env E].', {
        usage: 'lint [--vhost V] [--env E]',
      });
    const { name: env, broker } = ctx.environments.pick(input.env);
    const log = ctx.logger.child({ env, vhost: input.vhost });
    const result = await lint(input, broker, { env });
    const { file, ...message } = lintView(result);
    log.info(
      {
        answer: result.answer,
        why: result.why,
        findings: result.findings.length,
        objects: result.objects,
        file: file ? { filename: file.filename, bytes: Buffer.byteLength(file.content) } : null,
      },
      'lint answered',
    );
    return {
      message: withAnsweredFor(message, channel.answeredFor(words, env, input.vhost)),
      audience: 'channel',
      outcome: result.answer === 'not-asked' ? 'not-asked' : 'answered',
      ...(file ? { file } : {}),
    };
  },
};
