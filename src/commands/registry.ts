/**
 * Every command there is, in one table: its name, its usage line, what it does, and whether it is
 * asked in Slack only. Help (`help.ts`, `src/slack/views/help.ts`), the terminal (`src/terminal/cli.ts`)
 * and Slack (`src/slack/handlers/index.ts`) all read it; adding a command is one entry here and
 * its modules.
 *
 * The handlers are not in this table but in one map per front door, keyed by the table's names
 * and typed from it, so the compiler refuses a front door that misses a command or answers one
 * the table does not have: the terminal's map (`TERMINAL_COMMANDS` in `src/terminal/cli.ts`) has every
 * command that is not `slackOnly`, Slack's (`SLACK_COMMANDS`) has all of them. Why two maps and
 * not two columns: the terminal's bundle must never load a Slack module (scripts/build.ts
 * `cliMustNotLoad`), and `commands/` never imports a front door.
 */
export interface CommandEntry {
  /** The first word after `rmq` or `/rmq`. */
  readonly name: string;
  /**
   * Without the prefix; starts with the name. Every command's usage line is here and nowhere else:
   * its parser reads it with `usageOf`, and help lists them all without loading any command.
   */
  readonly usage: string;
  /** One line for help. */
  readonly does: string;
  /** Asked in Slack only (it needs a channel, a requester or an approver): the terminal neither lists nor answers it. */
  readonly slackOnly: boolean;
}

/** The flags every change request (create, edit, delete) takes beside its own. */
const CHANGE_FLAGS = '[--operator] [--vhost V] [--env E] [--thread LINK]';

/** In the order help lists them. */
export const COMMAND_TABLE = [
  {
    name: 'policies',
    usage: 'policies [--vhost V] [--env E] [--at TIME]',
    does: "the vhost's policies by priority, unanchored ones marked; operator policies apart",
    slackOnly: false,
  },
  {
    name: 'which',
    usage: 'which NAME [--kind classic|quorum|stream|exchange] [--vhost V] [--env E] [--at TIME]',
    does: 'which policy governs a queue or exchange',
    slackOnly: false,
  },
  {
    name: 'preview',
    usage:
      'preview delete|create|edit POLICY [--pattern P] [--apply-to A] [--priority N] [--definition JSON | --set KEY=JSON … --unset KEY …] [--operator] [--vhost V] [--env E]',
    does: 'what a change would do to every object it touches',
    slackOnly: false,
  },
  {
    name: 'plan',
    usage: 'plan FILE [--vhost V] [--vhost-map FROM=TO …] [--env E] [--prune] [--detailed-exitcode]',
    does: 'a definitions file against the broker: the changes in the order of writing, what every object gets, what the end state and every step on the way lose',
    slackOnly: false,
  },
  {
    name: 'create',
    usage: `create NAME [--pattern P --definition JSON [--apply-to A] [--priority N]] [--reason TEXT] [--for DURATION] ${CHANGE_FLAGS}`,
    does: 'request a new policy (without field flags: a form); an approver applies it',
    slackOnly: true,
  },
  {
    name: 'edit',
    usage: `edit POLICY [--pattern P] [--apply-to A] [--priority N] [--definition JSON | --set KEY=JSON … --unset KEY …] [--reason TEXT] [--for DURATION] ${CHANGE_FLAGS}`,
    does: 'request a change to a policy (without field flags: a form, filled in)',
    slackOnly: true,
  },
  {
    name: 'delete',
    usage: `delete POLICY --reason TEXT ${CHANGE_FLAGS}`,
    does: 'request the deletion of a policy',
    slackOnly: true,
  },
  {
    name: 'recreate',
    usage: 'recreate POLICY --reason TEXT [--vhost V] [--env E] [--thread LINK] [--break-glass]',
    does: 'request that a policy be deleted and created again as it is, one change set (what restarts its federation links: putting it again unchanged does not)',
    slackOnly: true,
  },
  {
    name: 'import',
    usage:
      'import FILE --reason TEXT [--vhost V] [--vhost-map FROM=TO …] [--env E] [--prune] [--thread LINK] [--for DURATION] [--break-glass]',
    does: "one change request for a definitions file's policies, filed through the bot (RMQ_BOT_URL, RMQ_BOT_TOKEN); applied in the plan's order, rolled back whole if a step fails",
    slackOnly: false,
  },
  {
    name: 'lint',
    usage:
      'lint [FILE] [--vhost V] [--vhost-map FROM=TO …] [--env E] [--fail-on error|warning] [--target-version 4.0|4.3]',
    does: "every surprise the vhost's policies hold for the objects there now: ties, unanchored patterns, policies that govern nothing, missing targets, queues expires will delete; with --target-version, what they would do differently on that version",
    slackOnly: false,
  },
  {
    name: 'links',
    usage: 'links [--vhost V] [--env E] [--against FILE] [--fail-on missing|stopped|risk]',
    does: "every federation link and shovel that should exist, whether it runs, where, and why not; the settings that lose messages; the link advisories for the broker's version",
    slackOnly: false,
  },
  {
    name: 'path',
    usage: 'path NAME [--kind classic|quorum|stream|exchange] [--vhost V] [--env E]',
    does: 'will the messages there survive? the chain to and from a queue or exchange, each failure judged',
    slackOnly: false,
  },
  {
    name: 'requests',
    usage: 'requests [--env E]',
    does: 'change requests still open (pending, approved, applying)',
    slackOnly: false,
  },
  {
    name: 'history',
    usage:
      'history [POLICY or NAME] [--since TIME] [--until TIME] [--vhost V] [--env E] [--verify [--against FILE]]',
    does: 'the audit trail of applied changes; --verify checks its hash chain',
    slackOnly: false,
  },
  {
    name: 'use',
    usage: 'use [--env E] [--vhost V] [--clear]',
    does: "Slack only: this channel's defaults for every later command in it and its threads; bare use shows them",
    slackOnly: true,
  },
  {
    name: 'freeze',
    usage: 'freeze [--env E] --for DURATION --reason TEXT',
    does: 'Slack only, approvers only: requests are filed and approved but nothing is applied until the freeze ends',
    slackOnly: true,
  },
  {
    name: 'unfreeze',
    usage: 'unfreeze [--env E] --reason TEXT',
    does: 'Slack only, approvers only: lift the freeze; the approved requests are applied in approval order',
    slackOnly: true,
  },
  { name: 'help', usage: 'help', does: 'this text', slackOnly: false },
] as const satisfies readonly CommandEntry[];

type Entry = (typeof COMMAND_TABLE)[number];
export type CommandName = Entry['name'];
/** The commands the terminal answers. */
export type TerminalCommandName = Extract<Entry, { slackOnly: false }>['name'];

/** The usage line of a command, without the prefix. */
export function usageOf(name: CommandName): string {
  const entry: CommandEntry | undefined = COMMAND_TABLE.find((e) => e.name === name);
  // Unreachable: `name` is typed from the table.
  if (!entry) throw new Error(`no command ${name}`);
  return entry.usage;
}

/** The table's entries a front door answers: Slack all of them, the terminal those not `slackOnly`. */
export function commandsOf(door: 'slack' | 'terminal'): readonly CommandEntry[] {
  return door === 'slack' ? COMMAND_TABLE : COMMAND_TABLE.filter((e) => !e.slackOnly);
}
