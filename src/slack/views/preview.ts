// Over 400 lines: the preview's message whole (what hurts, links, ties, groups, each object, its CSV) fitted to Slack's limits in one view.
import {
  deleteWarning,
  didYouMeanWords,
  KIND_WORDS,
  NOT_ASKED_WORDS,
  reachWords,
  WHICH_WORDS,
} from '../../commands/index.ts';
import { previewIncompleteWords } from '../../commands/preview/index.ts';
import { missingVhostSentence } from '../../core/index.ts';
import { impactWords, readingWords, totalsWords } from '../../policy/impact/index.ts';
import { isAnchored } from '../../policy/pattern/index.ts';
import type { ObjectOutcome } from '../../policy/simulate/index.ts';
import type { Problem } from '../../policy/validate/index.ts';
import type { ImpactSummary, PolicyFields, PreviewAnswer, PreviewResult } from '../../preview/index.ts';
import {
  nothingAfterWords,
  type OutcomeGroup,
  type PreviewSummary,
  RISK_WORDS,
} from '../../preview/index.ts';
import { agree, count, showInvisible } from '../../text/index.ts';
import { code, prose, truncate, valueCode } from '../escape.ts';
import { VIEW_BUDGET } from '../limits.ts';
import type { AttachedFile } from '../slackCalls.ts';
import { asWrittenSection } from './asWritten.ts';
import { leadWith } from './incomplete.ts';
import { type Block, context, finish, listSection, type MessageWithFile, section } from './message.ts';

/**
 * The preview as a Slack message, what hurts first (as in the terminal): risks, new ties, an
 * unanchored pattern's catch, then objects grouped by what happens to them. Within Slack's
 * limits whatever the size: when the objects do not fit one message, the message keeps the
 * summary and the full list comes back as a CSV file for the Slack layer to upload beside it.
 * Pure; every user or broker string is escaped.
 */

const MAX_SHOWN = { name: 200, pattern: 200, key: 60, value: 100 } as const;
/** Objects listed one per line in the message; beyond this the file carries them. */
const OBJECTS_SHOWN = 12;
const NAMES_PER_LINE = 5;

const name = (s: string) => code(truncate(s, MAX_SHOWN.name));
const keyName = (s: string) => code(truncate(s, MAX_SHOWN.key));
const value = (v: unknown) => valueCode(v, MAX_SHOWN.value);
const keys = (ks: readonly string[]) => ks.map(keyName).join(', ');

function names(list: readonly string[], total: number): string {
  const shown = list.slice(0, NAMES_PER_LINE).map(name).join(', ');
  const more = total - Math.min(list.length, NAMES_PER_LINE);
  return more > 0 ? `${shown} _and ${more} more_` : shown;
}

/**
 * "falls back to `P`": the policy names of a group's outcome shown as names (inline code), never
 * as prose, where `*bold*` or `_x_` in a name would format the message.
 */
function outcomeWords(g: OutcomeGroup): string {
  if (g.candidates) return `undefined between ${g.candidates.map(name).join(' and ')}`;
  if (g.after !== null && g.outcome.endsWith(g.after)) {
    return `${prose(g.outcome.slice(0, g.outcome.length - g.after.length))}${name(g.after)}`;
  }
  return prose(g.outcome);
}

function policyWords(p: PolicyFields): string {
  const def = Object.entries(p.definition)
    .slice(0, 8)
    .map(([k, v]) => `${keyName(k)} = ${value(v)}`)
    .join(', ');
  return `pattern ${code(truncate(p.pattern, MAX_SHOWN.pattern))} · applies to ${code(p.applyTo)} · priority ${p.priority} · sets ${def || 'nothing'}`;
}

/** The change, and the policy exactly as it would be written (what was understood, before anyone approves). */
function title(r: PreviewResult): Block[] {
  const c = r.change;
  const lines = [
    `*Preview:* ${prose(c.action)} ${c.operator ? 'operator policy' : 'policy'} ${name(c.policy)} in vhost ${name(c.vhost)}`,
  ];
  if (c.before) lines.push(`Now: ${policyWords(c.before)}`);
  const blocks: Block[] = [section(lines.join('\n'))];
  if (c.after) blocks.push(asWrittenSection(c.after, r.notes));
  return blocks;
}

