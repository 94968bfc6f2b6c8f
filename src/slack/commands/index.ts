import { helpCommand } from './help.ts';
import type { SlackCommand } from './types.ts';
import { whichCommand } from './which.ts';

/**
 * Every subcommand Slack answers, by the word that names it. This is the one place a new one is
 * added: `preview` goes here once commands/preview.ts and src/slack/views/preview.ts exist, as
 * a SlackCommand in src/slack/commands/preview.ts (see which.ts for the shape).
 */
export const COMMANDS: ReadonlyMap<string, SlackCommand> = new Map(
  [whichCommand, helpCommand].map((c) => [c.name, c] as const),
);

export type {
  Answer,
  CommandContext,
  EnvironmentBroker,
  Environments,
  SlackBroker,
  SlackCommand,
} from './types.ts';
