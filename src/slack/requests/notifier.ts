import type { ChangeRecord } from '../../audit/index.ts';
import { isSlackUserId } from '../../core/index.ts';
import type { Logger } from '../../log/index.ts';
import type { PreviewResult } from '../../preview/index.ts';
import type { ChangeRequest, Notifier } from '../../workflow/index.ts';
import type { TimeBoxNotifier } from '../../workflow/timebox/index.ts';
import type { Delivery, Sent } from '../delivery.ts';
import { breakGlassAppliedView, reviewedView, reviewReminderView } from '../views/breakGlass.ts';
import { finish, type MessageWithFile } from '../views/message.ts';
import { previewView } from '../views/preview.ts';
import { decisionNoticeView, notAppliedView, reminderView, requestMessage } from '../views/request.ts';
import { appliedView } from '../views/setApplied.ts';
import { timeBoxAskView, timeBoxNothingView, timeBoxWarningView } from '../views/timebox.ts';
import type { FileOutcome } from './service.ts';

/**
 * The workflow's Notifier, in Slack: the request message in the approvals channel is updated in
 * place at every state; the audit diff (with Revert) is posted in the approvals channel and in
 * the thread the request came from; a failure (with the broker's reason) and a stale request
 * (with a fresh preview) are posted in both places too. Every call goes through the delivery
 * helper (retries within a budget). The requester is told by DM at every decision (approved,
 * rejected, expired, applied, failed, stale), and where they asked of the first three (a requester
 * with no DM, `api:NAME`, in the request's thread); half a
 * request's time to live without a decision, its approvers are reminded in its thread. A change
 * applied by break-glass is announced loudly in both places with Review and Revert, its review is
 * posted there too, and unreviewed past its deadline the approvals channel is reminded. A call that did not reach Slack throws, so the workflow
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

/** States the requester is told of by DM and where they asked (applied, failed and stale are posted there anyway). */
const DECISIONS: readonly ChangeRequest['state'][] = ['approved', 'rejected', 'expired'];
const TOLD_BY_DM: readonly ChangeRequest['state'][] = [...DECISIONS, 'applied', 'failed', 'stale'];

