import { parseRequests, requests } from '../../commands/requests/index.ts';
import { requestsView } from '../views/requests.ts';
import { channelFlags } from './defaults.ts';
import { fromStore } from './records.ts';
import type { SlackCommand } from './types.ts';

/** `/rmq requests [--env E]`: the open change requests, to the asker (read-only). */
export const requestsCommand: SlackCommand = {
  async run(words, ctx) {
    const input = parseRequests(words, (await channelFlags(ctx)).defaults);
    const result = await fromStore(ctx, (r) => requests(input, r.requests));
    ctx.logger.info({ env: input.env, open: result.requests.length }, 'requests answered');
    return { message: requestsView(result), audience: 'asker', outcome: 'answered' };
  },
};
