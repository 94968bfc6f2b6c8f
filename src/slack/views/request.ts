// Over 400 lines: every state of a request's one message, edited in place from filing to the audit diff.
import type { types } from '@slack/bolt';
import type { ChangeRecord } from '../../audit/index.ts';
import { acceptedWords, inShowingOrder, observationWords, observedQueueWords } from '../../audit/index.ts';
import { lossUnknownWords } from '../../commands/index.ts';
import { formatDuration, maskUris } from '../../core/index.ts';
import type { PolicyFields } from '../../preview/index.ts';
import { count, showInvisible, valueWritten } from '../../text/index.ts';
import type { ChangeRequest, Freeze, RequestState } from '../../workflow/index.ts';
import { approvalsNeeded, approvalsOf, awaitsReview, setVhosts } from '../../workflow/index.ts';
import { code, codeBlock, prose, truncate } from '../escape.ts';
import { asWrittenSection } from './asWritten.ts';
import { recreateLead, setBlocks, setWords, vhostsWords } from './changeSet.ts';
import { leadWith } from './incomplete.ts';
import {
  actions,
  type Block,
  button,
  context,
  divider,
  finish,
  listSection,
  type SlackMessage,
  section,
} from './message.ts';
import { changeWarningBlocks, summaryBlocks, warningsBlock } from './preview.ts';

/**
 * A change request in Slack, pure: the approvals message at every state (its buttons only while
 * it waits for a decision), the audit diff once applied (with Revert), and the short notes to
 * the requester and to an approver who lost a race. Every user or broker string is escaped;
 * pattern and definition are shown exactly as they will be written (the definition as the JSON
 * the bot sends to the broker).
 */

/** `action_id`s of the buttons on these messages; interactions.ts registers a handler for each. */
export const REQUEST_BUTTONS = {
  approve: 'rmq_request_approve',
  reject: 'rmq_request_reject',
  revert: 'rmq_audit_revert',
  /** Its requester applies it without an approval (where the environment allows it), reviewed afterwards. */
  breakGlass: 'rmq_request_break_glass',
} as const;

/** A user id as a mention (ids come from Slack's payloads; anything else is shown as code). */
export function who(user: string): string {
  return /^[UW][A-Z0-9]{2,}$/.test(user) ? `<@${user}>` : code(user);
}

/** Configured user and user-group ids as mentions (a group as `<!subteam^S…>`), or `nobody`. */
export function whoList(ids: readonly string[]): string {
  if (ids.length === 0) return '_nobody configured_';
  return ids.map((id) => (/^S[A-Z0-9]{2,}$/.test(id) ? `<!subteam^${id}>` : who(id))).join(', ');
}

/** An environment's freeze, as every message that mentions it says it. */
export function frozenLine(env: string, f: Pick<Freeze, 'until' | 'by' | 'reason'>): string {
  return `:snowflake: *${code(env)} is frozen* until ${when(f.until)} by ${who(f.by)} because ${prose(truncate(f.reason, 500))}.`;
}

/** Who approved, in order, each with their reason (and when, with `at`). */
function approversText(r: ChangeRequest, options: { at?: boolean } = {}): string {
  const given = approvalsOf(r);
  const list = given.length ? given : r.decision?.kind === 'approve' ? [r.decision] : [];
  return list
    .map((a) => `${who(a.by)}${options.at ? ` at ${when(a.at)}` : ''}: ${prose(truncate(a.reason, 500))}`)
    .join('; ');
}