export function createSlackNotifier(options: {
  delivery: Delivery;
  logger: Logger;
  /** The configured approvers (user and group ids) of an environment, named in reminders. */
  approversOf: (env: string) => readonly string[];
  /**
   * Files again (and posts for its approvers) a request gone stale on a bigger loss
   * (`ChangeRequests.fileAgain`); absent: the stale notice only.
   */
  fileAgain?: (stale: ChangeRequest) => Promise<FileOutcome>;
}): Notifier & TimeBoxNotifier {
  const { delivery, logger } = options;

  /**
   * The requester, by DM (a failure is logged: the thread is told too). A requester who is no
   * Slack user (`api:NAME`, a token of RMQ_API_TOKENS) has no DM: a decision is told in the
   * request message's thread instead; what is posted anyway (applied, failed, stale) is not told twice.
   */
  async function tellRequester(r: ChangeRequest): Promise<void> {
    const message = decisionNoticeView(r);
    if (!isSlackUserId(r.requester.user)) {
      if (!DECISIONS.includes(r.state)) return;
      const where = r.message
        ? { channel: r.message.channel, threadTs: r.message.ts }
        : { channel: r.approvalsChannel ?? r.origin.channel };
      const sent = await delivery.toChannel(where).send(message, 'channel');
      if (!sent.ok)
        logger.warn(
          { requestId: r.id, state: r.state, error: sent.error },
          'the decision was not posted in the thread',
        );
      return;
    }
    const sent = await delivery.call('chat.postMessage', {
      channel: r.requester.user,
      text: message.text,
      blocks: message.blocks,
    });
    if (!sent.ok)
      logger.warn({ requestId: r.id, state: r.state, error: sent.error }, 'the requester was not told by DM');
  }

  /** Where the request was asked for (its thread), unless that is the approvals message itself. */
  async function tellOrigin(r: ChangeRequest): Promise<void> {
    const origin = places(r).find((p) => p.channel === r.origin.channel && p.threadTs === r.origin.threadTs);
    if (!origin) return;
    const sent = await delivery
      .toChannel({ channel: origin.channel, threadTs: origin.threadTs })
      .send(decisionNoticeView(r), 'channel');
    if (!sent.ok)
      logger.warn({ requestId: r.id, error: sent.error }, 'the decision was not posted where asked');
  }

  /** The approvers asked again, on the fresh numbers: the change filed again and posted. */
  async function askAgain(r: ChangeRequest) {
    if (!options.fileAgain) return undefined;
    try {
      const filed = await options.fileAgain(r);
      return filed.ok ? { id: filed.request.id } : { refused: filed.error.message };
    } catch (err) {
      logger.error({ err, requestId: r.id }, 'a request gone stale on a bigger loss was not filed again');
      return { refused: 'the bot could not file it again.' };
    }
  }

  /** `message` posted in every place of the request; its `file`, when it has one, beside each post (in its thread). */
  async function postAll(r: ChangeRequest, message: MessageWithFile, what: string): Promise<void> {
    const { file, ...post } = message;
    const results: Sent[] = await Promise.all(
      places(r).map(async (p) => {
        const sent = await delivery
          .toChannel({ channel: p.channel, threadTs: p.threadTs })
          .send(post, 'channel');
        if (file && sent.ok) {
          const attached = await delivery
            .toChannel({ channel: sent.channel ?? p.channel, threadTs: p.threadTs ?? sent.ts })
            .attach(file);
          if (!attached.ok)
            logger.warn(
              { requestId: r.id, what, error: attached.error },
              'the file of a request notice was not attached',
            );
        }
        return sent;
      }),
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
      if (TOLD_BY_DM.includes(r.state)) await tellRequester(r);
      if (DECISIONS.includes(r.state)) await tellOrigin(r);
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
    applied: (r: ChangeRequest, record: ChangeRecord) =>
      r.breakGlass
        ? postAll(r, breakGlassAppliedView(record, r), 'break-glass notice')
        : postAll(r, appliedView(r, record), 'audit diff'),
    reviewed: (r) => postAll(r, reviewedView(r), 'break-glass review'),
    async reviewReminder(r) {
      const channel = r.message?.channel ?? r.approvalsChannel ?? r.origin.channel;
      const sent = await delivery
        .toChannel({ channel })
        .send(reviewReminderView(r, options.approversOf(r.env)), 'channel');
      if (!sent.ok) throw new Error(`review reminder not posted: ${sent.error}`);
    },
    timeBoxWarning: (r, deadline, willRevert) =>
      postAll(r, timeBoxWarningView(r, deadline, willRevert), 'time-box warning'),
    timeBoxAsk: (r, revert, why) => postAll(r, timeBoxAskView(r, revert, why), 'time-box revert asked'),
    timeBoxNothing: (r) => postAll(r, timeBoxNothingView(r), 'time-box nothing to revert'),
    failed: (r) => postAll(r, notAppliedView(r), 'failure'),
    async reminder(r) {
      const message = reminderView(r, options.approversOf(r.env));
      const where = r.message
        ? { channel: r.message.channel, threadTs: r.message.ts }
        : { channel: r.approvalsChannel ?? r.origin.channel };
      const sent = await delivery.toChannel(where).send(message, 'channel');
      if (!sent.ok) throw new Error(`reminder not posted: ${sent.error}`);
    },
    async stale(r, fresh: PreviewResult) {
      const note = notAppliedView(r, r.staleBecause === 'loss-grew' ? await askAgain(r) : undefined);
      const { file: _file, ...preview } = previewView(fresh);
      await postAll(r, finish([...note.blocks, ...preview.blocks], note.text), 'stale notice');
    },
  };
}
