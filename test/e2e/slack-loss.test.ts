import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestStore } from '../../src/workflow/store.ts';
import { adminClient } from '../support/broker.ts';
import { BROKERS } from '../support/brokers.ts';
import type { RecordedCall } from '../support/fakeSlack.ts';
import { APPROVALS_CHANNEL, APPROVER, type Harness, renderedText, startHarness } from '../support/harness.ts';
import { type OpenedView, submission } from '../support/interactions.ts';
import { liveShows, management, messages } from '../support/messages.ts';
import { buttonsOf, isPost, requestFlow, viewOf } from '../support/requestFlow.ts';

/**
 * Approving a loss, end to end (signed Slack requests to the bot from dist/, the fake Web API,
 * the real broker and Redis): the decision form asks for the acknowledgement of the loss in
 * numbers and an approval without it is refused inline with nothing applied; the Applied post
 * and `/rmq history` say what was predicted and what the broker then showed; and a change that
 * would remove more by the time it is approved is not applied: stale with the fresh numbers, and
 * filed again for the approvers to decide on them.
 */

let h: Harness;
let flow: ReturnType<typeof requestFlow>;
const admin = adminClient();
const REQUESTER = 'U0REQUESTER';
const [machine] = BROKERS;

beforeAll(async () => {
  h = await startHarness({ changes: true, logLevel: process.env.TEST_LOG_LEVEL ?? 'warn' });
  flow = requestFlow(h);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await admin.close();
});

/** A queue of `n` messages in the harness's vhost, once its statistics say so (the preview reads them). */
async function queueOf(name: string, n: number) {
  if (!machine) throw new Error('no test broker');
  const api = management(machine, h.vhost);
  await api.queue(name, 'classic');
  const amqp = await messages(machine, h.vhost);
  await amqp.publish(name, n);
  await liveShows(admin, h.vhost, { [name]: { ready: n } });
  return { api, amqp };
}

/** The decision form opened by `user`'s click on Approve. */
async function approveForm(user: string, request: { id: string; ts: string }): Promise<OpenedView> {
  const mark = h.slack.calls.length;
  await flow.clickDecision(user, 'approve', request);
  return viewOf(await flow.next(mark, (c) => c.method === 'views.open' && c.ok, 'the decision form'));
}

/** Submits the decision form with a reason, the acknowledgement ticked or not; the bot's answer. */
async function submitDecision(user: string, view: OpenedView, reason: string, acknowledged: boolean) {
  const payload = submission(user, view, { reason });
  const state = (payload.view as { state: { values: Record<string, unknown> } }).state.values;
  state.acknowledge_loss = {
    value: {
      type: 'checkboxes',
      selected_options: acknowledged
        ? [{ text: { type: 'plain_text', text: 'I accept' }, value: 'accepted' }]
        : [],
    },
  };
  const res = await h.interact(payload);
  expect(res.status).toBe(200);
  const text = await res.text();
  return text ? (JSON.parse(text) as { response_action?: string; errors?: Record<string, string> }) : {};
}

const checkboxText = (view: OpenedView) =>
  (view.blocks as { block_id?: string; element?: { options?: { text: { text: string } }[] } }[])
    .find((b) => b.block_id === 'acknowledge_loss')
    ?.element?.options?.map((o) => o.text.text);