/** A time every reader sees in their own time zone; the ISO text where Slack cannot format it. */
export function when(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return prose(iso);
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time_secs}|${iso}>`;
}

const STATE_WORDS: Readonly<Record<RequestState, string>> = {
  pending: ':hourglass_flowing_sand: *Waiting for an approver*',
  approved: ':white_check_mark: *Approved*',
  applying: ':gear: *Applying*',
  applied: ':white_check_mark: *Applied*',
  failed: ':x: *Failed — not applied*',
  rejected: ':no_entry: *Rejected*',
  expired: ':alarm_clock: *Expired — not applied*',
  stale: ':warning: *Stale — not applied*',
};

function layerWords(r: Pick<ChangeRequest, 'layer'>): string {
  return r.layer === 'operator' ? 'operator policy' : 'policy';
}

function actionWords(r: Pick<ChangeRequest, 'action' | 'before' | 'after'>): string {
  if (r.action !== 'revert') return r.action;
  return r.after === null ? 'revert (delete)' : r.before === null ? 'revert (re-create)' : 'revert (edit)';
}

function fieldsBlock(label: string, p: PolicyFields | null): Block {
  return p ? asWrittenSection(p, [], `*${label}:*`) : section(`*${label}:* _(none)_`);
}

/** What the request changes: the policy as it is and as it will be written. */
function changeBlocks(r: ChangeRequest): Block[] {
  if (r.after === null) return [fieldsBlock('Deletes this policy, now', r.before)];
  if (r.before === null) return [fieldsBlock('Will be written as', r.after)];
  return [fieldsBlock('Now', r.before), fieldsBlock('Will be written as', r.after)];
}

/** A break-glass change, as every message about it says it: applied without approval, by whom, why; its review. */
export function breakGlassLine(r: ChangeRequest): string {
  const g = r.breakGlass;
  if (!g) return '';
  const done =
    r.state === 'applied'
      ? 'applied'
      : r.state === 'approved' || r.state === 'applying'
        ? 'being applied'
        : 'broken';
  const head = `:rotating_light: *Break glass:* ${done} without approval by ${who(g.by)} at ${when(g.at)}, because ${prose(truncate(g.reason, 500))}.`;
  const v = r.review;
  if (v)
    return `${head}\n${v.outcome === 'reverted' ? ':leftwards_arrow_with_hook: *Reverted on review*' : ':white_check_mark: *Reviewed*'} by ${who(v.by)} at ${when(v.at)}: ${prose(truncate(v.reason, 500))}${v.revertRequestId ? ` (revert request ${code(v.revertRequestId)}, with its own approval)` : ''}`;
  if (!awaitsReview(r)) return head;
  return `${head}\n*Unreviewed:* an approver reviews it (Review, or Revert), due by ${when(g.reviewBy)}.`;
}

function stateLine(r: ChangeRequest): string {
  if (r.breakGlass && r.state !== 'rejected' && r.state !== 'expired')
    return `${r.state === 'approved' ? ':gear: *Applying without approval*' : STATE_WORDS[r.state]}${r.state === 'applied' && r.appliedAt ? ` at ${when(r.appliedAt)}` : ''}\n${breakGlassLine(r)}`;
  const d = r.decision;
  switch (r.state) {
    case 'pending': {
      const needed = approvalsNeeded(r);
      if (needed === 1) return `${STATE_WORDS.pending} · expires ${when(r.expiresAt)}`;
      const given = approvalsOf(r).length;
      return `:hourglass_flowing_sand: *${given} of ${needed} approvals*, each from another approver · expires ${when(r.expiresAt)}${given ? `\nApproved so far by ${approversText(r, { at: true })}` : ''}`;
    }
    case 'approved':
    case 'applying': {
      const by = approversText(r, { at: true });
      const held =
        r.state === 'approved' && r.held
          ? `\n${frozenLine(r.env, r.held)} It is applied when the freeze ends or is lifted.`
          : '';
      // A set whose rollback or records wait for the broker or the audit trail (applySet.ts).
      const retrying = r.state === 'applying' ? r.setProgress?.retrying : undefined;
      const waits = retrying
        ? `\n:repeat: *Waiting to go on* since ${when(retrying.at)}: ${prose(truncate(retrying.why, 500))}. It tries again by itself; each change below says where it stands.`
        : '';
      return `${STATE_WORDS[r.state]}${by ? ` by ${by}` : ''}${held}${waits}`;
    }
    case 'applied': {
      const by = approversText(r);
      return `${STATE_WORDS.applied}${r.appliedAt ? ` at ${when(r.appliedAt)}` : ''}${by ? ` · approved by ${by}` : ''}`;
    }
    case 'failed': {
      const f = r.failure;
      return `${STATE_WORDS.failed}${f ? `: ${prose(truncate(f.message, 800))} (${code(f.code)}${f.status ? `, HTTP ${f.status}` : ''}, after ${count(f.attempts, 'attempt')})` : ''}`;
    }
    case 'rejected': {
      const had = approvalsOf(r).length;
      return `${STATE_WORDS.rejected}${d ? ` by ${who(d.by)} at ${when(d.at)}: ${prose(truncate(d.reason, 500))}` : ''}${had ? ` (it had ${had} of ${approvalsNeeded(r)} approvals: ${approversText(r)})` : ''}`;
    }
    case 'expired':
      return `${STATE_WORDS.expired}: nobody decided before ${when(r.expiresAt)}. File it again if it is still wanted.`;
    case 'stale':
      // A set is not previewed again nor filed again by the bot: its requester plans the file again.
      if (r.set) {
        const left = r.setProgress?.left?.length ?? 0;
        const rolledBack = left
          ? `the steps already written were rolled back but ${count(left, 'step')} left as changed outside this request (above)`
          : 'any step already written was rolled back';
        return r.staleBecause === 'loss-grew'
          ? `${STATE_WORDS.stale}: the set would now remove more than the approval accepted (more messages, or another queue). Nothing was applied; plan the file again and import it to go ahead.`
          : `${STATE_WORDS.stale}: a policy the set touches is no longer as planned. Nothing more was written, and ${rolledBack}; plan the file again and import it to go ahead.`;
      }
      return r.staleBecause === 'loss-grew'
        ? `${STATE_WORDS.stale}: the change would now remove more than the approval accepted (more messages, or another queue). Nothing was applied; the fresh numbers were posted.`
        : `${STATE_WORDS.stale}: the policy on the broker is no longer what the approver saw. A fresh preview was posted; file the request again to go ahead.`;
  }
}

function buttons(r: ChangeRequest): types.ActionsBlock {
  const breakGlass = r.breakGlassOffered
    ? [
        button(REQUEST_BUTTONS.breakGlass, 'Break glass', r.id, {
          confirm: {
            title: 'Apply without approval?',
            text: 'Only its requester may. It is applied at once, announced here and where it was asked, and an approver reviews it afterwards.',
            confirm: 'Give the reason',
            deny: 'Cancel',
          },
        }),
      ]
    : [];
  return actions(
    'rmq_request_decision',
    button(REQUEST_BUTTONS.approve, 'Approve', r.id, { style: 'primary' }),
    button(REQUEST_BUTTONS.reject, 'Reject', r.id, { style: 'danger' }),
    ...breakGlass,
  );
}

/**
 * A time-boxed request: approving it approves its revert at the deadline too. Before the apply
 * the deadline is a duration from then; after, a time.
 */
export function timeBoxLine(
  r: Pick<ChangeRequest, 'appliedAt'> & Partial<Pick<ChangeRequest, 'set'>>,
  forMs: number,
): string {
  const at = r.appliedAt ? Date.parse(r.appliedAt) + forMs : undefined;
  // A set is reverted whole, planned at the deadline; its approval does not cover a loss on the
  // revert's way (rules.ts `revertWayRefusal`).
  const unless = r.set
    ? 'a policy of the set is changed again meanwhile, or no order of writing the revert spares every queue on its way'
    : 'the policy is changed again meanwhile';
  return at === undefined
    ? `:hourglass: *Time-boxed:* reverted ${formatDuration(forMs)} after it is applied${r.set ? ', the whole set' : ''}. Approving it approves the revert too; if ${unless}, the revert asks for a new approval instead.`
    : `:hourglass: *Time-boxed:* reverted at ${when(new Date(at).toISOString())} (${formatDuration(forMs)} after it was applied), unless ${unless}: then the revert asks for a new approval.`;
}

/** A request the bot filed again: the one that went stale, and why the approvers are asked again. */
export function againLine(staleId: string): string {
  return `:repeat: *Filed again* by the bot: request ${code(staleId)} went stale because the change would now remove more than its approval accepted. Approvers, decide on the fresh numbers below.`;
}

/** What a request changes, in words: its one change, or its set. `render` shows a name. */
function changeWords(r: ChangeRequest, render = code): string {
  if (r.set) return setWords({ action: r.action, set: r.set }, render);
  return `${prose(actionWords(r))} ${layerWords(r)} ${render(truncate(r.policy, 200))}`;
}

/** Where a request changes things: `env`/`vhost`, or a set's environment and every vhost it touches. */
export function whereWords(r: ChangeRequest, render = code): string {
  return r.set
    ? `${render(r.env)} (${vhostsWords(setVhosts(r.set), render)})`
    : `${render(r.env)}/${render(truncate(r.vhost, 200))}`;
}

/** The title line of a request, for messages and modals. */
export function requestTitle(r: ChangeRequest): string {
  return `*Change request* ${code(r.id)}: ${changeWords(r)}`;
}

/** The request message in the approvals channel, as it reads in `request.state`. */
export function requestMessage(r: ChangeRequest, options: { fileAttached?: boolean } = {}): SlackMessage {
  const s = r.preview.summary;
  const loss = summaryBlocks(s, {
    operator: r.layer === 'operator',
    nothing: r.preview.objects === 0 && r.preview.unpredictable === 0,
  });
  const blocks: Block[] = [
    section(requestTitle(r)),
    section(
      [
        `*Requested by* ${who(r.requester.user)} at ${when(r.createdAt)}`,
        `*Environment* ${code(r.env)} · ${r.set ? vhostsWords(setVhosts(r.set)) : `*vhost* ${code(r.vhost)}`}`,
        `*Reason* ${r.requester.reason ? prose(truncate(r.requester.reason, 1000)) : '_(none given)_'}`,
        ...(r.revertOf ? [`*Reverts* audit record ${code(r.revertOf)}`] : []),
        ...(r.againOf ? [againLine(r.againOf)] : []),
      ].join('\n'),
    ),
    // A set's loss comes before its changes (the end state's, then the way's): the approver reads it first.
    ...(r.set
      ? [...recreateLead(r.set), ...loss, ...setBlocks({ ...r, set: r.set })]
      : [
          ...changeBlocks(r),
          // What a delete does not restore, or how far a create or edit reaches: the approver reads it too.
          ...changeWarningBlocks({ action: r.action, operator: r.layer === 'operator', after: r.after }),
        ]),
    ...(r.timeBoxMs === undefined ? [] : [section(timeBoxLine(r, r.timeBoxMs))]),
  ];
  if (r.preview.warnings.length) blocks.push(warningsBlock(r.preview.warnings));
  if (!r.set) blocks.push(...loss);
  const footer = [`preview on broker ${prose(r.preview.brokerVersion)}`];
  if (r.preview.unpredictable) footer.push(`${count(r.preview.unpredictable, 'object')} unpredictable`);
  if (options.fileAttached) footer.push('every object is in the attached file');
  blocks.push(context(footer.join(' · ')));
  blocks.push(divider(), section(stateLine(r)));
  if (r.state === 'pending') blocks.push(buttons(r));
  const text = `Change request ${r.id}: ${changeWords(r, prose)} in ${whereWords(r, prose)} — ${r.state}.`;
  return leadWith(finish(blocks, text), lossUnknownOf(r));
}

/** A request filed without its loss known: the sentence its messages lead with (undefined: known). */
export function lossUnknownOf(r: Pick<ChangeRequest, 'preview'>): string | undefined {
  const unread = r.preview.unread;
  return unread?.length ? lossUnknownWords(unread, (v) => code(truncate(v, 200))) : undefined;
}

/** To the requester where they asked: filed, and where it waits (or that its message was not posted). */
export function filedView(
  r: ChangeRequest,
  approvals: string,
  posted: { readonly ok: boolean; readonly error?: string },
): SlackMessage {
  const channel = `<#${approvals.replace(/[^A-Z0-9]/gi, '')}>`;
  const lines = [`:inbox_tray: ${requestTitle(r)} in ${whereWords(r)} is filed by ${who(r.requester.user)}.`];
  if (r.breakGlass)
    lines.push(
      `:rotating_light: *Break glass:* it is applied now without approval, because ${prose(truncate(r.breakGlass.reason, 500))}; announced in ${channel} and here, and an approver reviews it by ${when(r.breakGlass.reviewBy)}.`,
    );
  lines.push(
    r.breakGlass && posted.ok
      ? 'The result is posted here.'
      : posted.ok
        ? `It waits for an approver in ${channel}; the result is posted here.`
        : `:warning: Its approval message could not be posted in ${channel} (Slack answered ${code(posted.error ?? 'unknown')}): invite the bot there, or give an approver the request id.`,
  );
  return leadWith(
    finish([section(lines.join('\n'))], `Change request ${r.id} filed; waiting for an approver.`),
    lossUnknownOf(r),
  );
}