function objectLine(o: ObjectOutcome, brokerVersion: string | undefined): string {
  const after = o.after.candidates
    ? `undefined between ${o.after.candidates.map(name).join(' and ')}`
    : o.after.policy
      ? name(o.after.policy)
      : o.unchangedLayer.layer === 'user'
        ? prose(nothingAfterWords(o))
        : 'nothing';
  const parts: string[] = [];
  const lost = Object.keys(o.lost);
  const gained = Object.keys(o.gained);
  const changed = Object.entries(o.changed);
  if (lost.length) parts.push(`loses ${keys(lost)}`);
  if (gained.length) parts.push(`gains ${keys(gained)}`);
  if (changed.length)
    parts.push(`${changed.map(([k, [b, a]]) => `${keyName(k)} ${value(b)} → ${value(a)}`).join(', ')}`);
  if (o.noEffect?.length) parts.push(`${keys(o.noEffect)}: ${WHICH_WORDS.noEffect(o.kind, brokerVersion)}`);
  if (o.keptByOperator?.length) parts.push(`operator policy keeps ${keys(o.keptByOperator)}`);
  for (const [k, n] of Object.entries(o.arguments ?? {})) {
    parts.push(
      `its own ${code(n.argument)} ${n.rule === 'argument' ? 'wins' : n.rule === 'smaller' ? 'caps it' : 'yields'}: ${keyName(k)} in use ${value(n.after)}`,
    );
  }
  return `• ${name(o.name)} _(${KIND_WORDS[o.kind]})_ → ${after}${parts.length ? ` — ${parts.join('; ')}` : ''}`;
}

/**
 * The risk-first summary (what hurts, new ties, an unanchored pattern's catch, what happens by
 * group): the preview's own blocks, and those of a change request's approval message, which
 * keeps only the summary.
 */
export function summaryBlocks(s: PreviewSummary, options: { operator: boolean; nothing: boolean }): Block[] {
  const blocks: Block[] = impactBlocks(s.impact);
  if (options.nothing) {
    blocks.push(
      section(
        `:white_check_mark: *Nothing changes:* no object's ${options.operator ? 'operator policy' : 'policy'} or values would differ.`,
      ),
    );
  } else if (s.risks.length) {
    const items = s.risks.map((risk) => {
      const total = risk.count + risk.possible;
      const how =
        risk.count === 0
          ? `*${risk.possible}* may ${RISK_WORDS[risk.risk]}, depending on a tie`
          : `*${risk.count}* would ${RISK_WORDS[risk.risk]}${risk.possible ? ` (${risk.possible} more may, depending on a tie)` : ''}`;
      return `• ${how} (${keys(risk.keys)}): ${names(risk.names, total)}`;
    });
    blocks.push(listSection(':rotating_light: *What hurts:*', items, { maxItems: 7 }));
  } else if (!s.impact?.count) {
    blocks.push(
      section(
        '*What hurts:* no object loses a dead-letter target, TTL, limit, delivery limit, federation upstream, alternate exchange or retention.',
      ),
    );
  }
  if (s.newTies.count) {
    const items = s.newTies.objects.map((t) => `• ${name(t.name)}: ${t.candidates.map(name).join(' or ')}`);
    blocks.push(
      listSection(
        `:warning: *New ties:* ${count(s.newTies.count, 'object')} would match several policies of the same priority; which one the broker picks is not defined.`,
        items,
        { maxItems: 5, maxChars: 1500 },
      ),
    );
  }
  if (s.unanchoredCatch) {
    const c = s.unanchoredCatch;
    blocks.push(
      section(
        `:mag: *Unanchored pattern* ${code(truncate(c.pattern, MAX_SHOWN.pattern))} does not start with \`^\`: it also reaches ${count(c.count, 'name')} that ${agree(c.count, 'does', 'do')} not start with it: ${names(c.names, c.count)}`,
      ),
    );
  }
  const links = s.impact?.links;
  const part = (what: string, o: { count: number; names: string[] }) =>
    o.count ? `${what} for ${count(o.count, 'object')}: ${names(o.names, o.count)}` : '';
  if (links)
    blocks.push(
      context(
        `:link: Federation links: ${[part('start', links.starts), part('stop', links.stops)].filter(Boolean).join('; ')}`,
      ),
    );
  if (s.groups.length) {
    const items = s.groups.map((g) => {
      const parts = [
        g.lost.length ? `loses ${keys(g.lost)}` : '',
        g.gained.length ? `gains ${keys(g.gained)}` : '',
        g.changed.length ? `changes ${keys(g.changed)}` : '',
      ].filter(Boolean);
      return `• *${g.count}* ${outcomeWords(g)}${parts.length ? ` — ${parts.join('; ')}` : ''}: ${names(g.names, g.count)}`;
    });
    blocks.push(
      listSection(
        `*What happens* (${count(s.objects, 'object')} ${agree(s.objects, 'changes', 'change')}):`,
        items,
        { maxItems: 8 },
      ),
    );
  }
  return blocks;
}

