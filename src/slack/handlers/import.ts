import { parseThreadLink } from '../../commands/change/index.ts';
import { fileImport, parseImport } from '../../commands/import/index.ts';
import { usageOf } from '../../commands/index.ts';

import { InputError } from '../../core/index.ts';
import { pickForVhosts } from '../environments.ts';
import { filedView } from '../views/request.ts';
import { slackRefusal } from '../views/requestRefusals.ts';
import { attachedDefinitions } from './attached.ts';
import { channelFlags } from './defaults.ts';
import type { SlackCommand } from './types.ts';

const IMPORT_USAGE = usageOf('import');

/**
 * `@rmq import [NAME] --reason TEXT [--vhost V] [--env E] [--prune] [--thread LINK] [--for DURATION] [--break-glass]`
 * with a definitions file attached to the mention: one change request for the whole set, planned
 * and filed as the terminal's `import` files it through the bot (`fileImport`), the requester the
 * Slack user who mentioned the bot, posted to the approvals channel with its whole plan attached;
 * the result goes to the thread it was asked in (or `--thread`). Nothing is filed on a refusal.
 */
export const importCommand: SlackCommand = {
  async run(words, ctx) {
    const { changes, asker } = ctx;
    if (!changes) throw new InputError(slackRefusal('not-set-up'));
    if (!asker) throw new InputError(slackRefusal('no-asker'));
    const channel = await channelFlags(ctx);
    const input = parseImport(words, { env: channel.defaults.env }, { attached: true });
    const origin = input.body.thread
      ? parseThreadLink(input.body.thread, IMPORT_USAGE)
      : { channel: asker.channel, ...(asker.threadTs ? { threadTs: asker.threadTs } : {}) };
    const file = await attachedDefinitions(ctx, input.file, 'import', IMPORT_USAGE);
    const outcome = await fileImport(
      { workflow: changes.workflow, broker: pickForVhosts(ctx.environments) },
      { ...input.body, source: file.name, file: file.bytes.toString('utf8') },
      asker.user,
      origin,
    );
    const log = ctx.logger.child({ source: file.name, bytes: file.bytes.length });
    if (outcome.status === 'refused') {
      log.info({ code: outcome.code, problems: outcome.problems.length }, 'set refused; nothing filed');
      // The file or the plan refused: not a usage error, no usage line.
      throw new InputError(`Nothing was filed: ${outcome.problems.join(' ')}`);
    }
    if (outcome.status === 'not-asked')
      throw new InputError(
        `The broker could not be asked (${outcome.detail ?? outcome.why}): nothing was filed.`,
        { usage: IMPORT_USAGE },
      );
    const posted = await changes.postSet(outcome.request);
    log.info({ requestId: outcome.request.id, steps: outcome.plan.changes.length }, 'set filed from Slack');
    return {
      message: posted.ok
        ? filedView(outcome.request, posted.approvals, posted.posted)
        : filedView(outcome.request, origin.channel, { ok: false, error: posted.error.code }),
      audience: 'channel',
      outcome: 'answered',
    };
  },
};
