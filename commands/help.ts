import { HISTORY_USAGE } from './history.ts';
import { WHICH_USAGE } from './parse.ts';
import { PREVIEW_USAGE } from './preview.ts';
import { REQUESTS_USAGE } from './requests.ts';

/** Every command that exists, its usage line (written once, beside its parser) and what it does. */
export const COMMANDS_USAGE = [
  [WHICH_USAGE, 'which policy governs a queue or exchange'],
  [PREVIEW_USAGE, 'what a change would do to every object it touches'],
  [REQUESTS_USAGE, 'change requests still open (pending, approved, applying)'],
  [HISTORY_USAGE, 'the audit trail of applied changes; --verify checks its hash chain'],
  ['help', 'this text'],
] as const;

/** The commands' names, as the first word of their usage lines. */
export const COMMAND_NAMES: readonly string[] = COMMANDS_USAGE.map(([usage]) => usage.split(' ')[0] ?? usage);

export function helpText(prefix: string): string {
  const lines = COMMANDS_USAGE.map(([usage, what]) => `  ${prefix} ${usage}\n      ${what}`);
  return `Usage:\n${lines.join('\n')}\n`;
}

export { WHICH_USAGE };
