import type { RequestsResult } from '../commands/requests/index.ts';
import { namesOrCount, quoted, terminalText } from '../text/index.ts';
import { policyWords } from './preview.ts';

/** Open change requests as terminal text, oldest first. */
export function requestsText(r: RequestsResult): string {
  const frozen = r.frozen.map(
    (f) =>
      `${f.env} is frozen until ${f.until} by ${f.by} because ${quoted(f.reason)}: approved requests wait.`,
  );
  if (r.requests.length === 0) return terminalText([...frozen, 'No open change requests.']);
  const lines: string[] = [
    ...frozen,
    `${r.requests.length} open change request${r.requests.length === 1 ? '' : 's'}:`,
  ];
  for (const q of r.requests) {
    const c = q.change;
    const what = q.set
      ? `${c.action} of ${q.set.size} policy change${q.set.size === 1 ? '' : 's'} from ${quoted(q.set.source)} in ${q.env} (${namesOrCount(q.set.vhosts, quoted, 'vhost')})`
      : `${c.action} ${c.operator ? 'operator policy' : 'policy'} ${quoted(c.policy)} in ${q.env}/${quoted(q.vhost)}`;
    lines.push(
      '',
      `${q.id}  ${q.state.toUpperCase()}${q.unreviewed ? ' UNREVIEWED' : ''}  ${what}`,
      `  requested by ${q.requester.user} at ${q.createdAt}${q.requester.reason ? `: ${quoted(q.requester.reason)}` : ''}`,
    );
    // A set's changes, each with its before and after, are in its approval message's file.
    if (!q.set) {
      if (c.before) lines.push(`  now:   ${policyWords(c.before)}`);
      lines.push(`  after: ${c.after ? policyWords(c.after) : '(deleted)'}`);
    }
    for (const a of q.approvalsRequired > 1 ? q.approvals : [])
      lines.push(`  approval by ${a.by} at ${a.at}: ${JSON.stringify(a.reason)}`);
    if (q.state === 'pending' && q.approvalsRequired > 1)
      lines.push(`  ${q.approvals.length} of ${q.approvalsRequired} approvals`);
    if (q.breakGlass) {
      lines.push(
        `  break glass: applied without approval by ${q.breakGlass.by} at ${q.breakGlass.at}: ${quoted(q.breakGlass.reason)}`,
        q.review
          ? `  ${q.review.outcome} by ${q.review.by} at ${q.review.at}: ${quoted(q.review.reason)}`
          : `  unreviewed: an approver reviews it (due by ${q.breakGlass.reviewBy})`,
      );
    } else if (q.decision)
      lines.push(
        `  ${q.decision.kind === 'approve' ? 'approved' : 'rejected'} by ${q.decision.by} at ${q.decision.at}: ${quoted(q.decision.reason)}`,
      );
    else lines.push(`  expires at ${q.expiresAt}`);
  }
  return terminalText(lines);
}
