import {
  type AuditRecord,
  acceptedWords,
  approvalWords,
  breakGlassWords,
  type ChangeRecord,
  type FreezeRecord,
  type GapRecord,
  gapWords,
  inShowingOrder,
  LEFT_WORDS,
  type LinksRecord,
  madeBetweenWords,
  observationWords,
  observedQueueWords,
  type ReviewRecord,
  type SnapshotRecord,
  snapshotWords,
  subjectWords,
} from '../audit/index.ts';
import { type HistoryResult, unreadableSentence, verifySentence } from '../commands/history/index.ts';
import { jsonWritten, quoted, terminalText } from '../text/index.ts';
import { policyWords } from './preview.ts';

/** The audit trail as terminal text, newest first; the chain's state last when verified. */

const value = jsonWritten;
const plain = (id: string) => id;

function entryLines(e: AuditRecord): string[] {
  switch (e.action) {
    case 'freeze':
    case 'unfreeze':
      return freezeLines(e);
    case 'review':
      return reviewLines(e);
    case 'snapshot':
      return snapshotLines(e);
    case 'gap':
      return gapLines(e);
    case 'links':
      return linksLines(e);
    default:
      return changeLines(e);
  }
}

function freezeLines(e: FreezeRecord): string[] {
  const f = e.freeze;
  return e.action === 'freeze'
    ? [`${e.at}  freeze of ${e.env}  (${e.id})`, `  frozen by ${f.by} until ${f.until}: ${quoted(f.reason)}`]
    : [
        `${e.at}  unfreeze of ${e.env}  (${e.id})`,
        `  ${e.actor ? `lifted by ${e.actor}` : 'ran out'}: ${quoted(f.endedBecause ?? '')} (frozen by ${f.by}: ${quoted(f.reason)})`,
      ];
}

function snapshotLines(e: SnapshotRecord): string[] {
  return [`${e.at}  snapshot of ${e.env}  (${e.id})`, `  ${snapshotWords(e)}`];
}

function gapLines(e: GapRecord): string[] {
  return [`${e.at}  gap in the watch of ${e.env}  (${e.id})`, `  ${gapWords(e.from, e.to)}`];
}

/** Links that went down or came back, found by the links watch: no policy changed. */
function linksLines(e: LinksRecord): string[] {
  const where = (l: LinksRecord['links'][number]) =>
    l.kind === 'shovel'
      ? `shovel ${quoted(l.object)}`
      : `${l.kind} ${quoted(l.object)}${l.upstream === null ? '' : ` <- upstream ${quoted(l.upstream)}`}`;
  return [
    `${e.at}  links ${e.went === 'down' ? 'down' : 'back'} in ${e.env}/${quoted(e.vhost)}  (${e.id})`,
    `  found by ${e.detectedBy === 'nodes' ? 'reading the links after a node went down or came back' : `reading the links (${e.detectedBy})`}${e.nodes?.down.length ? `; down: ${e.nodes.down.join(', ')}` : ''}${e.nodes?.up.length ? `; back: ${e.nodes.up.join(', ')}` : ''}; ${e.stillDown} still down`,
    ...e.links.map(
      (l) =>
        `  ${l.state} ${where(l)}${l.node ? ` on ${quoted(l.node)}` : ''}${l.reason ? `: ${quoted(l.reason)}` : ''} (down since ${l.since})`,
    ),
  ];
}

/** The break-glass change reviewed, by whom, and why: a review changes no policy. */
function reviewLines(e: ReviewRecord): string[] {
  return [
    `${e.at}  ${headWords(e)}  (${e.id})`,
    `  ${e.review.outcome === 'reverted' ? 'reverted on review' : 'reviewed'} by ${e.actor} (break-glass change ${e.reviewOf}): ${quoted(e.review.reason)}${e.review.revertRequestId ? `; revert request ${e.review.revertRequestId}` : ''}`,
  ];
}

function headWords(e: ChangeRecord | ReviewRecord): string {
  return `${e.action} ${subjectWords(e)} ${quoted(e.policy)} in ${e.env}/${quoted(e.vhost)}`;
}

function changeLines(e: ChangeRecord): string[] {
  const lines = [`${e.at}  ${headWords(e)}  (${e.id})`];
  if (e.requester)
    lines.push(
      `  requested by ${e.requester.user}${e.requester.reason ? `: ${quoted(e.requester.reason)}` : ''}`,
    );
  for (const a of approvalWords(e, plain, quoted)) lines.push(`  ${a}`);
  if (e.action === 'outside')
    lines.push(`  made outside the bot${e.actor ? ` by ${e.actor}` : ' (by whom: not known)'}`);
  if (e.between) lines.push(`  ${madeBetweenWords(e.between.from, e.between.to)}`);
  if (e.action === 'left') lines.push(`  ${LEFT_WORDS}`);
  const g = e.breakGlass;
  if (g) {
    lines.push(`  BREAK GLASS: ${breakGlassWords(e, plain, quoted)}`);
    lines.push(
      g.reviewedBy
        ? `  ${g.reviewOutcome === 'reverted' ? 'reverted on review' : 'reviewed'} by ${g.reviewedBy}: ${quoted(g.reviewReason ?? '')}`
        : '  UNREVIEWED: no approver has reviewed it yet',
    );
  }
  if (e.value) {
    // A parameter's values, recorded with every URI masked.
    lines.push(`  before: ${e.value.before === null ? '(none)' : jsonWritten(e.value.before)}`);
    lines.push(`  after:  ${e.value.after === null ? '(none)' : jsonWritten(e.value.after)}`);
  } else {
    lines.push(`  before: ${e.before ? policyWords(e.before) : '(none)'}`);
    lines.push(`  after:  ${e.after ? policyWords(e.after) : '(none)'}`);
  }
  for (const o of e.objects) {
    const moves =
      o.before === o.after
        ? `under ${o.before ?? 'nothing'}`
        : `${o.before ?? 'nothing'} -> ${o.after ?? (o.candidates ? `undefined between ${o.candidates.join(', ')}` : 'nothing')}`;
    const parts = [
      ...Object.entries(o.lost).map(([k, v]) => `lost ${k}=${value(v)}`),
      ...Object.entries(o.gained).map(([k, v]) => `gained ${k}=${value(v)}`),
      ...Object.entries(o.changed).map(([k, c]) => `${k} ${value(c.before)} -> ${value(c.after)}`),
    ];
    lines.push(`    ${o.kind} ${quoted(o.name)}: ${moves}${parts.length ? `; ${parts.join(', ')}` : ''}`);
  }
  if (e.matchedPreview === false)
    lines.push('  the objects did not all report the previewed policy by the deadline');
  if (e.impact) lines.push(`  ${acceptedWords(e.impact)}`);
  const o = e.observed;
  if (o) {
    lines.push(`  ${observationWords(o)}`);
    for (const q of inShowingOrder(o)) lines.push(`    ${observedQueueWords(q, o, quoted)}`);
  }
  return lines;
}

export function historyText(r: HistoryResult): string {
  const none = r.window ? 'No recorded changes in that window match.' : 'No recorded changes match.';
  const blocks = r.entries.length === 0 ? [[none]] : r.entries.map(entryLines);
  if (r.window) blocks.unshift([r.window.words]);
  const unreadable = unreadableSentence(r);
  if (unreadable) blocks.push([unreadable]);
  if (r.verify) blocks.push([verifySentence(r.verify)]);
  return terminalText(blocks.flatMap((b, i) => (i === 0 ? b : ['', ...b])));
}
