/**
 * A change request's Slack flow as the e2e tests drive it: what the fake Slack saw since a mark,
 * the request message in the approvals channel, and an approver's click and form.
 */
import { expect } from 'vitest';
import { waitFor } from './broker.ts';
import type { RecordedCall } from './fakeSlack.ts';
import { APPROVALS_CHANNEL, type Harness } from './harness.ts';
import { type ClickWhere, clickPayload, type OpenedView, submission } from './interactions.ts';

export const isPost = (channel: string, threadTs?: string) => (c: RecordedCall) =>
  c.ok &&
  c.method === 'chat.postMessage' &&
  c.args.channel === channel &&
  (threadTs === undefined ? c.args.thread_ts === undefined : c.args.thread_ts === threadTs);

/** An ephemeral message to `user` (a refusal told at once). */
export const ephemeralTo = (user: string) => (c: RecordedCall) =>
  c.ok && c.method === 'chat.postEphemeral' && c.args.user === user;

export const buttonsOf = (c: RecordedCall) =>
  ((c.args.blocks as { type: string; elements?: { action_id?: string; value?: string }[] }[]) ?? []).flatMap(
    (b) => (b.type === 'actions' ? (b.elements ?? []) : []),
  );

export const viewOf = (c: RecordedCall) => c.args.view as OpenedView;

export function requestFlow(h: Harness) {
  const since = (mark: number) => h.slack.calls.slice(mark);
  const next = (mark: number, match: (c: RecordedCall) => boolean, what: string, deadlineMs = 60_000) =>
    waitFor(() => since(mark).find(match), { deadlineMs, intervalMs: 25, what });
  const click = (user: string, action: { action_id: string; value: string }, where: ClickWhere) =>
    clickPayload(user, action, where, h.slack.responseUrl());

  return {
    since,
    next,
    click,
    /** The request message posted in the approvals channel after `mark`, and its id. */
    async approvalMessage(mark: number): Promise<{ id: string; ts: string; call: RecordedCall }> {
      const call = await next(
        mark,
        (c) => isPost(APPROVALS_CHANNEL)(c) && buttonsOf(c).length >= 2,
        'the request in the approvals channel',
      );
      const [approve] = buttonsOf(call);
      return { id: String(approve?.value), ts: String(call.response?.ts), call };
    },
    /** Clicks Approve/Reject as `user`; the form it opened (undefined: none opened after `mark`). */
    async clickDecision(user: string, kind: 'approve' | 'reject', request: { id: string; ts: string }) {
      const actionId = kind === 'approve' ? 'rmq_request_approve' : 'rmq_request_reject';
      const res = await h.interact(
        click(
          user,
          { action_id: actionId, value: request.id },
          { channel: APPROVALS_CHANNEL, ts: request.ts },
        ),
      );
      expect(res.status).toBe(200);
    },
    /** Clicks Approve/Reject as `user` and submits the decision form with `reason`; the submission's HTTP answer. */
    async decide(
      user: string,
      kind: 'approve' | 'reject',
      request: { id: string; ts: string },
      reason: string,
    ): Promise<{ status: number; body: string }> {
      const mark = h.slack.calls.length;
      await this.clickDecision(user, kind, request);
      const opened = await next(mark, (c) => c.method === 'views.open' && c.ok, 'the decision form');
      const view = viewOf(opened);
      expect(view.callback_id).toBe('rmq_decision_form');
      const answer = await h.interact(submission(user, view, { reason }));
      return { status: answer.status, body: await answer.text() };
    },
  };
}
