import { InputError } from '../../errors.ts';
import type { SlackCommand } from './types.ts';

/**
 * `/rmq import`: in Slack a set comes as a file attached to the message that mentions the bot,
 * which this bot does not read yet; it says so, and how to file the set from the terminal or CI.
 */
export const importCommand: SlackCommand = {
  async run() {
    throw new InputError(
      'import from Slack (a file attached to a mention) is not taken yet: file the set from the terminal or CI with `rmq import FILE --reason …` (RMQ_BOT_URL, RMQ_BOT_TOKEN); it is approved here as any request.',
    );
  },
};
