import type { LinksEntry } from '../../audit/index.ts';
import { count } from '../../text/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { type Block, context, finish, listSection, type SlackMessage, section } from './message.ts';
import { recreateButtons } from './recreate.ts';

/**
 * Federation links and shovels that went down (or came back) as the links watch found them, as
 * posted to the approvals channel: one message for a burst (its records, one per vhost): each
 * link, where it ran, the broker's error or why it is missing, and the runbook's next step. Pure;
 * every user or broker string is escaped.
 */

type Link = LinksEntry['links'][number];

const MAX = { name: 200, reason: 300, next: 400 } as const;
const name = (s: string) => code(truncate(s, MAX.name));

/** How many links a post shows (the audit records hold them all). */
export const LINKS_SHOWN = 10;

const HOW: Readonly<Record<LinksEntry['detectedBy'], string>> = {
  interval: 'reading the links on the interval',
  start: 'reading the links when the bot started',
  nodes: 'reading the links right after a node went down or came back',
};

const STATE: Readonly<Record<Link['state'], string>> = {
  missing: 'missing',
  stopped: 'stopped',
  stuck: 'stuck starting',
  running: 'running again',
  gone: 'no longer asked for',
};

/** `exchange `x` ← upstream `u`` / `shovel `s``, in vhost `v` when the burst spans several. */
function what(l: Link, withVhost: boolean): string {
  const where = withVhost ? ` in vhost ${name(l.vhost)}` : '';
  if (l.kind === 'shovel') return `shovel ${name(l.object)}${where}`;
  return `${l.kind} ${name(l.object)}${l.upstream === null ? '' : ` ← upstream ${name(l.upstream)}`}${where}`;
}

function downLine(l: Link, withVhost: boolean): string {
  const node = l.node ? ` on ${code(l.node)}` : '';
  const reason = l.reason ? `: ${prose(truncate(l.reason, MAX.reason))}` : '';
  const policy = l.policy ? ` (policy ${name(l.policy)})` : '';
  const next = l.next ? `\n    _Next:_ ${prose(truncate(l.next, MAX.next))}` : '';
  return `• *${STATE[l.state]}*${node} — ${what(l, withVhost)}${policy}${reason}${next}`;
}

function backLine(l: Link, withVhost: boolean): string {
  const node = l.node ? ` on ${code(l.node)}` : '';
  return `• *${STATE[l.state]}*${node} — ${what(l, withVhost)} (down since ${code(l.since)})`;
}

function nodesWords(e: LinksEntry): string {
  const n = e.nodes;
  if (!n) return '';
  const parts = [
    n.down.length ? `node ${n.down.map((x) => code(x)).join(', ')} went down` : '',
    n.up.length ? `node ${n.up.map((x) => code(x)).join(', ')} came back` : '',
  ].filter(Boolean);
  return parts.length ? ` (${parts.join('; ')})` : '';
}

export function linksWatchView(entries: readonly LinksEntry[]): SlackMessage {
  const [first] = entries;
  if (!first) return finish([], '');
  const links = entries.flatMap((e) => e.links);
  const vhosts = [...new Set(entries.map((e) => e.vhost))];
  const several = vhosts.length > 1;
  const where = several ? `${vhosts.length} vhosts` : `vhost ${name(first.vhost)}`;
  const env = prose(first.env);
  const still = first.stillDown;
  const down = first.went === 'down';
  const head = down
    ? `:rotating_light: *${count(links.length, 'link')} that should run ${links.length === 1 ? 'is' : 'are'} down* in ${where} (${env})`
    : `:white_check_mark: *${count(links.length, 'link')} back* in ${where} (${env})`;
  const found = `Found by ${HOW[first.detectedBy]}${nodesWords(first)}.${
    down || still === 0 ? '' : ` ${count(still, 'link')} still down.`
  }`;
  const lines = links.map((l) => (down ? downLine(l, several) : backLine(l, several)));
  const blocks: Block[] = [
    section(`${head}\n${found}`),
    listSection(down ? '*Down, with the next step:*' : '*Back:*', lines, { maxItems: LINKS_SHOWN }),
    ...(down ? recreateButtons(first.env, links.slice(0, LINKS_SHOWN)) : []),
    context(
      `Recorded in the audit trail as ${entries.map((e) => code(e.id)).join(', ')} · ${code(`links --env ${truncate(first.env, MAX.name)}${several ? '' : ` --vhost ${truncate(first.vhost, MAX.name)}`}`)} says every link now`,
    ),
  ];
  const text = down
    ? `${count(links.length, 'link')} that should run ${links.length === 1 ? 'is' : 'are'} down in ${several ? `${vhosts.length} vhosts` : `vhost ${prose(first.vhost)}`} (${env})`
    : `${count(links.length, 'link')} back in ${several ? `${vhosts.length} vhosts` : `vhost ${prose(first.vhost)}`} (${env})`;
  return finish(blocks, text);
}
