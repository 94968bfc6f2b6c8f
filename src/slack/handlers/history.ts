import { history, parseHistory } from '../../commands/history/index.ts';
import { historyView } from '../views/history.ts';
import { channelFlags } from './defaults.ts';
import { fromStore } from './records.ts';
import type { SlackCommand } from './types.ts';

/** `/rmq history [POLICY or NAME] [--vhost V] [--env E] [--verify]`: the audit trail, in the channel. */
export const historyCommand: SlackCommand = {
  async run(words, ctx) {
    const input = parseHistory(words, (await channelFlags(ctx)).defaults);
    const result = await fromStore(ctx, (r) => history(input, r.history));
    ctx.logger.info(
      { name: input.name, entries: result.entries.length, verified: result.verify?.ok },
      'history answered',
    );
    return { message: historyView(result), audience: 'channel', outcome: 'answered' };
  },
};
