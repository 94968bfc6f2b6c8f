import type { ChangeRecord } from '../../audit/index.ts';
import { acceptedWords } from '../../audit/index.ts';
import { componentWords } from '../../plan/index.ts';
import type { ChangeRequest } from '../../workflow/index.ts';
import {
  type ChangeSet,
  isParameterSetStep,
  setRecordId,
  setVhosts,
  stepAction,
  stepComponent,
} from '../../workflow/index.ts';
import { code, codeBlock, prose, truncate } from '../escape.ts';
import { setFile, setWords, vhostsWords } from './changeSet.ts';
import { actions, type Block, button, context, finish, type MessageWithFile, section } from './message.ts';
import {
  auditDiffLines,
  auditView,
  REQUEST_BUTTONS,
  timeBoxLine,
  valueDiffLines,
  when,
  who,
} from './request.ts';

/**
 * A change set applied, pure: what is posted in the approvals channel and where it was asked, as
 * a single change's audit diff is. Every change in the order written, each with its audit record
 * and its diff, as many as Slack's limits allow (SHOWN_DIFFS: the message stays within them for
 * any set, test/unit/slack-views-set.test.ts), the whole set in the attached file; and Revert,
 * which files the revert of the whole set, planned like any set (workflow.ts `revertRequestFor`).
 */

/** Changes shown with their diff; the rest are in the attached file. */
export const SHOWN_DIFFS = 10;
/** Characters of one change's diff in the message. */
const DIFF_CHARS = 700;

/** The Revert button of an applied set: its value the set's last record, which reverts the whole set. */
function revertSetButton(last: ChangeRecord) {
  return actions(
    'rmq_audit_actions',
    button(REQUEST_BUTTONS.revert, 'Revert the set', last.id, {
      confirm: {
        title: 'File a revert?',
        text: 'This files a new change request restoring every policy of this set as it was before, planned like any set. It needs its own approval.',
        confirm: 'File it',
        deny: 'Cancel',
      },
    }),
  );
}

export function setAppliedView(r: ChangeRequest & { set: ChangeSet }, last: ChangeRecord): MessageWithFile {
  const steps = r.set.steps;
  const at = last.appliedAt ?? last.at;
  const vhosts = vhostsWords(setVhosts(r.set));
  const first = setRecordId(r.id, 0);
  const records = steps.length === 1 ? code(first) : `${code(first)} to ${code(last.id)}, one per change`;
  const people = [
    last.requester
      ? `*Requested by* ${who(last.requester.user)}: ${last.requester.reason ? prose(truncate(last.requester.reason, 600)) : '_(no reason)_'}`
      : '',
    ...(last.approvers ?? (last.approver ? [last.approver] : [])).map(
      (a) => `*Approved by* ${who(a.user)}: ${a.reason ? prose(truncate(a.reason, 600)) : '_(no reason)_'}`,
    ),
    `*Audit records* ${records}`,
  ].filter(Boolean);
  const diffs = steps.slice(0, SHOWN_DIFFS).map((s, i) => {
    const lines = isParameterSetStep(s) ? valueDiffLines(s.before, s.after) : auditDiffLines(s);
    return section(
      `*${i + 1}. ${prose(stepAction(s))} ${componentWords(stepComponent(s))}* ${code(truncate(s.name, 200))} in ${code(truncate(s.vhost, 100))} · ${code(setRecordId(r.id, i))}\n${codeBlock(truncate(lines.join('\n'), DIFF_CHARS))}`,
    );
  });
  const rest = steps.length - diffs.length;
  const impact = r.preview.summary.impact;
  const blocks: Block[] = [
    section(
      `:white_check_mark: *Applied:* ${setWords({ action: r.action, set: r.set })} in ${code(r.env)} (${vhosts}) at ${when(at)}`,
    ),
    section(people.join('\n')),
    section(`*What changed*, in the order written (before -> after):`),
    ...diffs,
    ...(rest > 0
      ? [
          context(
            `_…and ${rest} more change${rest === 1 ? '' : 's'}: every change, before and after, is in the attached file._`,
          ),
        ]
      : []),
    ...(impact ? [section(`*${prose(acceptedWords(impact.totals))}*`)] : []),
    ...(r.timeBoxMs === undefined ? [] : [section(timeBoxLine({ appliedAt: at, set: r.set }, r.timeBoxMs))]),
    revertSetButton(last),
  ];
  const n = steps.length;
  return {
    ...finish(
      blocks,
      `Applied: ${setWords({ action: r.action, set: r.set }, prose)} in ${prose(r.env)} (${vhostsWords(setVhosts(r.set), prose)}): ${n} change${n === 1 ? '' : 's'}, audit ${first}${n > 1 ? ` to ${last.id}` : ''}.`,
    ),
    ...(rest > 0 ? { file: setFile(r) } : {}),
  };
}

/** What is posted once a request is applied: a set's every change, or a single change's audit diff. */
export function appliedView(r: ChangeRequest, last: ChangeRecord): MessageWithFile {
  return r.set ? setAppliedView({ ...r, set: r.set }, last) : auditView(last, r);
}