/** To an approver whose decision came too late: who decided, and when. */
export function alreadyDecidedView(r: ChangeRequest): SlackMessage {
  const d = r.decision;
  const line =
    r.state === 'expired'
      ? `${code(r.id)} expired at ${when(r.expiresAt)}: nothing was decided, nothing applied.`
      : d
        ? `${code(r.id)} was already ${d.kind === 'approve' ? 'approved' : 'rejected'} by ${who(d.by)} at ${when(d.at)}. Your decision was not recorded.`
        : `${code(r.id)} no longer waits for a decision (it is ${prose(r.state)}). Your decision was not recorded.`;
  return finish([section(`:information_source: ${line}`)], line.replace(/<[^>]*\|([^>]*)>/g, '$1'));
}

// --- after the apply: the audit diff ---------------------------------------------------------

/**
 * A federation upstream's, upstream set's or shovel's values, key by key (an upstream set's list
 * whole), before -> after, every URI masked.
 */
export function valueDiffLines(before: unknown, after: unknown): string[] {
  const b = maskUris(before ?? null);
  const a = maskUris(after ?? null);
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!(isRecord(b) || b === null) || !(isRecord(a) || a === null))
    return [
      `${JSON.stringify(b) === JSON.stringify(a) ? ' ' : '~'} value: ${valueText(b)}  ->  ${valueText(a)}`,
    ];
  const keys = [...new Set([...Object.keys(b ?? {}), ...Object.keys(a ?? {})])].sort();
  if (keys.length === 0) return ['  value: (none)'];
  return keys.map((k) => {
    const x = b && k in b ? b[k] : null;
    const y = a && k in a ? a[k] : null;
    const mark = x === null ? '+' : y === null ? '-' : JSON.stringify(x) === JSON.stringify(y) ? ' ' : '~';
    return mark === ' '
      ? `  ${showInvisible(k)}: ${valueText(x)}`
      : `${mark} ${showInvisible(k)}: ${valueText(x)}  ->  ${valueText(y)}`;
  });
}

