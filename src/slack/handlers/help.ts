import { helpView } from '../views/help.ts';
import type { SlackCommand } from './types.ts';

/** `/rmq help`: usage, to the asker only. */
export const helpCommand: SlackCommand = {
  async run(_words, ctx) {
    return { message: helpView(ctx.prefix, ctx.available), audience: 'asker', outcome: 'answered' };
  },
};