describe('the approval of a loss', () => {
  it('asks for the acknowledgement, refuses without it, and the Applied post and history hold predicted and observed', async () => {
    const { api, amqp } = await queueOf('loss.trim', 30);
    try {
      const mark = h.slack.calls.length;
      const { responseUrl } = await h.command(
        `create trim --pattern ^loss\\.trim$ --apply-to queues --definition {"max-length":10} --vhost ${h.vhost} --reason INC-18`,
        { userId: REQUESTER },
      );
      expect(renderedText((await h.answerTo(responseUrl)).args)).toMatch(/is filed by <@U0REQUESTER>/);
      const request = await flow.approvalMessage(mark);
      expect(renderedText(request.call.args)).toMatch(/20 messages lost/);

      const form = await approveForm(APPROVER, request);
      expect(checkboxText(form)).toEqual(['I accept: 20 messages lost']);
      const refused = await submitDecision(APPROVER, form, 'disk is full', false);
      expect(refused.response_action).toBe('errors');
      expect(refused.errors?.acknowledge_loss).toMatch(
        /This change removes data \(20 messages lost\): tick the acknowledgement/,
      );
      expect(await admin.getPolicy('user', h.vhost, 'trim')).toBeNull();
      expect(h.proxy.requests.filter((r) => r.method === 'PUT' && r.url.includes('trim'))).toHaveLength(0);

      const accepted = await submitDecision(
        APPROVER,
        await approveForm(APPROVER, request),
        'disk is full',
        true,
      );
      expect(accepted).toEqual({});
      const applied = await flow.next(
        mark,
        (c) => isPost(APPROVALS_CHANNEL)(c) && /Applied:/.test(String(c.args.text)),
        'the Applied post',
      );
      const post = renderedText(applied.args);
      expect(post).toContain('*Predicted, as the approvers accepted it: 20 messages lost.*');
      expect(post).toMatch(/Observed, read after the write until .* predicted and observed agree\./);
      expect(post).toContain('• `loss.trim`: 30 messages before, 10 messages after (predicted 10 messages)');
      await api.settled('loss.trim', 10);

      const asked = await h.command(`history trim --vhost ${h.vhost}`);
      const history = renderedText((await h.answerTo(asked.responseUrl)).args);
      expect(history).toContain('Predicted, as the approvers accepted it: 20 messages lost.');
      expect(history).toContain(
        '• `loss.trim`: 30 messages before, 10 messages after (predicted 10 messages)',
      );
    } finally {
      await amqp.close();
    }
  }, 120_000);

  it('more messages before the approval: not applied, stale with the fresh numbers, the approvers asked again', async () => {
    const { api, amqp } = await queueOf('loss.grow', 30);
    try {
      const mark = h.slack.calls.length;
      const { responseUrl } = await h.command(
        `create grow --pattern ^loss\\.grow$ --apply-to queues --definition {"max-length":10} --vhost ${h.vhost} --reason INC-18`,
        { userId: REQUESTER },
      );
      await h.answerTo(responseUrl);
      const request = await flow.approvalMessage(mark);
      expect(renderedText(request.call.args)).toMatch(/20 messages lost/);

      // 20 more arrive before the approval: the same change would now remove 40.
      await amqp.publish('loss.grow', 20);
      await liveShows(admin, h.vhost, { 'loss.grow': { ready: 50 } });
      const form = await approveForm(APPROVER, request);
      expect(checkboxText(form)).toEqual(['I accept: 20 messages lost']);
      const afterApproval = h.slack.calls.length;
      expect(await submitDecision(APPROVER, form, 'accepting 20', true)).toEqual({});

      const isStaleNotice = (c: RecordedCall) =>
        isPost(APPROVALS_CHANNEL)(c) && /was not applied \(stale\)/.test(String(c.args.text));
      const notice = renderedText((await flow.next(afterApproval, isStaleNotice, 'the stale notice')).args);
      expect(notice).toMatch(/would now remove more than the approval accepted/);
      expect(notice).toMatch(/40 messages removed at once and lost/);
      const again = /Filed again as `(r-[0-9a-f]{20})` with the fresh numbers/.exec(notice)?.[1];
      expect(again).toBeDefined();

      // Not applied: no policy, the messages all there.
      expect(await admin.getPolicy('user', h.vhost, 'grow')).toBeNull();
      expect(h.proxy.requests.filter((r) => r.method === 'PUT' && r.url.includes('grow'))).toHaveLength(0);
      expect(await api.peek('loss.grow')).toBe(50);

      // The approvers are asked again: a new request message, the fresh loss to acknowledge.
      const asked = await flow.next(
        afterApproval,
        (c) => isPost(APPROVALS_CHANNEL)(c) && buttonsOf(c).some((b) => b.value === again),
        'the request filed again',
      );
      const text = renderedText(asked.args);
      expect(text).toContain(
        `went stale because the change would now remove more than its approval accepted`,
      );
      expect(text).toMatch(/40 messages lost/);
      const fresh = await approveForm(APPROVER, { id: again as string, ts: String(asked.response?.ts) });
      expect(checkboxText(fresh)).toEqual(['I accept: 40 messages lost']);
      const store = new RequestStore(h.redis as never, h.keyPrefix);
      expect(await store.get(request.id)).toMatchObject({ state: 'stale', staleBecause: 'loss-grew' });
      expect(await store.get(again as string)).toMatchObject({
        state: 'pending',
        againOf: request.id,
        requester: { user: REQUESTER, reason: 'INC-18' },
        preview: { summary: { impact: { totals: { messagesLost: 40 } } } },
      });
    } finally {
      await amqp.close();
    }
  }, 120_000);
});
