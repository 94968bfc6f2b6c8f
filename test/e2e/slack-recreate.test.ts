import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { adminClient, managementCall, uniqueName, waitFor } from '../support/broker.ts';
import { BROKERS } from '../support/brokers.ts';
import {
  APPROVALS_CHANNEL,
  APPROVER,
  APPROVER_GROUP,
  type Harness,
  renderedText,
  startHarness,
} from '../support/harness.ts';
import { buttonValue, type OpenedView, submission } from '../support/interactions.ts';
import { liveShows, messages } from '../support/messages.ts';
import { buttonsOf, isPost, requestFlow, viewOf } from '../support/requestFlow.ts';

/**
 * A federation link the runbook says to fix by re-creating its policy, end to end (signed Slack
 * requests to the bot from dist/, the fake Web API, the real broker and Redis): the links answer
 * carries "Re-create policy fed"; clicked, the reason asked, it files one change request (the
 * clicker its requester) whose preview says what the objects go through between the two writes —
 * the fallback policy's max-length 1 dropping 2 of the queue's 3 messages, the links stopping —
 * and that the end state is now. Its requester may not approve it; another approver does, the
 * loss acknowledged; the apply job deletes and creates the policy, the link the broker left
 * stopped runs again (a new timestamp), and the audit trail holds both steps as one set.
 *
 * The link is stopped on purpose: its upstream names a vhost that does not exist, with a
 * reconnect delay of an hour; the vhost is then created, and only a restart brings the link up.
 */

let h: Harness;
let flow: ReturnType<typeof requestFlow>;
const admin = adminClient();
const [machine] = BROKERS;
const REQUESTER = APPROVER;
const SECOND = 'U0SECONDAPPROVER';
const up = uniqueName('recreate-up');
const FED = {
  pattern: '^fed\\.',
  applyTo: 'all',
  priority: 10,
  definition: { 'federation-upstream': 'up1', 'max-length': 10 },
} as const;

/** The exchange link as the broker reports it: its status and timestamp. */
async function exchangeLink(): Promise<{ status?: string; timestamp?: string } | undefined> {
  const { json } = await managementCall(machine?.url ?? '')(
    'GET',
    `federation-links/${encodeURIComponent(h.vhost)}`,
  );
  return (json as { exchange?: string; status?: string; timestamp?: string }[]).find(
    (l) => l.exchange === 'fed.x',
  );
}

beforeAll(async () => {
  if (!machine) throw new Error('no test broker');
  h = await startHarness({ changes: true, lab: false, logLevel: process.env.TEST_LOG_LEVEL ?? 'warn' });
  h.slack.setUsergroup(APPROVER_GROUP, [SECOND]);
  flow = requestFlow(h);
  const port = new URL(machine.amqpUrl).port || '5672';
  await admin.putParameter({
    component: 'federation-upstream',
    vhost: h.vhost,
    name: 'up1',
    value: { uri: `amqp://guest:guest@127.0.0.1:${port}/${encodeURIComponent(up)}`, 'reconnect-delay': 3600 },
  });
  await admin.putExchange(h.vhost, 'fed.x', 'topic');
  await admin.putQueue(h.vhost, 'fed.q', { kind: 'classic' });
  await admin.putPolicy('user', { vhost: h.vhost, name: 'fed', ...FED });
  await admin.putPolicy('user', {
    vhost: h.vhost,
    name: 'cap',
    pattern: '^fed\\.q$',
    applyTo: 'queues',
    priority: 0,
    definition: { 'max-length': 1 },
  });
  const amqp = await messages(machine, h.vhost);
  await amqp.publish('fed.q', 3);
  await amqp.close();
  await liveShows(admin, h.vhost, { 'fed.q': { ready: 3 } });
  await waitFor(async () => (await exchangeLink())?.status === 'error', {
    deadlineMs: 30_000,
    what: 'the link to the missing vhost stopped',
  });
  // The upstream's vhost now exists; the link, stopped, waits an hour before it tries again.
  await admin.putVhost(up);
}, 180_000);

afterAll(async () => {
  await admin.deleteVhost(up).catch(() => undefined);
  await h?.stop();
  await admin.close();
});

