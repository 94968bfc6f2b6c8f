import { sinceThreadStart, threadWords, whichAt } from '../../commands/at/index.ts';
import { parseWhich } from '../../commands/index.ts';
import { which } from '../../commands/which/index.ts';
import { code, truncate } from '../escape.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { whichAtView } from '../views/at.ts';
import { context, type SlackMessage, slackDate } from '../views/message.ts';
import { whichView } from '../views/which.ts';
import { channelFlags } from './defaults.ts';
import { fromStore } from './records.ts';
import type { SlackCommand } from './types.ts';

/**
 * `/rmq which NAME …`: the broker's answer, explained, for everyone in the channel or thread;
 * with `--at TIME`, the answer then, recomputed from the audit trail.
 */
export const whichCommand: SlackCommand = {
  async run(words, ctx) {
    const channel = await channelFlags(ctx);
    const input = parseWhich(words, {}, channel.defaults);
    const { name: env, broker } = ctx.environments.pick(input.env, input.vhost);
    const log = ctx.logger.child({ env, vhost: input.vhost, object: input.name, kind: input.kind });
    const when = input.at;
    if (when) {
      const result = await fromStore(ctx, (r) =>
        whichAt(
          { ...input, at: when },
          env,
          broker,
          r.history,
          ctx.patterns ? { patterns: ctx.patterns } : {},
        ),
      );
      log.info(
        { at: result.at, known: result.known, inForce: result.inForce?.name ?? null },
        'which --at answered',
      );
      return {
        message: withAnsweredFor(whichAtView(result), channel.answeredFor(words, env, input.vhost)),
        audience: 'channel',
        outcome: 'answered',
      };
    }
    const result = await which(input, broker, { patterns: ctx.patterns });
    log.info(
      { answer: result.answer, why: result.why, inForce: result.inForce?.name ?? null },
      'which answered',
    );
    let view: SlackMessage = whichView(result);
    // In an incident thread over an hour old: what governed when it started, when that differs.
    const records = ctx.records;
    if (records && ctx.asker?.threadTs) {
      try {
        const change = await sinceThreadStart(
          input,
          result,
          ctx.asker.threadTs,
          env,
          broker,
          records.history,
        );
        if (change) {
          const line = threadWords(
            change,
            slackDate,
            (s) => code(truncate(s, 200)),
            (v) => code(JSON.stringify(v)),
          );
          view = { ...view, blocks: [...view.blocks, context(`:thread: ${line}`)] };
        }
      } catch (err) {
        // The answer now stands without it: the trail could not be read.
        log.warn({ err: String(err) }, 'which: the thread start could not be read from the trail');
      }
    }
    return {
      message: withAnsweredFor(view, channel.answeredFor(words, env, input.vhost)),
      audience: 'channel',
      outcome: result.answer === 'not-asked' ? 'not-asked' : 'answered',
    };
  },
};