function valueText(v: unknown): string {
  return v === null || v === undefined ? '(none)' : valueWritten(v);
}

/**
 * Field by field, before -> after, as the audit record has it; every value and key as written
 * (one line each: a line break or a bidi override in a pattern cannot add a line to the diff).
 */
export function auditDiffLines(rec: Pick<ChangeRecord, 'before' | 'after' | 'value'>): string[] {
  if (rec.value) return valueDiffLines(rec.value.before, rec.value.after);
  const b = rec.before;
  const a = rec.after;
  const lines: string[] = [];
  const field = (label: string, x: unknown, y: unknown) => {
    const same = JSON.stringify(x) === JSON.stringify(y);
    lines.push(same ? `  ${label}: ${valueText(x)}` : `~ ${label}: ${valueText(x)}  ->  ${valueText(y)}`);
  };
  field('pattern', b?.pattern ?? null, a?.pattern ?? null);
  field('apply-to', b?.applyTo ?? null, a?.applyTo ?? null);
  field('priority', b?.priority ?? null, a?.priority ?? null);
  const keys = [
    ...new Set([...Object.keys(b?.definition ?? {}), ...Object.keys(a?.definition ?? {})]),
  ].sort();
  if (keys.length === 0) lines.push('  definition: (none)');
  for (const k of keys) {
    const x = b && k in b.definition ? b.definition[k] : null;
    const y = a && k in a.definition ? a.definition[k] : null;
    const mark = x === null ? '+' : y === null ? '-' : JSON.stringify(x) === JSON.stringify(y) ? ' ' : '~';
    lines.push(
      mark === ' '
        ? `  definition.${showInvisible(k)}: ${valueText(x)}`
        : `${mark} definition.${showInvisible(k)}: ${valueText(x)}  ->  ${valueText(y)}`,
    );
  }
  return lines;
}

