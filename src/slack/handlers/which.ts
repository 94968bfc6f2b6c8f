import { whichAt } from '../../commands/at/index.ts';
import { parseWhich } from '../../commands/index.ts';
import { which } from '../../commands/which/index.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { whichAtView } from '../views/at.ts';
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
    return {
      message: withAnsweredFor(whichView(result), channel.answeredFor(words, env, input.vhost)),
      audience: 'channel',
      outcome: result.answer === 'not-asked' ? 'not-asked' : 'answered',
    };
  },
};
