import type { StoredDefaults } from '../channelDefaults.ts';
import { code, prose, truncate } from '../escape.ts';
import { finish, type SlackMessage, section } from './message.ts';

/** `/rmq use`: this channel's defaults, shown, set or removed. Pure; every name escaped. */

const name = (s: string) => code(truncate(s, 200));

function who(d: StoredDefaults): string {
  const by = d.by && /^[UW][A-Z0-9]+$/.test(d.by) ? ` by <@${d.by}>` : '';
  const at = d.at ? ` at ${prose(d.at.replace('T', ' ').slice(0, 16))} UTC` : '';
  return by || at ? ` (set${by}${at})` : '';
}

function pair(d: { env?: string | undefined; vhost?: string | undefined }, builtIn: { env: string }): string {
  const env = d.env
    ? `environment ${name(d.env)}`
    : `environment ${name(builtIn.env)} (no default: the first configured)`;
  const vhost = d.vhost ? `vhost ${name(d.vhost)}` : `vhost ${name('/')} (no default)`;
  return `${vhost} in ${env}`;
}

export function defaultsShownView(d: StoredDefaults, builtIn: { env: string }, prefix: string): SlackMessage {
  if (!d.env && !d.vhost) {
    return finish(
      [
        section(
          `This channel has no defaults: commands here use ${pair({}, builtIn)} unless a flag says otherwise. Set them with ${code(`${prefix} use --env E --vhost V`)}.`,
        ),
      ],
      'This channel has no defaults.',
    );
  }
  return finish(
    [
      section(
        `This channel's defaults: ${pair(d, builtIn)}${who(d)}. Every command here and in its threads uses them unless a flag says otherwise; ${code(`${prefix} use --clear`)} removes them.`,
      ),
    ],
    "This channel's defaults.",
  );
}

export function defaultsSetView(
  d: StoredDefaults,
  builtIn: { env: string },
  note: string | undefined,
): SlackMessage {
  const blocks = [
    section(
      `:pushpin: From now on, commands in this channel and its threads answer for ${pair(d, builtIn)} unless a flag says otherwise${who(d)}.`,
    ),
  ];
  if (note) blocks.push(section(`_${prose(note)}_`));
  return finish(blocks, "This channel's defaults were set.");
}

export function defaultsClearedView(had: boolean, prefix: string): SlackMessage {
  return finish(
    [
      section(
        had
          ? `This channel's defaults were removed: commands here use ${code('--vhost /')} and the first environment unless a flag says otherwise.`
          : `This channel had no defaults to remove. Set some with ${code(`${prefix} use --env E --vhost V`)}.`,
      ),
    ],
    had ? "This channel's defaults were removed." : 'This channel had no defaults.',
  );
}