/** One object of an audit record: its policy after, what it lost, gained and saw change. */
export function objectLoss(o: ChangeRecord['objects'][number]): string {
  const parts: string[] = [];
  const lost = Object.entries(o.lost);
  const gained = Object.entries(o.gained);
  const changed = Object.entries(o.changed);
  if (lost.length) parts.push(`lost ${lost.map(([k, v]) => `${code(k)} ${code(valueText(v))}`).join(', ')}`);
  if (gained.length)
    parts.push(`gained ${gained.map(([k, v]) => `${code(k)} ${code(valueText(v))}`).join(', ')}`);
  if (changed.length)
    parts.push(
      changed
        .map(([k, c]) => `${code(k)} ${code(valueText(c.before))} → ${code(valueText(c.after))}`)
        .join(', '),
    );
  const now = o.after ? code(o.after) : 'no policy';
  return `• ${code(truncate(o.name, 200))} _(${prose(o.kind)})_ → ${now}${parts.length ? ` — ${parts.join('; ')}` : ''}`;
}

/** The audit diff posted after the apply, in the approvals channel and where the request came from. */
export function auditView(rec: ChangeRecord, request?: Pick<ChangeRequest, 'timeBoxMs'>): SlackMessage {
  const what = rec.action === 'revert' ? 'revert' : rec.action;
  const layer = rec.operator ? 'operator policy' : 'policy';
  const blocks: Block[] = [
    section(
      `:white_check_mark: *Applied:* ${prose(what)} ${layer} ${code(truncate(rec.policy, 200))} in ${code(rec.env)}/${code(rec.vhost)} at ${rec.appliedAt ? when(rec.appliedAt) : when(rec.at)}`,
    ),
    section(
      [
        rec.requester
          ? `*Requested by* ${who(rec.requester.user)}: ${rec.requester.reason ? prose(truncate(rec.requester.reason, 600)) : '_(no reason)_'}`
          : '',
        ...(rec.approvers ?? (rec.approver ? [rec.approver] : [])).map(
          (a) =>
            `*Approved by* ${who(a.user)}: ${a.reason ? prose(truncate(a.reason, 600)) : '_(no reason)_'}`,
        ),
        `*Audit record* ${code(rec.id)}${rec.revertOf ? ` · reverts ${code(rec.revertOf)}` : ''}`,
      ]
        .filter(Boolean)
        .join('\n'),
    ),
    section(`*What changed* (before -> after)\n${codeBlock(truncate(auditDiffLines(rec).join('\n'), 2800))}`),
  ];
  if (rec.objects.length) {
    const heading =
      rec.action === 'delete' || rec.after === null
        ? `*What every object it governed lost* (${rec.objects.length}):`
        : `*Objects whose values changed* (${rec.objects.length}):`;
    blocks.push(listSection(heading, rec.objects.map(objectLoss), { maxItems: 15 }));
  } else {
    blocks.push(section('*Objects:* no object’s values changed.'));
  }
  blocks.push(...predictedObservedBlocks(rec));
  if (request?.timeBoxMs !== undefined) {
    blocks.push(section(timeBoxLine({ appliedAt: rec.appliedAt ?? rec.at }, request.timeBoxMs)));
  }
  if (rec.matchedPreview !== undefined) {
    blocks.push(
      context(
        rec.matchedPreview
          ? ':white_check_mark: Every affected object reports the policy the preview predicted.'
          : ':warning: Not every affected object reported the predicted policy by the deadline: check them.',
      ),
    );
  }
  blocks.push(
    actions(
      'rmq_audit_actions',
      button(REQUEST_BUTTONS.revert, 'Revert', rec.id, {
        confirm: {
          title: 'File a revert?',
          text: 'This files a new change request restoring the state before this change. It needs its own approval.',
          confirm: 'File it',
          deny: 'Cancel',
        },
      }),
    ),
  );
  return finish(
    blocks,
    `Applied: ${what} ${layer} ${prose(truncate(rec.policy, 200))} in ${prose(rec.env)}/${prose(truncate(rec.vhost, 100))} (audit ${rec.id}).`,
  );
}

