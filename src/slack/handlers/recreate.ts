import { parseRecreate } from '../../commands/change/index.ts';
import { InputError } from '../../core/index.ts';
import { isWorkflowError } from '../../workflow/index.ts';
import type { Deliverable } from '../delivery.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { recreateReasonPrompt } from '../views/recreate.ts';
import { filedView } from '../views/request.ts';
import { requestRefusedView, slackRefusal } from '../views/requestRefusals.ts';
import { channelFlags } from './defaults.ts';
import type { SlackCommand } from './types.ts';

/**
 * `/rmq recreate POLICY --reason TEXT …`: files the policy's re-creation (deleted, then created
 * again as it is) as one change request with its preview, posted where the links' button posts it.
 * Without a reason the bot asks for it in a form (a mention: a button opens it).
 */
export const recreateCommand: SlackCommand = {
  async run(words, ctx): Promise<Deliverable> {
    const { changes, asker } = ctx;
    if (!changes) throw new InputError(slackRefusal('not-set-up'));
    if (!asker) throw new InputError(slackRefusal('no-asker'));
    const channel = await channelFlags(ctx);
    const input = parseRecreate(words, channel.defaults);
    const origin = input.thread ?? {
      channel: asker.channel,
      ...(asker.threadTs ? { threadTs: asker.threadTs } : {}),
    };
    const env = ctx.environments.pick(input.env, input.vhost).name;
    const refused = (err: unknown): Deliverable => {
      if (!isWorkflowError(err)) throw err;
      return { message: requestRefusedView(err), audience: 'asker', outcome: 'refused' };
    };
    try {
      await changes.workflow.mayRequest(env, asker.user);
    } catch (err) {
      return refused(err);
    }
    const target = {
      env,
      vhost: input.vhost,
      policy: input.policy,
      origin,
      ...(input.breakGlass ? { breakGlass: true } : {}),
    };
    if (input.reason === undefined) {
      const opened = asker.triggerId
        ? await changes.openReasonForm(
            { for: 'recreate', ...target },
            'Re-creating a policy is a change request and needs your reason: approvers read it.',
            asker.triggerId,
          )
        : { ok: false };
      return { message: recreateReasonPrompt(target, opened.ok), audience: 'asker', outcome: 'answered' };
    }
    const outcome = await changes.recreate(target, asker.user, input.reason);
    if (!outcome.ok) return refused(outcome.error);
    return {
      message: withAnsweredFor(
        filedView(outcome.request, outcome.approvals, outcome.posted),
        channel.answeredFor(words, env, input.vhost),
      ),
      audience: 'channel',
      outcome: 'answered',
    };
  },
};
