import { NOT_ASKED_WORDS } from '../commands/index.ts';
import { type LinksResult, startingWords } from '../commands/links/index.ts';
import { fixWords, type LinkRow, reasonFromBroker } from '../links/index.ts';
import { quoted, terminalText, valueWritten } from '../text/index.ts';

/**
 * The `links` answer as terminal text: the counts, then every link that needs a person (missing,
 * stopped, stuck, unknown, unexpected; starting ones too), each with where it runs, why and the
 * runbook's next step; the running ones counted; the risky settings; the advisories the broker's
 * version is affected by. Every name as written; URIs only masked (src/links/).
 */

const STATE_WORDS: Readonly<Record<LinkRow['state'], string>> = {
  missing: 'MISSING',
  stopped: 'STOPPED',
  stuck: 'STUCK',
  unknown: 'UNKNOWN',
  unexpected: 'UNEXPECTED',
  starting: 'STARTING',
  running: 'RUNNING',
};

/** "exchange "orders" <- upstream "dc2"", "shovel "drain"". */
export function linkWords(l: Pick<LinkRow, 'kind' | 'object' | 'upstream'>): string {
  if (l.kind === 'shovel') return `shovel ${quoted(l.object)}`;
  return `${l.kind} ${quoted(l.object)} <- upstream ${l.upstream === null ? '(none)' : quoted(l.upstream)}`;
}

/** The counts in words: "3 expected: 1 running, 1 missing, 1 stopped; 2 unexpected". */
export function countsWords(c: LinksResult['counts']): string {
  const parts = (['running', 'starting', 'missing', 'stopped', 'stuck', 'unknown'] as const)
    .filter((k) => c[k] > 0 || k === 'running')
    .map((k) => `${c[k]} ${k}`);
  return `${c.expected} expected: ${parts.join(', ')}${c.unexpected ? `; ${c.unexpected} unexpected` : ''}`;
}

export function linksText(r: LinksResult): string {
  const where = `${r.vhosts.length > 1 ? `vhosts ${r.vhosts.map(quoted).join(', ')}` : `vhost ${quoted(r.vhosts[0] ?? '/')}`} of environment ${quoted(r.env)}`;
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    return terminalText([`Could not read the links of ${where}: ${why}${r.detail ? ` (${r.detail})` : ''}.`]);
  }
  const against = r.against ? `, as ${quoted(r.against)} says they should exist` : '';
  const lines = [`Links of ${where}${against} (broker ${r.brokerVersion ?? '?'}): ${countsWords(r.counts)}.`];
  const several = r.vhosts.length > 1;
  for (const l of r.links) {
    if (l.state === 'running') continue;
    const node = l.node ? `  on ${quoted(l.node)}` : '';
    const policy = l.policy ? `  (policy ${quoted(l.policy)})` : '';
    const vhost = several ? `  in vhost ${quoted(l.vhost)}` : '';
    lines.push('', `${STATE_WORDS[l.state].padEnd(10)} ${linkWords(l)}${vhost}${node}${policy}`);
    if (l.reason) lines.push(`           ${reasonFromBroker(l) ? 'the broker: ' : ''}${l.reason}`);
    if (l.next) lines.push(`           Next: ${l.next}`);
  }
  const starting = startingWords(r);
  if (starting) lines.push('', starting);
  if (r.risks.length > 0) {
    lines.push('', 'Settings that lose or pile up messages:');
    for (const k of r.risks) {
      const value = k.value === null ? '(default)' : valueWritten(k.value);
      lines.push(`  ${k.kind} ${quoted(k.name)}  ${k.key} ${value}: ${k.why}`);
    }
  }
  const affected = r.advisories.filter((a) => a.affected === true);
  const unknown = r.advisories.filter((a) => a.affected === null);
  if (affected.length > 0) {
    lines.push('', `Advisories for links that broker ${r.brokerVersion ?? '?'} is affected by:`);
    for (const a of affected) lines.push(`  ${a.id} (${fixWords(a)}): ${a.why}`);
  } else if (r.advisories.length > 0) {
    lines.push('', `Broker ${r.brokerVersion ?? '?'} is not affected by the link advisories.`);
  }
  if (unknown.length > 0)
    lines.push(`  Not judged (the broker's version was not read): ${unknown.map((a) => a.id).join(', ')}.`);
  for (const n of r.notRead) lines.push('', `Not read: ${n}.`);
  return terminalText(lines);
}
