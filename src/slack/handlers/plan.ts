import { PLAN_USAGE } from '../../../commands/planUsage.ts';
import { InputError } from '../../errors.ts';
import type { SlackCommand } from './types.ts';

/**
 * `plan FILE` in Slack reads a definitions file attached to the message that mentions the bot;
 * until the bot downloads attachments (issue 26, the import through Slack), it says where the
 * plan is made today rather than guessing at a file it cannot see.
 */
export const planCommand: SlackCommand = {
  async run() {
    throw new InputError(
      'In Slack, plan reads a definitions file attached to the message that mentions the bot, which this bot does not download yet: run `rmq plan FILE` in a terminal or a CI job (docs/plan.md).',
      { usage: PLAN_USAGE },
    );
  },
};
