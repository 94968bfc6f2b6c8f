import { usageOf } from '../../commands/index.ts';
import { parsePlan, planReadOptions, planVhosts, runPlan } from '../../commands/plan/index.ts';
import { InputError } from '../../core/index.ts';
import { readDefinitions } from '../../definitions/index.ts';
import { pickForVhosts } from '../environments.ts';
import { planView } from '../views/plan.ts';
import { attachedDefinitions } from './attached.ts';
import { channelFlags } from './defaults.ts';
import type { SlackCommand } from './types.ts';

/**
 * `@rmq plan [NAME] [--vhost V] [--vhost-map FROM=TO …] [--env E] [--prune]` with a definitions
 * file attached to the mention: the plan of the set, for everyone in the channel or thread, the
 * loss first; the whole plan as a file beside it. Writes nothing. The channel's default
 * environment holds; its default vhost does not (the file names its vhosts; `--vhost` picks one),
 * and each vhost planned is one the environment answers about.
 */
export const planCommand: SlackCommand = {
  async run(words, ctx) {
    const channel = await channelFlags(ctx);
    const input = parsePlan(words, { attached: true });
    const file = await attachedDefinitions(ctx, input.file, 'plan', usageOf('plan'));
    const read = readDefinitions(file.bytes, planReadOptions(input));
    // The file refused is not a usage error: no usage line.
    if (!read.ok) throw new InputError(read.problem);
    const { name: env, broker } = pickForVhosts(ctx.environments)(
      input.env ?? channel.defaults.env,
      planVhosts(input, read),
    );
    const result = await runPlan(input, read, broker);
    const { file: whole, ...message } = planView(result, file.name);
    ctx.logger.info(
      {
        env,
        status: result.status,
        changes: result.status === 'planned' ? result.plan.changes.length : undefined,
        bytes: file.bytes.length,
      },
      'plan answered',
    );
    return {
      message,
      audience: result.status === 'planned' ? 'channel' : 'asker',
      outcome:
        result.status === 'planned' ? 'answered' : result.status === 'refused' ? 'refused' : 'not-asked',
      ...(whole && result.status === 'planned' ? { file: whole } : {}),
    };
  },
};
