import { WHICH_USAGE } from './parse.ts';

export const COMMANDS_USAGE = [
  [
    'which NAME [--kind classic|quorum|stream|exchange] [--vhost V] [--env E]',
    'which policy governs a queue or exchange',
  ],
  [
    'preview delete|create|edit POLICY [--pattern P] [--apply-to A] [--priority N] [--definition JSON] [--operator] [--vhost V] [--env E]',
    'what a change would do to every object it touches',
  ],
  ['requests [--env E]', 'change requests still open (pending, approved, applying)'],
  [
    'history [POLICY or NAME] [--vhost V] [--env E] [--verify]',
    'the audit trail of applied changes; --verify checks its hash chain',
  ],
  ['help', 'this text'],
] as const;

export function helpText(prefix: string): string {
  const lines = COMMANDS_USAGE.map(([usage, what]) => `  ${prefix} ${usage}\n      ${what}`);
  return `Usage:\n${lines.join('\n')}\n`;
}

export { WHICH_USAGE };