/** What the change was predicted to do to the messages (as accepted) and what the broker then showed. */
function predictedObservedBlocks(rec: ChangeRecord): Block[] {
  const o = rec.observed;
  const accepted = rec.impact ? `*${prose(acceptedWords(rec.impact))}*` : '';
  if (!o) return accepted ? [section(accepted)] : [];
  const heading = [accepted, prose(observationWords(o))].filter(Boolean).join('\n');
  const name = (n: string) => code(truncate(n, 200));
  return o.queues.length
    ? [
        listSection(
          heading,
          inShowingOrder(o).map((q) => `• ${observedQueueWords(q, o, name)}`),
          { maxItems: 15 },
        ),
      ]
    : [section(heading)];
}

/**
 * Where the request came from, when it was not applied: failed (the broker's reason) or stale;
 * `again`, for a stale one: what became of filing it again (its new id, or why it was refused).
 */
export function notAppliedView(
  r: ChangeRequest,
  again?: { readonly id: string } | { readonly refused: string },
): SlackMessage {
  const blocks = [section(requestTitle(r)), section(stateLine(r))];
  if (again)
    blocks.push(
      section(
        'id' in again
          ? `:repeat: Filed again as ${code(again.id)} with the fresh numbers: its approvers are asked to decide on them.`
          : `:warning: It could not be filed again: ${prose(truncate(again.refused, 800))} File the request again to go ahead.`,
      ),
    );
  return finish(blocks, `Change request ${r.id} was not applied (${r.state}).`);
}

/** To the requester (by DM) and where they asked, at every decision: the request and its state line. */
export function decisionNoticeView(r: ChangeRequest): SlackMessage {
  return finish(
    [section(requestTitle(r)), section(stateLine(r))],
    `Your change request ${r.id} (${changeWords(r, prose)} in ${prose(r.env)}) is ${r.state}.`,
  );
}

/** In the request's thread, once half its time to live passed without a decision: its approvers named. */
export function reminderView(r: ChangeRequest, approvers: readonly string[]): SlackMessage {
  const needed = approvalsNeeded(r);
  const given = approvalsOf(r).length;
  const waiting = needed > 1 ? ` (${given} of ${needed} approvals so far)` : '';
  return finish(
    [
      section(
        `:bell: ${requestTitle(r)} still waits for a decision${waiting}; it expires ${when(r.expiresAt)}, and nothing is applied unless it is approved.\n${whoList(approvers)}: please approve or reject it.`,
      ),
    ],
    `Change request ${r.id} still waits for a decision; it expires at ${r.expiresAt}.`,
  );
}
