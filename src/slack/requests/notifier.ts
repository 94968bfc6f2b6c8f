import type { AuditRecord } from '../../audit/types.ts';
import type { Logger } from '../../log.ts';
import type { PreviewResult } from '../../preview/preview.ts';
import type { TimeBoxNotifier } from '../../workflow/timeboxDeadline.ts';
import type { ChangeRequest, Notifier } from '../../workflow/types.ts';
import type { Delivery, Sent } from '../delivery.ts';
import { finish, type SlackMessage } from '../views/message.ts';
import { previewView } from '../views/preview.ts';
import { auditView, notAppliedView, requestMessage } from '../views/request.ts';
import { timeBoxAskView, timeBoxNothingView, timeBoxWarningView } from '../views/timebox.ts';

/**
 * The workflow's Notifier, in Slack: the request message in the approvals channel is updated in
 * place at every state; the audit diff (with Revert) is posted in the approvals channel and in
 * the thread the request came from; a failure (with the broker's reason) and a stale request
 * (with a fresh preview) are posted in both places too. Every call goes through the delivery
 * helper (retries within a budget). A call that did not reach Slack throws, so the workflow
 * logs it; it never undoes a transition.
 */

interface Place {
  readonly channel: string;
  readonly threadTs?: string | undefined;
}

/** The approvals channel and the origin (its thread); once when they are the same place. */
function places(r: ChangeRequest): Place[] {
  const approvals = r.message?.channel ?? r.approvalsChannel;
  const out: Place[] = [];
  if (approvals) out.push({ channel: approvals });
  const origin = { channel: r.origin.channel, threadTs: r.origin.threadTs };
  if (!(approvals === origin.channel && origin.threadTs === undefined)) out.push(origin);
  return out;
}

export function createSlackNotifier(options: {
  delivery: Delivery;
  logger: Logger;
}): Notifier & TimeBoxNotifier {
  const { delivery, logger } = options;

  async function postAll(r: ChangeRequest, message: SlackMessage, what: string): Promise<void> {
    const results: Sent[] = await Promise.all(
      places(r).map((p) =>
        delivery.toChannel({ channel: p.channel, threadTs: p.threadTs }).send(message, 'channel'),
      ),
    );
    const failed = results.filter((x): x is Sent & { ok: false } => !x.ok);
    if (failed.length > 0) {
      logger.warn(
        { requestId: r.id, what, errors: failed.map((f) => f.error) },
        'a request notice was not posted',
      );
      throw new Error(`${what} not posted: ${failed.map((f) => f.error).join(', ')}`);
    }
  }

  return {
    async stateChanged(r) {
      if (!r.message) return;
      const message = requestMessage(r);
      const sent = await delivery.call('chat.update', {
        channel: r.message.channel,
        ts: r.message.ts,
        text: message.text,
        blocks: message.blocks,
      });
      if (!sent.ok) {
        logger.warn(
          { requestId: r.id, state: r.state, error: sent.error },
          'the request message was not updated',
        );
        throw new Error(`request message not updated: ${sent.error}`);
      }
    },
    applied: (r: ChangeRequest, record: AuditRecord) => postAll(r, auditView(record, r), 'audit diff'),
    timeBoxWarning: (r, deadline, willRevert) =>
      postAll(r, timeBoxWarningView(r, deadline, willRevert), 'time-box warning'),
    timeBoxAsk: (r, revert, why) => postAll(r, timeBoxAskView(r, revert, why), 'time-box revert asked'),
    timeBoxNothing: (r) => postAll(r, timeBoxNothingView(r), 'time-box nothing to revert'),
    failed: (r) => postAll(r, notAppliedView(r), 'failure'),
    async stale(r, fresh: PreviewResult) {
      const note = notAppliedView(r);
      const { file: _file, ...preview } = previewView(fresh);
      await postAll(r, finish([...note.blocks, ...preview.blocks], note.text), 'stale notice');
    },
  };
}
