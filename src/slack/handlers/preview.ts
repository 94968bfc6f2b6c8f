import { parsePreview, previewExitCode } from '../../commands/preview/index.ts';
import { preview } from '../../preview/index.ts';
import type { Deliverable } from '../delivery.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { previewView } from '../views/preview.ts';
import { channelFlags } from './defaults.ts';
import type { SlackCommand } from './types.ts';

/**
 * `/rmq preview delete|create|edit POLICY …`: what the change would do to every object, for
 * everyone in the channel or thread. When the objects do not fit one message, the answer
 * carries the full list as a file, which the listener uploads beside it. A change the
 * validation refuses (or a vhost that does not exist) goes to the asker alone, with what to
 * fix, as a malformed flag does; a broker that cannot be asked is said so, claiming nothing.
 * Writes nothing.
 */
export const previewCommand: SlackCommand = {
  async run(words, ctx): Promise<Deliverable> {
    const channel = await channelFlags(ctx);
    const input = parsePreview(words, {}, { defaults: channel.defaults });
    const { name: env, broker } = ctx.environments.pick(input.env, input.vhost);
    const log = ctx.logger.child({ env, vhost: input.vhost, policy: input.name, action: input.action });
    const result = await preview(input, broker);
    const { file, ...view } = previewView(result);
    const message = withAnsweredFor(view, channel.answeredFor(words, env, input.vhost));

    if (result.status === 'answered') {
      log.info(
        {
          objects: result.objects.length,
          unpredictable: result.unpredictable.length,
          risks: result.summary.risks.map((r) => r.risk),
          file: file ? { filename: file.filename, bytes: Buffer.byteLength(file.content) } : null,
          ms: result.ms,
        },
        'preview answered',
      );
      return { message, audience: 'channel', outcome: 'answered', ...(file ? { file } : {}) };
    }
    if (previewExitCode(result) === 2) {
      // Refused by the validation, or no such vhost: the asker's to fix, not the channel's to read.
      const refused =
        result.status === 'refused' ? result.refusals.map((p) => p.code) : [`not-asked:${result.why}`];
      log.info({ refused }, 'preview refused');
      return { message, audience: 'asker', outcome: 'refused' };
    }
    log.warn({ why: result.status === 'not-asked' ? result.why : undefined }, 'broker not asked');
    return { message, audience: 'channel', outcome: 'not-asked' };
  },
};