/** The headings of the impact blocks: a preview's, or (src/slack/views/outside.ts) a change already made. */
export interface ImpactHeads {
  readonly loss: string;
  readonly noLoss: string;
}

const PREVIEW_HEADS: ImpactHeads = {
  loss: 'What hurts — loss',
  noLoss: 'What hurts, in the messages there now',
};

/** The loss first: the totals in numbers, each object's effects, and how old the numbers are. */
export function impactBlocks(
  s: Omit<ImpactSummary, 'queues'> | undefined,
  heads: ImpactHeads = PREVIEW_HEADS,
): Block[] {
  // What could not be read is said even when nothing read shows a loss: unknown is not none.
  if (!s || (s.count === 0 && s.unknown === 0 && s.notes.length === 0)) return [];
  const totals = totalsWords(s.totals);
  const items = s.objects.flatMap((o) => o.impact.map((x) => `• ${name(o.name)}: ${impactWords(x, name)}`));
  if (s.count > s.objects.length)
    items.push(`• _and ${count(s.count - s.objects.length, 'more object', 'more objects')}_`);
  const head = totals ? `:rotating_light: *${heads.loss}: ${totals}*` : `:rotating_light: *${heads.noLoss}:*`;
  const blocks: Block[] = [];
  if (items.length) blocks.push(listSection(head, items, { maxItems: 8 }));
  // An empty context block is refused by Slack (invalid_blocks): a set's loss has no reading to tell.
  const reading = readingWords(s).map(prose).join(' ');
  if (reading) blocks.push(context(reading));
  return blocks;
}

/** Warnings of the validation, as a list. */
export function warningsBlock(warnings: readonly Problem[]): Block {
  return listSection(
    '*Warnings:*',
    warnings.map((w) => `• ${prose(truncate(w.message, 400))}`),
    { maxItems: 5 },
  );
}

function answered(r: PreviewAnswer): MessageWithFile {
  const s = r.summary;
  const blocks: Block[] = [...changeWarningBlocks(r.change), ...title(r)];
  if (r.warnings.length) blocks.push(warningsBlock(r.warnings));
  blocks.push(
    ...summaryBlocks(s, {
      operator: r.change.operator,
      nothing: r.objects.length === 0 && r.unpredictable.length === 0,
    }),
  );
  const needsFile = r.objects.length > OBJECTS_SHOWN || r.unpredictable.length > VIEW_BUDGET.listItems;
  if (r.objects.length && !needsFile) {
    blocks.push(
      listSection(
        '*Object by object:*',
        r.objects.map((o) => objectLine(o, r.brokerVersion)),
        { maxItems: OBJECTS_SHOWN },
      ),
    );
  }
  if (r.unpredictable.length) {
    const items = r.unpredictable.map((u) => `• ${name(u.name)}: ${prose(truncate(u.why, 300))}`);
    blocks.push(
      listSection(
        `:grey_question: *Unpredictable* (${r.unpredictable.length}): this bot cannot say what happens to these, and does not guess.`,
        items,
        { maxItems: 5 },
      ),
    );
  }
  const footer = [
    `broker ${prose(r.brokerVersion)}`,
    `${s.scanned.queues} queues and ${s.scanned.exchanges} exchanges read`,
  ];
  if (needsFile) footer.push('the full list of objects is in the attached file');
  blocks.push(context(footer.join(' · ')));
  const sure = s.risks.find((x) => x.count > 0);
  const maybe = s.risks[0];
  const lead = sure
    ? `${count(sure.count, 'object')} would ${RISK_WORDS[sure.risk]}`
    : maybe
      ? `${count(maybe.possible, 'object')} may ${RISK_WORDS[maybe.risk]}, depending on a tie`
      : `${count(s.objects, 'object')} ${agree(s.objects, 'changes', 'change')}, none loses a risky setting`;
  const text = `Preview of ${r.change.action} ${prose(truncate(r.change.policy, 200))}: ${lead}.`;
  const message = finish(blocks, text);
  return needsFile ? { ...message, file: previewCsv(r) } : message;
}

/**
 * First in every answered preview (and for the approvals message to reuse): what a delete does
 * not restore, or how far a create or edit reaches, including objects created later.
 */
