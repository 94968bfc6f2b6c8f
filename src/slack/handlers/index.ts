import { createCommand } from './create.ts';
import { deleteCommand } from './delete.ts';
import { editCommand } from './edit.ts';
import { helpCommand } from './help.ts';
import { historyCommand } from './history.ts';
import { policiesCommand } from './policies.ts';
import { previewCommand } from './preview.ts';
import { requestsCommand } from './requests.ts';
import type { SlackCommand } from './types.ts';
import { useCommand } from './use.ts';
import { whichCommand } from './which.ts';

/**
 * Every subcommand Slack answers, by the word that names it. This is the one place a new one is
 * added (a SlackCommand in its own module here; see which.ts for the shape); `help` lists what
 * is in this table.
 */
export const COMMANDS: ReadonlyMap<string, SlackCommand> = new Map(
  [
    policiesCommand,
    whichCommand,
    previewCommand,
    createCommand,
    editCommand,
    deleteCommand,
    requestsCommand,
    historyCommand,
    useCommand,
    helpCommand,
  ].map((c) => [c.name, c] as const),
);

export type { EnvironmentBroker, Environments, SlackBroker } from '../environments.ts';
export type { CommandContext, Records, SlackCommand } from './types.ts';
