import { incompleteWords, NOT_ASKED_WORDS } from '../../commands/index.ts';
import {
  deprecatedSaid,
  type LintedFinding,
  type LintResult,
  lintCounts,
} from '../../commands/lint/index.ts';
import { showInvisible } from '../../text/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { VIEW_BUDGET } from '../limits.ts';
import type { AttachedFile } from '../slackCalls.ts';
import { leadWith } from './incomplete.ts';
import { type Block, context, finish, type MessageWithFile, section } from './message.ts';
import { pages } from './policies.ts';
import { csvField } from './preview.ts';

/**
 * The `lint` answer as a Slack message: the findings, the most severe first, each its sentence and
 * the objects it concerns; as many as fit Slack's limits, and when some do not, every finding in
 * a CSV file for the delivery to attach. Pure.
 */

/** Characters of a sentence and of a name shown; names listed per finding before "and N more". */
const MAX_SHOWN = { why: 600, name: 80, names: 5 } as const;
/** Text kept free for the heading, the notes and the footer. */
const RESERVED_TEXT = 1500;

const SEVERITY_MARK = { error: ':red_circle:', warning: ':warning:', info: ':information_source:' } as const;

/** One finding as a line of a message: its severity, kind, sentence and the objects named. */
export function findingLine(f: LintedFinding): string {
  const names = f.objects.slice(0, MAX_SHOWN.names).map((n) => code(truncate(n, MAX_SHOWN.name)));
  const more = f.objectCount - names.length;
  const objects = names.length ? `\n      ${names.join(', ')}${more > 0 ? ` and ${more} more` : ''}` : '';
  return `• ${SEVERITY_MARK[f.severity]} *${f.severity}* · ${f.kind} · ${prose(truncate(f.why, MAX_SHOWN.why))}${objects}`;
}

const notAskedWhy = (r: LintResult) =>
  NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';

/** Why a vhost could not be linted, with the broker's detail. */
export function notAskedWords(r: LintResult): string {
  return `${notAskedWhy(r)}${r.detail ? ` (${code(truncate(r.detail, 300))})` : ''}`;
}

export function lintView(r: LintResult): MessageWithFile {
  const vhost = code(truncate(r.vhost, 200));
  if (r.answer === 'not-asked') {
    return finish(
      [section(`:x: *Could not lint* vhost ${vhost}: ${notAskedWords(r)}.`)],
      `Could not lint vhost ${prose(truncate(r.vhost, 200))}: ${notAskedWhy(r)}.`,
    );
  }
  const counts = lintCounts(r.findings);
  const upgrade = r.targetVersion ? ` (upgrade to ${r.targetVersion} read)` : '';
  const heading = `*Lint of vhost* ${vhost}${upgrade}: ${r.policies} policies, ${r.objects} objects, ${counts}${r.findings.length ? ', the most severe first:' : '.'}`;
  const budget = { blocks: VIEW_BUDGET.blocks - 6, text: VIEW_BUDGET.totalText - RESERVED_TEXT };
  const { blocks, shown } = pages(heading, r.findings.map(findingLine), budget);
  const all: Block[] = [...blocks];
  const said = deprecatedSaid(r);
  if (said) all.push(context(`:grey_question: ${prose(said)}`));
  for (const n of r.notRead.slice(0, 3))
    all.push(context(`:grey_question: Not read: ${prose(truncate(n, 300))}.`));
  const needsFile = shown < r.findings.length;
  const footer = [`broker ${r.brokerVersion ?? 'unknown'}`];
  if (needsFile)
    footer.push(`${shown} of ${r.findings.length} findings shown: every one is in the attached file`);
  all.push(context(footer.join(' · ')));
  const message = leadWith(
    finish(all, `Lint of vhost ${prose(truncate(r.vhost, 200))}: ${counts}.`),
    r.incomplete && incompleteWords(r.incomplete.unread, 'findings', (v) => code(truncate(v, 200))),
  );
  return needsFile ? { ...message, file: lintCsv(r) } : message;
}

const CSV_COLUMNS = ['severity', 'kind', 'policy', 'operator', 'object_count', 'objects', 'why'];

/** Every finding, one per row: the file attached when the message cannot hold them all. */
export function lintCsv(r: LintResult): AttachedFile {
  const rows = [CSV_COLUMNS.join(',')];
  for (const f of r.findings) {
    rows.push(
      [f.severity, f.kind, f.policy, String(f.operator), String(f.objectCount), f.objects.join(' '), f.why]
        .map(csvField)
        .join(','),
    );
  }
  const safe = r.vhost.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'vhost';
  return {
    filename: `lint-${safe}.csv`,
    title: `Lint of vhost ${showInvisible(r.vhost)}`,
    content: `${rows.join('\n')}\n`,
  };
}
