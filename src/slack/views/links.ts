import { NOT_ASKED_WORDS } from '../../commands/index.ts';
import { type LinksResult, startingWords } from '../../commands/links/index.ts';
import { fixWords, type LinkRow, reasonFromBroker } from '../../links/index.ts';
import { showInvisible, valueWritten } from '../../text/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { VIEW_BUDGET } from '../limits.ts';
import type { AttachedFile } from '../slackCalls.ts';
import { type Block, context, finish, type MessageWithFile, section } from './message.ts';
import { pages } from './policies.ts';
import { csvField } from './preview.ts';
import { recreateButtons } from './recreate.ts';

/**
 * The `links` answer as a Slack message: the counts, every link that needs a person with where it
 * runs, why, and the runbook's next step; the risky settings; the advisories the broker is
 * affected by. As many as fit Slack's limits, and when some do not, every link in a CSV file for
 * the delivery to attach. Pure; every name escaped; URIs only masked (src/links/).
 */

const MAX = { name: 80, reason: 300, next: 300, risks: 8 } as const;
const RESERVED_TEXT = 2500;

const MARK: Readonly<Record<LinkRow['state'], string>> = {
  missing: ':red_circle: *missing*',
  stopped: ':red_circle: *stopped*',
  stuck: ':warning: *stuck*',
  unknown: ':grey_question: *unknown*',
  unexpected: ':information_source: *unexpected*',
  starting: ':hourglass_flowing_sand: *starting*',
  running: ':large_green_circle: *running*',
};

const name = (s: string) => code(truncate(s, MAX.name));

/** One link as a line: its state, what it serves, from which upstream, where, why, and what to do. */
export function linkLine(l: LinkRow): string {
  const what =
    l.kind === 'shovel'
      ? `shovel ${name(l.object)}`
      : `${l.kind} ${name(l.object)} ← upstream ${l.upstream === null ? '(none)' : name(l.upstream)}`;
  const where = l.node ? ` on ${name(l.node)}` : '';
  const policy = l.policy ? ` · policy ${name(l.policy)}` : '';
  const reason = l.reason
    ? `\n      ${reasonFromBroker(l) ? 'the broker: ' : ''}${code(truncate(l.reason, MAX.reason))}`
    : '';
  const next = l.next ? `\n      _Next:_ ${prose(truncate(l.next, MAX.next))}` : '';
  return `• ${MARK[l.state]} · ${what}${where}${policy}${reason}${next}`;
}

function countsLine(c: LinksResult['counts']): string {
  const parts = (['running', 'starting', 'missing', 'stopped', 'stuck', 'unknown'] as const)
    .filter((k) => c[k] > 0 || k === 'running')
    .map((k) => `${c[k]} ${k}`);
  return `${c.expected} expected: ${parts.join(', ')}${c.unexpected ? `; ${c.unexpected} unexpected` : ''}`;
}

export function linksView(r: LinksResult): MessageWithFile {
  const where = r.vhosts.map((v) => code(truncate(v, 200))).join(', ');
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    return finish(
      [
        section(
          `:x: *Could not read the links* of vhost ${where}: ${why}${r.detail ? ` (${code(truncate(r.detail, 300))})` : ''}.`,
        ),
      ],
      `Could not read the links: ${why}.`,
    );
  }
  const counts = countsLine(r.counts);
  const problems = r.links.filter((l) => l.state !== 'running');
  const heading = `*Links of vhost* ${where}: ${counts}${problems.length ? ', what needs a person first:' : '.'}`;
  const budget = { blocks: VIEW_BUDGET.blocks - 8, text: VIEW_BUDGET.totalText - RESERVED_TEXT };
  const { blocks, shown } = pages(heading, problems.map(linkLine), budget);
  const all: Block[] = [...blocks, ...recreateButtons(r.env, problems.slice(0, shown))];
  if (r.risks.length > 0) {
    const lines = r.risks
      .slice(0, MAX.risks)
      .map(
        (k) =>
          `• ${k.kind} ${name(k.name)} · ${code(k.key)} ${k.value === null ? '(default)' : code(truncate(valueWritten(k.value), 120))}: ${prose(truncate(k.why, 300))}`,
      );
    const more = r.risks.length - lines.length;
    all.push(
      section(
        `*Settings that lose or pile up messages*\n${lines.join('\n')}${more > 0 ? `\n…and ${more} more` : ''}`,
      ),
    );
  }
  const starting = startingWords(r);
  if (starting) all.push(context(`:hourglass_flowing_sand: ${prose(starting)}`));
  const affected = r.advisories.filter((a) => a.affected === true);
  if (affected.length > 0)
    all.push(
      context(
        `:shield: Broker ${r.brokerVersion ?? '?'} is affected by ${affected.map((a) => `${a.id} (${fixWords(a)})`).join(', ')}`,
      ),
    );
  for (const n of r.notRead.slice(0, 3))
    all.push(context(`:grey_question: Not read: ${prose(truncate(n, 300))}.`));
  const needsFile = shown < problems.length;
  const footer = [`broker ${r.brokerVersion ?? 'unknown'}`];
  if (needsFile)
    footer.push(`${shown} of ${problems.length} links shown: every link is in the attached file`);
  all.push(context(footer.join(' · ')));
  const message = finish(all, `Links of vhost ${prose(truncate(r.vhosts.join(', '), 200))}: ${counts}.`);
  return needsFile ? { ...message, file: linksCsv(r) } : message;
}

const CSV_COLUMNS = ['state', 'kind', 'vhost', 'object', 'upstream', 'policy', 'node', 'reason', 'next'];

/** Every link, one per row: the file attached when the message cannot hold them all. */
export function linksCsv(r: LinksResult): AttachedFile {
  const rows = [CSV_COLUMNS.join(',')];
  for (const l of r.links)
    rows.push(
      [
        l.state,
        l.kind,
        l.vhost,
        l.object,
        l.upstream ?? '',
        l.policy ?? '',
        l.node ?? '',
        l.reason ?? '',
        l.next ?? '',
      ]
        .map(csvField)
        .join(','),
    );
  const safe = (r.vhosts[0] ?? 'vhost').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'vhost';
  return {
    filename: `links-${safe}.csv`,
    title: `Links of vhost ${showInvisible(r.vhosts.join(', '))}`,
    content: `${rows.join('\n')}\n`,
  };
}
