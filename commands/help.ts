import { HISTORY_USAGE } from './history.ts';
import { PREVIEW_USAGE, WHICH_USAGE } from './parse.ts';
import { POLICIES_USAGE } from './policies.ts';
import { REQUESTS_USAGE } from './requests.ts';

/** Slack only: a channel's defaults (the handler is src/slack/handlers/use.ts). */
export const USE_USAGE = 'use [--env E] [--vhost V] [--clear]';

/** Change requests: asked in Slack only (they need a requester, an approver and their reasons). */
export const CHANGE_USAGE = {
  delete: 'delete POLICY --reason TEXT [--operator] [--vhost V] [--env E] [--thread LINK]',
  create:
    'create NAME [--pattern P --definition JSON [--apply-to A] [--priority N]] [--reason TEXT] [--for DURATION] [--operator] [--vhost V] [--env E] [--thread LINK]',
  edit: 'edit POLICY [--pattern P] [--apply-to A] [--priority N] [--definition JSON] [--reason TEXT] [--for DURATION] [--operator] [--vhost V] [--env E] [--thread LINK]',
} as const;
const SLACK_ONLY: ReadonlySet<string> = new Set([...Object.keys(CHANGE_USAGE), 'use']);

/** Every command that exists, its usage line (written once, beside its parser) and what it does. */
export const COMMANDS_USAGE = [
  [POLICIES_USAGE, "the vhost's policies by priority, unanchored ones marked; operator policies apart"],
  [WHICH_USAGE, 'which policy governs a queue or exchange'],
  [PREVIEW_USAGE, 'what a change would do to every object it touches'],
  [CHANGE_USAGE.create, 'request a new policy (without field flags: a form); an approver applies it'],
  [CHANGE_USAGE.edit, 'request a change to a policy (without field flags: a form, filled in)'],
  [CHANGE_USAGE.delete, 'request the deletion of a policy'],
  [REQUESTS_USAGE, 'change requests still open (pending, approved, applying)'],
  [HISTORY_USAGE, 'the audit trail of applied changes; --verify checks its hash chain'],
  [
    USE_USAGE,
    "Slack only: this channel's defaults for every later command in it and its threads; bare use shows them",
  ],
  ['help', 'this text'],
] as const;

/** The commands' names, as the first word of their usage lines. */
export const COMMAND_NAMES: readonly string[] = COMMANDS_USAGE.map(([usage]) => usage.split(' ')[0] ?? usage);

export function helpText(prefix: string): string {
  const lines = COMMANDS_USAGE.filter(([usage]) => !SLACK_ONLY.has(usage.split(' ')[0] ?? '')).map(
    ([usage, what]) => `  ${prefix} ${usage}\n      ${what}`,
  );
  return `Usage:\n${lines.join('\n')}\n\n--vhost defaults to RMQ_VHOST when set, else /; --env to the first environment.\n`;
}

export { WHICH_USAGE };
