import type { RequestsResult } from '../../commands/requests/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { vhostsWords } from './changeSet.ts';
import { context, finish, type SlackMessage, section } from './message.ts';
import { frozenLine } from './request.ts';

/** `requests`: the open change requests, oldest first, one section each (read-only). */

const STATE_WORDS: Readonly<Record<string, string>> = {
  pending: 'waiting for approval',
  approved: 'approved, about to be applied',
  applying: 'being applied',
  applied: 'applied',
};

const user = (id: string) => (/^[UW][A-Z0-9]+$/.test(id) ? `<@${id}>` : code(id));

export function requestsView(r: RequestsResult): SlackMessage {
  const frozen = r.frozen.map((f) =>
    section(`${frozenLine(f.env, f)} Approved requests there wait for its end.`),
  );
  if (r.requests.length === 0)
    return finish([...frozen, section('No open change requests.')], 'No open change requests.');
  const blocks = r.requests.map((q) => {
    const c = q.change;
    const what = q.set
      ? `*${c.action}* of ${q.set.size} policy change${q.set.size === 1 ? '' : 's'} from ${code(truncate(q.set.source, 200))} in ${code(q.env)} (${vhostsWords(q.set.vhosts)})`
      : `*${c.action}* ${c.operator ? 'operator policy' : 'policy'} ${code(c.policy)} in ${code(q.env)} / ${code(q.vhost)}`;
    const lines = [
      `${what}: ${STATE_WORDS[q.state] ?? q.state}`,
      `requested by ${user(q.requester.user)}${q.requester.reason ? `: ${prose(q.requester.reason)}` : ''}`,
      q.breakGlass
        ? `:rotating_light: break glass by ${user(q.breakGlass.by)}: ${prose(q.breakGlass.reason)}${q.unreviewed ? ` · *unreviewed* (due by <!date^${Math.floor(Date.parse(q.breakGlass.reviewBy) / 1000)}^{date_short_pretty} {time}|${q.breakGlass.reviewBy}>)` : ''}`
        : q.decision
          ? `${q.decision.kind === 'approve' ? 'approved' : 'rejected'} by ${user(q.decision.by)}: ${prose(q.decision.reason)}`
          : `expires <!date^${Math.floor(Date.parse(q.expiresAt) / 1000)}^{date_short_pretty} {time}|${q.expiresAt}>`,
    ];
    return section(lines.join('\n'));
  });
  return finish(
    [
      ...frozen,
      ...blocks,
      context(`${r.requests.length} open · ids: ${r.requests.map((q) => code(q.id)).join(' ')}`),
    ],
    `${r.requests.length} open change request${r.requests.length === 1 ? '' : 's'}`,
  );
}
