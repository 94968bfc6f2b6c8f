import { parseChange } from '../../commands/change/index.ts';
import { usageOf } from '../../commands/index.ts';
import { InputError } from '../../core/index.ts';
import type { Logger } from '../../log/index.ts';
import { isWorkflowError } from '../../workflow/index.ts';
import type { Deliverable, Sent } from '../delivery.ts';
import { channelFlags } from '../handlers/defaults.ts';
import type { Asker, CommandContext, SlackCommand } from '../handlers/types.ts';
import { SLACK_LIMITS } from '../limits.ts';
import { withAnsweredFor } from '../views/answeredFor.ts';
import { type Draft, encodeMeta } from '../views/forms.ts';
import { filedView } from '../views/request.ts';
import { type FormKind, openFormPrompt } from '../views/requestPrompts.ts';
import { requestRefusedView, slackRefusal } from '../views/requestRefusals.ts';

/**
 * `/rmq delete|create|edit POLICY …` and the same as a mention, in Slack: the words are read by
 * the command (src/commands/change/); the result is posted to `--thread`, by default the thread
 * the mention was made in, or the channel of the command. `create`/`edit` without
 * any field flag open the policy form; a missing required reason opens the reason form. A
 * slash command opens forms at once (it carries a trigger); a mention has none, so its asker
 * gets a button that opens the form.
 */

function toAsker(message: Deliverable['message']): Deliverable {
  return { message, audience: 'asker', outcome: 'refused' };
}

async function run(
  action: Draft['action'],
  words: readonly string[],
  ctx: CommandContext,
): Promise<Deliverable> {
  const usage = usageOf(action);
  const changes = ctx.changes;
  const asker = ctx.asker;
  if (!changes) throw new InputError(slackRefusal('not-set-up'));
  if (!asker) throw new InputError(slackRefusal('no-asker'));
  // The channel's defaults (`/rmq use`) hold for a change request as for a question.
  const channel = await channelFlags(ctx);
  const { input, reason, thread, timeBoxMs, breakGlass } = parseChange(action, words, channel.defaults);
  const origin = thread ?? {
    channel: asker.channel,
    ...(asker.threadTs ? { threadTs: asker.threadTs } : {}),
  };
  const env = ctx.environments.pick(input.env, input.vhost).name;
  const draft: Draft = {
    action,
    policy: input.name,
    env,
    vhost: input.vhost,
    layer: input.layer,
    origin,
    fields: input.fields,
    ...(timeBoxMs === undefined ? {} : { timeBoxMs }),
    ...(breakGlass ? { breakGlass: true } : {}),
  };
  const log = ctx.logger.child({ env, vhost: draft.vhost, policy: draft.policy, action });

  // Who may ask is checked before any form opens: someone else is told who can, and nothing is filed.
  try {
    await changes.workflow.mayRequest(env, asker.user);
  } catch (err) {
    if (isWorkflowError(err)) return toAsker(requestRefusedView(err));
    throw err;
  }

  if (action !== 'delete' && Object.keys(input.fields).length === 0) {
    return formPrompt('policy', draft, asker, log, usage, (trigger) =>
      changes.openPolicyForm(draft, trigger),
    );
  }

  const outcome = await changes.file(draft, asker.user, reason);
  if (outcome.ok) {
    return {
      message: withAnsweredFor(
        filedView(outcome.request, outcome.approvals, outcome.posted),
        channel.answeredFor(words, env, draft.vhost),
      ),
      audience: 'channel',
      outcome: 'answered',
    };
  }
  const err = outcome.error;
  if (err.code === 'reason-required') {
    return formPrompt('reason', draft, asker, log, usage, (trigger) =>
      changes.openReasonForm({ for: 'file', draft }, err.message, trigger),
    );
  }
  return toAsker(requestRefusedView(err));
}

/**
 * A form the request needs: opened at once with a slash command's trigger; after a mention (no
 * trigger), or when the trigger could not be used, a button that opens it.
 */
async function formPrompt(
  kind: FormKind,
  draft: Draft,
  asker: Asker,
  log: Logger,
  usage: string,
  open: (triggerId: string) => Promise<Sent>,
): Promise<Deliverable> {
  if (asker.triggerId) {
    const opened = await open(asker.triggerId);
    log.info({ form: kind, opened: opened.ok, error: opened.ok ? undefined : opened.error }, 'form opened');
    if (opened.ok)
      return {
        message: openFormPrompt(kind, draft, { opened: true }),
        audience: 'asker',
        outcome: 'answered',
      };
  }
  if (encodeMeta({ form: kind, draft }).length > SLACK_LIMITS.buttonValue)
    throw new InputError(slackRefusal('form-too-large'), { usage });
  return { message: openFormPrompt(kind, draft), audience: 'asker', outcome: 'answered' };
}

/** The SlackCommand of one request word. */
export function changeCommand(action: Draft['action']): SlackCommand {
  return { run: (words, ctx) => run(action, words, ctx) };
}