describe('re-creating a policy from the links answer', () => {
  let request: { id: string; ts: string };
  let stoppedAt: string | undefined;

  it('the links answer offers "Re-create policy fed", and its next step names the command', async () => {
    const { responseUrl } = await h.command(`links --vhost ${h.vhost}`);
    const answer = await h.answerTo(responseUrl);
    const shown = renderedText(answer.args);
    expect(shown).toMatch(/:red_circle: \*stopped\* · exchange `fed.x` ← upstream `up1`/);
    expect(shown).toContain(
      `if the link does not reconnect, re-create policy "fed" (ˋrecreate "fed" --vhost "${h.vhost}"ˋ, a change request like any other: put again unchanged, it restarts nothing).`,
    );
    const value = buttonValue(answer.args.blocks, 'rmq_links_recreate');
    expect(JSON.parse(value ?? 'null')).toEqual({ env: 'lab', vhost: h.vhost, policy: 'fed' });
    stoppedAt = (await exchangeLink())?.timestamp;
    expect(stoppedAt).toBeDefined();
  });

  it('the button asks the clicker why, then files one request: its preview says the way and that the end state is now', async () => {
    const mark = h.slack.calls.length;
    await h.interact(
      flow.click(
        REQUESTER,
        {
          action_id: 'rmq_links_recreate',
          value: JSON.stringify({ env: 'lab', vhost: h.vhost, policy: 'fed' }),
        },
        { channel: 'C0INCIDENT', ts: '1700000000.000100' },
      ),
    );
    const form = viewOf(await flow.next(mark, (c) => c.method === 'views.open' && c.ok, 'the reason form'));
    expect(form.callback_id).toBe('rmq_reason_form');
    const filed = await h.interact(submission(REQUESTER, form, { reason: 'INC-42: the link stays down' }));
    expect(filed.status).toBe(200);
    const message = await flow.approvalMessage(mark);
    request = message;
    const text = renderedText(message.call.args);
    expect(text).toMatch(/re-create of policy `fed` \(deleted, then created again as it is\)/);
    expect(text).toMatch(/\*Between the two writes\*, policy `fed` deleted and not yet created again/);
    expect(text).toMatch(/\*The end state is now:\*/);
    // What the fallback does to the queue meanwhile, in numbers: the approval acknowledges it.
    expect(text).toMatch(/\*What hurts — loss: 2 messages lost\*/);
    expect(text).toContain('`fed.q`: 2 messages removed at once and lost (max-length 1)');
    expect(text).toMatch(/\*On the way\* \(no order avoids it\): 2 messages lost/);
    expect(text).toMatch(
      /\*1\* falls back to `cap` — loses `federation-upstream`; changes `max-length`: `fed.q`/,
    );
    expect(text).toMatch(/lose a federation upstream/);
    expect(text).toMatch(/1\. delete policy `fed` in `[^`]+` · stops [^\n]*exchange `fed.x`/);
    expect(text).toMatch(/2\. create policy `fed` in `[^`]+` · starts [^\n]*exchange `fed.x`/);
    expect(text).toContain('<@U0APPROVER>');
    // Where it was asked: told it is filed.
    await flow.next(mark, (c) => isPost('C0INCIDENT', '1700000000.000100')(c), 'the filed notice');
    // Nothing is written before an approval.
    expect(await admin.getPolicy('user', h.vhost, 'fed')).toMatchObject({ priority: 10 });
    expect((await exchangeLink())?.timestamp).toBe(stoppedAt);
  });

  it('its requester may not approve it', async () => {
    const self = await flow.decide(REQUESTER, 'approve', request, 'my own, trust me');
    expect(JSON.parse(self.body)).toEqual({
      response_action: 'errors',
      errors: { reason: 'You filed this request: another approver must decide it.' },
    });
  });

  it('approved by another, the loss acknowledged: deleted then created, the link runs again, both steps audited', async () => {
    const mark = h.slack.calls.length;
    await flow.clickDecision(SECOND, 'approve', request);
    const view = viewOf(await flow.next(mark, (c) => c.method === 'views.open' && c.ok, 'the decision form'));
    const answer = await h.interact(acknowledged(SECOND, view, 'restart it'));
    expect(answer.status).toBe(200);
    const running = await waitFor(
      async () => {
        const l = await exchangeLink();
        return l?.status === 'running' && l.timestamp !== stoppedAt ? l : undefined;
      },
      { deadlineMs: 60_000, what: 'the link restarted' },
    );
    expect(running.timestamp).not.toBe(stoppedAt);
    expect(await admin.getPolicy('user', h.vhost, 'fed')).toMatchObject({ ...FED, name: 'fed' });
    // The way did what the preview said: the fallback's max-length 1 meanwhile.
    await liveShows(admin, h.vhost, { 'fed.q': { ready: 1 } });
    const applied = await flow.next(
      mark,
      (c) => isPost(APPROVALS_CHANNEL)(c) && /applied/i.test(renderedText(c.args)) && buttonsOf(c).length > 0,
      'the applied post',
    );
    expect(renderedText(applied.args)).toMatch(/fed/);
    const records = await waitFor(
      async () => {
        const list = (
          await new AuditTrail(h.redis as never, h.keyPrefix).list({ name: 'fed', vhost: h.vhost })
        )
          .filter(isChange)
          .filter((r) => r.policy === 'fed');
        return list.length >= 2 && list;
      },
      { what: 'both steps in the trail' },
    );
    // Newest first: the delete, then the create, one set, asked by the clicker, approved by another.
    expect(records.map((r) => [r.action, r.set?.index, r.set?.size])).toEqual([
      ['create', 1, 2],
      ['delete', 0, 2],
    ]);
    for (const r of records)
      expect(r).toMatchObject({ requester: { user: REQUESTER }, approver: { user: SECOND } });
    expect(records[0]?.after).toMatchObject({ pattern: FED.pattern, definition: FED.definition });
    expect(records[1]?.after).toBeNull();
  });
});

describe('/rmq recreate', () => {
  it('files the same request from the command, its asker the requester; a policy that does not exist is refused to the asker', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(`recreate fed --vhost ${h.vhost} --reason "INC-43: again"`, {
      userId: 'U0ONCALL',
    });
    const answer = renderedText((await h.answerTo(responseUrl)).args);
    expect(answer).toMatch(/re-create of policy `fed` .* is filed by <@U0ONCALL>/);
    const message = await flow.approvalMessage(mark);
    expect(renderedText(message.call.args)).toMatch(/\*Requested by\* <@U0ONCALL>[\s\S]*INC-43: again/);
    const missing = await h.command(`recreate nosuch --vhost ${h.vhost} --reason r`);
    const refused = await h.answerTo(missing.responseUrl);
    expect(refused.args.response_type).toBe('ephemeral');
    expect(renderedText(refused.args)).toMatch(/nosuch/);
  });
});

/** The decision form submitted with a reason and the loss acknowledged. */
function acknowledged(user: string, view: OpenedView, reason: string) {
  const payload = submission(user, view, { reason });
  const state = (payload.view as { state: { values: Record<string, unknown> } }).state.values;
  state.acknowledge_loss = {
    value: {
      type: 'checkboxes',
      selected_options: [{ text: { type: 'plain_text', text: 'I accept' }, value: 'accepted' }],
    },
  };
  return payload;
}
