import { type LintResult, lintCounts } from '../../commands/lint/index.ts';
import type { DigestDiff, DigestFinding } from '../../policy/lint/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { VIEW_BUDGET } from '../limits.ts';
import { findingLine, notAskedWords } from './lint.ts';
import { context, finish, type SlackMessage, section } from './message.ts';
import { pages } from './policies.ts';

/**
 * The scheduled lint digest of one environment as one Slack message: for each vhost, what is new
 * since the last digest first, then what was fixed, then the rest counted; a vhost (or the
 * environment) that could not be asked says so. As many lines as fit Slack's limits (the lint
 * view's paging); `/rmq lint --vhost V` has every finding. Pure.
 */

export type DigestVhost =
  | {
      readonly vhost: string;
      readonly result: LintResult & { answer: 'linted' };
      readonly diff: DigestDiff<LintResult['findings'][number]>;
      /** No digest of this vhost before this one: every finding counts as new. */
      readonly first: boolean;
    }
  | { readonly vhost: string; readonly result: LintResult & { answer: 'not-asked' } };

export type EnvironmentDigest =
  | { readonly env: string; readonly answer: 'linted'; readonly vhosts: readonly DigestVhost[] }
  /** The vhosts could not be listed: nothing linted, nothing stored. */
  | { readonly env: string; readonly answer: 'not-asked'; readonly detail: string };

const RESERVED_TEXT = 1500;
const MAX_WHY = 600;

function fixedLine(f: DigestFinding): string {
  return `• :white_check_mark: *fixed* · ${f.kind} · ${prose(truncate(f.why, MAX_WHY))}`;
}

function vhostLines(v: DigestVhost): string[] {
  const name = code(truncate(v.vhost, 200));
  if (v.result.answer === 'not-asked')
    return [`:x: *vhost* ${name}: could not lint: ${notAskedWords(v.result)}; the last digest is kept.`];
  if (!('diff' in v)) return [];
  const { diff } = v;
  const summary = v.first
    ? `first digest, every finding is new`
    : `${diff.new.length} new, ${diff.fixed.length} fixed, ${diff.rest.length} still there`;
  const lines = [`*vhost* ${name}: ${lintCounts(v.result.findings)} (${summary})`];
  for (const f of diff.new) lines.push(`:new: ${findingLine(f)}`);
  for (const f of diff.fixed) lines.push(fixedLine(f));
  if (diff.rest.length > 0)
    lines.push(`• ${diff.rest.length} still there since the last digest: ${lintCounts(diff.rest)}.`);
  return lines;
}

export function lintDigestView(d: EnvironmentDigest): SlackMessage {
  const env = code(truncate(d.env, 100));
  if (d.answer === 'not-asked') {
    return finish(
      [
        section(
          `:x: *Lint digest* of environment ${env}: the broker could not be asked (${code(truncate(d.detail, 300))}); nothing was linted, and the last digest is kept.`,
        ),
      ],
      `Lint digest of environment ${prose(truncate(d.env, 100))}: the broker could not be asked.`,
    );
  }
  const lines = d.vhosts.flatMap(vhostLines);
  const news = d.vhosts.reduce((n, v) => n + ('diff' in v ? v.diff.new.length : 0), 0);
  const fixed = d.vhosts.reduce((n, v) => n + ('diff' in v ? v.diff.fixed.length : 0), 0);
  const heading = `*Lint digest* of environment ${env}: ${d.vhosts.length} vhost${d.vhosts.length === 1 ? '' : 's'}, ${news} new finding${news === 1 ? '' : 's'}, ${fixed} fixed.`;
  const budget = { blocks: VIEW_BUDGET.blocks - 2, text: VIEW_BUDGET.totalText - RESERVED_TEXT };
  const { blocks, shown } = pages(heading, lines, budget);
  const all = [...blocks];
  if (shown < lines.length)
    all.push(
      context(
        `${shown} of ${lines.length} lines shown: ${code(`/rmq lint --vhost V --env ${truncate(d.env, 100)}`)} answers in full.`,
      ),
    );
  return finish(
    all,
    `Lint digest of environment ${prose(truncate(d.env, 100))}: ${news} new, ${fixed} fixed.`,
  );
}
