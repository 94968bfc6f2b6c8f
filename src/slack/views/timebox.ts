import { formatDuration } from '../../core/index.ts';
import type { ChangeRequest } from '../../workflow/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { finish, type SlackMessage, section } from './message.ts';
import { requestTitle, when, whereWords, who } from './request.ts';

/**
 * What a time-boxed change says as its deadline comes: the warning ten minutes before, and at
 * the deadline the revert asked for (the policy changed since) or nothing to revert. The revert
 * itself is an applied change like any other (request.ts `auditView`). Pure; strings escaped.
 */

const name = (r: ChangeRequest) => code(truncate(r.policy, 200));

export function timeBoxWarningView(r: ChangeRequest, deadline: Date, willRevert: boolean): SlackMessage {
  const line = willRevert
    ? `:hourglass_flowing_sand: *In 10 minutes* (${when(deadline.toISOString())}) the bot reverts ${name(r)} in ${whereWords(r)} to the state before ${code(r.id)}, as approved with it by ${r.decision ? who(r.decision.by) : 'its approver'}${r.set ? ', in the order it plans then: should no order spare every queue on the way, it asks for a new approval instead' : ''}.`
    : `:hourglass_flowing_sand: *In 10 minutes* (${when(deadline.toISOString())}) the time box of ${code(r.id)} ends, but ${name(r)} was changed again since: the bot will not revert it blindly and will ask for a new approval instead.`;
  return finish([section(line)], `In 10 minutes the time box of ${r.id} (${prose(r.policy)}) ends.`);
}

export function timeBoxAskView(r: ChangeRequest, revert: ChangeRequest, why: string): SlackMessage {
  const line = `:warning: *The time box of ${formatDuration(r.timeBoxMs ?? 0)} ended* for ${requestTitle(r)}, but ${prose(why)}. Nothing was reverted: the revert is request ${code(revert.id)}, waiting for a new approval${revert.approvalsChannel ? ` in <#${revert.approvalsChannel.replace(/[^A-Z0-9]/gi, '')}>` : ''}.`;
  return finish(
    [section(line)],
    `The time box of ${r.id} ended; its revert ${revert.id} needs a new approval.`,
  );
}

export function timeBoxNothingView(r: ChangeRequest): SlackMessage {
  return finish(
    [
      section(
        `:information_source: The time box of ${code(r.id)} ended; ${name(r)} is already as it was before it. Nothing to revert.`,
      ),
    ],
    `The time box of ${r.id} ended; nothing to revert.`,
  );
}
