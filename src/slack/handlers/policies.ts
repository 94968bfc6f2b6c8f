import { policiesAt } from '../../commands/at/index.ts';
import { parsePolicies, policies } from '../../commands/policies/index.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { policiesAtView } from '../views/at.ts';
import { policiesView } from '../views/policies.ts';
import { channelFlags } from './defaults.ts';
import { fromStore } from './records.ts';
import type { SlackCommand } from './types.ts';

/**
 * `/rmq policies [--vhost V]`: the vhost's policies by priority, for everyone in the channel or
 * thread; the whole list as a file beside the message when the message cannot hold it. With
 * `--at TIME`, the list then, replayed from the audit trail.
 */
export const policiesCommand: SlackCommand = {
  async run(words, ctx) {
    const channel = await channelFlags(ctx);
    const input = parsePolicies(words, channel.defaults);
    const { name: env, broker } = ctx.environments.pick(input.env, input.vhost);
    const log = ctx.logger.child({ env, vhost: input.vhost });
    const when = input.at;
    if (when) {
      const past = await fromStore(ctx, (r) => policiesAt({ ...input, at: when }, env, r.history));
      const { file, ...message } = policiesAtView(past);
      log.info({ at: past.at, known: past.known, policies: past.policies.length }, 'policies --at answered');
      return {
        message: withAnsweredFor(message, channel.answeredFor(words, env, input.vhost)),
        audience: 'channel',
        outcome: 'answered',
        ...(file ? { file } : {}),
      };
    }
    const result = await policies(input, broker);
    const { file, ...message } = policiesView(result);
    log.info(
      {
        answer: result.answer,
        why: result.why,
        policies: result.policies.length,
        operatorPolicies: result.operatorPolicies.length,
        file: file ? { filename: file.filename, bytes: Buffer.byteLength(file.content) } : null,
      },
      'policies answered',
    );
    return {
      message: withAnsweredFor(message, channel.answeredFor(words, env, input.vhost)),
      audience: 'channel',
      outcome: result.answer === 'not-asked' ? 'not-asked' : 'answered',
      ...(file ? { file } : {}),
    };
  },
};
