import { history, parseHistory } from '../../commands/history/index.ts';
import { historyView } from '../views/history.ts';
import { channelFlags } from './defaults.ts';
import { fromStore } from './records.ts';
import type { SlackCommand } from './types.ts';

/** `/rmq history [POLICY or NAME] [--since TIME] [--until TIME] [--vhost V] [--env E] [--verify]`: the audit trail, in the channel; in a thread, the thread's span unless --since. */
export const historyCommand: SlackCommand = {
  async run(words, ctx) {
    // Asked in a thread without --since: the thread's own span, from its first message to now.
    const input = parseHistory(words, (await channelFlags(ctx)).defaults, { threadTs: ctx.asker?.threadTs });
    const result = await fromStore(ctx, (r) => history(input, r.history));
    ctx.logger.info(
      { name: input.name, entries: result.entries.length, verified: result.verify?.ok },
      'history answered',
    );
    return { message: historyView(result), audience: 'channel', outcome: 'answered' };
  },
};
