import { type CommandName, commandsOf } from '../../commands/index.ts';
import { createCommand } from './create.ts';
import { deleteCommand } from './delete.ts';
import { editCommand } from './edit.ts';
import { freezeCommand, unfreezeCommand } from './freeze.ts';
import { helpCommand } from './help.ts';
import { historyCommand } from './history.ts';
import { importCommand } from './import.ts';
import { linksCommand } from './links.ts';
import { lintCommand } from './lint.ts';
import { pathCommand } from './path.ts';
import { planCommand } from './plan.ts';
import { policiesCommand } from './policies.ts';
import { previewCommand } from './preview.ts';
import { recreateCommand } from './recreate.ts';
import { requestsCommand } from './requests.ts';
import type { SlackCommand } from './types.ts';
import { useCommand } from './use.ts';
import { whichCommand } from './which.ts';

/**
 * Slack's handler of every command in the table (`src/commands/registry.ts`), keyed by its name: the
 * compiler refuses a missing command or one the table does not have. A new handler is a
 * SlackCommand in its own module here (see which.ts).
 */
const SLACK_COMMANDS: { readonly [N in CommandName]: SlackCommand } = {
  policies: policiesCommand,
  which: whichCommand,
  preview: previewCommand,
  plan: planCommand,
  create: createCommand,
  edit: editCommand,
  delete: deleteCommand,
  recreate: recreateCommand,
  import: importCommand,
  lint: lintCommand,
  links: linksCommand,
  path: pathCommand,
  requests: requestsCommand,
  history: historyCommand,
  use: useCommand,
  freeze: freezeCommand,
  unfreeze: unfreezeCommand,
  help: helpCommand,
};

/** What Slack answers, in the table's order: every command, by the word that names it. */
export const COMMANDS: ReadonlyMap<string, SlackCommand> = new Map(
  commandsOf('slack').map(({ name }) => [name, SLACK_COMMANDS[name as CommandName]] as const),
);

export type { EnvironmentBroker, Environments, SlackBroker } from '../environments.ts';
export type { CommandContext, Records, SlackCommand } from './types.ts';