export function changeWarningBlocks(c: {
  readonly action: string;
  readonly operator: boolean;
  readonly after: PolicyFields | null;
}): Block[] {
  if (c.action === 'delete' || c.after === null) return [section(`:warning: *${deleteWarning(c.operator)}*`)];
  const pattern = code(truncate(c.after.pattern, MAX_SHOWN.pattern));
  return [
    section(`:information_source: ${reachWords(pattern, c.after.applyTo, !isAnchored(c.after.pattern))}`),
  ];
}

function refused(r: Extract<PreviewResult, { status: 'refused' }>): MessageWithFile {
  const blocks: Block[] = [
    ...title(r),
    listSection(
      ':no_entry: *Refused* — nothing was previewed or filed:',
      r.refusals.map((p) => `• ${prose(truncate(p.message, 500))}`),
    ),
  ];
  if (r.warnings.length) blocks.push(warningsBlock(r.warnings));
  if (r.didYouMean) {
    const what = r.change.operator ? 'operator policy' : 'policy';
    const close = r.didYouMean.map((n) => ({ name: n }));
    blocks.push(section(`:mag: ${didYouMeanWords(what, r.change.policy, close, name)}`));
  }
  const first = r.refusals[0]?.message ?? 'refused';
  return finish(blocks, `Refused: ${prose(truncate(first, 300))}`);
}

function notAsked(r: Extract<PreviewResult, { status: 'not-asked' }>): MessageWithFile {
  const why =
    r.why === 'missing-vhost'
      ? missingVhostSentence(
          {
            vhost: r.change.vhost,
            close: r.closeVhosts ?? [],
            ...(r.vhostHiddenFrom === undefined ? {} : { hiddenFrom: r.vhostHiddenFrom }),
          },
          name,
        )
      : `${NOT_ASKED_WORDS[r.why] ?? 'the broker could not be asked'}${r.detail ? ` (${code(truncate(r.detail, 300))})` : ''}`;
  const blocks = [
    section(
      `:x: *Could not preview* ${prose(r.change.action)} of ${name(r.change.policy)}: ${why}. Nothing is claimed.`,
    ),
  ];
  return finish(
    blocks,
    `Could not preview ${prose(r.change.action)} of ${prose(truncate(r.change.policy, 200))}.`,
  );
}

export function previewView(r: PreviewResult): MessageWithFile {
  switch (r.status) {
    case 'answered':
      return leadWith(answered(r), previewIncompleteWords(r, name));
    case 'refused':
      return refused(r);
    case 'not-asked':
      return notAsked(r);
  }
}

// --- the attached file ----------------------------------------------------------------------

/**
 * One CSV field, as written (a line break in a name is `\n`, one row stays one row), quoted when
 * needed; a cell a spreadsheet would read as a formula (a name
 * starting with = + - @) is prefixed with an apostrophe.
 */
export function csvField(raw: string): string {
  const written = showInvisible(raw);
  const s = /^[=+\-@]/.test(written) ? `'${written}` : written;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const CSV_COLUMNS = [
  'name',
  'kind',
  'before',
  'after',
  'tie_candidates',
  'lost',
  'gained',
  'changed',
  'risks',
  'unpredictable_why',
];

export function previewCsv(r: PreviewAnswer): AttachedFile {
  const kv = (o: Record<string, unknown>) =>
    Object.entries(o)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join('; ');
  const rows = [CSV_COLUMNS.join(',')];
  for (const o of r.objects) {
    rows.push(
      [
        o.name,
        o.kind,
        o.before.policy ?? (o.before.candidates ? '' : '(none)'),
        o.after.policy ?? (o.after.candidates ? '' : '(none)'),
        (o.after.candidates ?? []).join(' '),
        kv(o.lost),
        kv(o.gained),
        Object.entries(o.changed)
          .map(([k, [b, a]]) => `${k}=${JSON.stringify(b)}->${JSON.stringify(a)}`)
          .join('; '),
        [...o.risks, ...(o.possibleRisks ?? []).map((x) => `maybe:${x}`)].join(' '),
        '',
      ]
        .map(csvField)
        .join(','),
    );
  }
  for (const u of r.unpredictable)
    rows.push([u.name, u.kind, '', '', '', '', '', '', '', u.why].map(csvField).join(','));
  const safe = r.change.policy.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'policy';
  return {
    filename: `preview-${r.change.action}-${safe}.csv`,
    title: `Preview of ${r.change.action} ${showInvisible(r.change.policy)}: every object`,
    content: `${rows.join('\n')}\n`,
  };
}
