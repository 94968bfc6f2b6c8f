import { commandsOf } from './registry.ts';

/** The terminal's help: every command it answers, from the one table (`registry.ts`). */
export function helpText(prefix: string): string {
  const lines = commandsOf('terminal').map(({ usage, does }) => `  ${prefix} ${usage}\n      ${does}`);
  return `Usage:\n${lines.join('\n')}\n\n${[
    '--vhost defaults to RMQ_VHOST when set, else /; --env to the first environment.',
    'plan, import and lint FILE take every vhost the file names unless --vhost is given; FILE may be - (standard input) or a folder of .json/.yaml files.',
    '--json after any command prints its answer as one JSON document instead (docs/json.md).',
    "--version (instead of a command) prints the package's name and version.",
  ].join('\n')}\n`;
}
