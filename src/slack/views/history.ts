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
} from '../../audit/index.ts';
import { type HistoryResult, unreadableSentence, verifySentence } from '../../commands/history/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { type Block, context, finish, type SlackMessage, section, slackDate } from './message.ts';

/** `history`: the audit trail, newest first, one section per change (read-only). */

const user = (id: string) => (/^[UW][A-Z0-9]+$/.test(id) ? `<@${id}>` : code(id));
const value = (v: unknown) => code(JSON.stringify(v) ?? String(v));

/** A freeze (or its end) of an environment: no policy, who and why. */
const when = (e: AuditRecord) => slackDate(e.at);

function freezeEntry(e: FreezeRecord): string {
  const f = e.freeze;
  return e.action === 'freeze'
    ? `*freeze* of ${code(e.env)} · ${when(e)}\nfrozen by ${user(f.by)} until ${code(f.until)}: ${prose(f.reason)}`
    : `*unfreeze* of ${code(e.env)} · ${when(e)}\n${e.actor ? `lifted by ${user(e.actor)}` : 'ran out'}: ${prose(f.endedBecause ?? '')} (frozen by ${user(f.by)}: ${prose(f.reason)})`;
}

function snapshotEntry(e: SnapshotRecord): string {
  return `*snapshot* of ${code(e.env)} · ${when(e)}\n${snapshotWords(e)}`;
}

function gapEntry(e: GapRecord): string {
  return `*gap* in the watch of ${code(e.env)} · ${when(e)}\n${gapWords(slackDate(e.from), slackDate(e.to))}`;
}

/** Links that went down or came back (the links watch): no policy changed. */
function linksEntry(e: LinksRecord): string {
  const shown = e.links.slice(0, 5).map((l) => {
    const what =
      l.kind === 'shovel'
        ? `shovel ${code(l.object)}`
        : `${l.kind} ${code(l.object)}${l.upstream === null ? '' : ` ← ${code(l.upstream)}`}`;
    return `${prose(l.state)} ${what}${l.node ? ` on ${code(l.node)}` : ''}`;
  });
  const more = e.links.length > shown.length ? `, …${e.links.length - shown.length} more` : '';
  return `*links ${e.went}* in ${code(e.env)} / ${code(e.vhost)} · ${when(e)}
${shown.join(', ')}${more} · ${e.stillDown} still down`;
}

const headOf = (e: ChangeRecord | ReviewRecord) =>
  `*${e.action}* ${subjectWords(e)} ${code(e.policy)} in ${code(e.env)} / ${code(e.vhost)} · ${when(e)}`;

/** The break-glass change reviewed, by whom, and why: a review changes no policy. */
function reviewEntry(e: ReviewRecord): string {
  return `${headOf(e)}\n${e.review.outcome === 'reverted' ? 'reverted on review' : 'reviewed'} by ${user(e.actor)} (break-glass change ${code(e.reviewOf)}): ${prose(e.review.reason)}`;
}

function entry(e: AuditRecord): string {
  switch (e.action) {
    case 'freeze':
    case 'unfreeze':
      return freezeEntry(e);
    case 'review':
      return reviewEntry(e);
    case 'snapshot':
      return snapshotEntry(e);
    case 'gap':
      return gapEntry(e);
    case 'links':
      return linksEntry(e);
    default:
      return changeEntry(e);
  }
}

function changeEntry(e: ChangeRecord): string {
  const head = headOf(e);
  const who = [
    e.requester &&
      `requested by ${user(e.requester.user)}${e.requester.reason ? `: ${prose(e.requester.reason)}` : ''}`,
    ...approvalWords(e, user, prose),
    e.action === 'outside' && `made outside the bot${e.actor ? ` by ${code(e.actor)}` : ''}`,
    e.between && madeBetweenWords(slackDate(e.between.from), slackDate(e.between.to)),
    e.action === 'left' && prose(LEFT_WORDS),
    e.breakGlass && `:rotating_light: *break glass:* ${breakGlassWords(e, user, prose)}`,
    e.breakGlass &&
      (e.breakGlass.reviewedBy
        ? `${e.breakGlass.reviewOutcome === 'reverted' ? 'reverted on review' : 'reviewed'} by ${user(e.breakGlass.reviewedBy)}: ${prose(e.breakGlass.reviewReason ?? '')}`
        : '*unreviewed*: no approver has reviewed it yet'),
  ].filter(Boolean);
  const lost = e.objects.filter((o) => Object.keys(o.lost).length > 0);
  const objects = lost.length
    ? `${lost.length} object${lost.length === 1 ? '' : 's'} lost values: ${lost
        .slice(0, 5)
        .map(
          (o) =>
            `${code(o.name)} (${Object.entries(o.lost)
              .map(([k, v]) => `${prose(k)}=${value(v)}`)
              .join(', ')})`,
        )
        .join(', ')}${lost.length > 5 ? ', …' : ''}`
    : `${e.objects.length} object${e.objects.length === 1 ? '' : 's'} moved, none lost a value`;
  return [head, ...who, objects, ...predictedObserved(e)].join('\n');
}

const SHOWN_QUEUES = 3;

/** Predicted (as accepted) and observed, the differences first, a few queues. */
function predictedObserved(e: ChangeRecord): string[] {
  const o = e.observed;
  const out = e.impact ? [prose(acceptedWords(e.impact))] : [];
  if (!o) return out;
  const queues = inShowingOrder(o);
  out.push(prose(observationWords(o)));
  for (const q of queues.slice(0, SHOWN_QUEUES))
    out.push(`• ${observedQueueWords(q, o, (n) => code(truncate(n, 100)))}`);
  if (queues.length > SHOWN_QUEUES)
    out.push(`_…and ${queues.length - SHOWN_QUEUES} more queues (\`history --json\` lists them)_`);
  return out;
}

export function historyView(r: HistoryResult): SlackMessage {
  const none = r.window ? 'No recorded changes in that window match.' : 'No recorded changes match.';
  const blocks: Block[] = r.entries.length === 0 ? [section(none)] : r.entries.map((e) => section(entry(e)));
  if (r.window) blocks.unshift(context(prose(r.window.words)));
  const unreadable = unreadableSentence(r);
  if (unreadable) blocks.push(context(`:warning: ${prose(unreadable)}`));
  if (r.verify) blocks.push(context(prose(verifySentence(r.verify))));
  return finish(blocks, r.entries.length === 0 ? none : `${r.entries.length} recorded changes`);
}
