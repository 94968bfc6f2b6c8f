import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { type ChangeRecord, isChange } from '../../src/audit/types.ts';
import { RequestStore } from '../../src/workflow/store.ts';
import { adminClient, waitFor } from '../support/broker.ts';
import type { RecordedCall } from '../support/fakeSlack.ts';
import {
  APPROVALS_CHANNEL,
  APPROVER,
  APPROVER_GROUP,
  type Harness,
  mentionEnvelope,
  renderedText,
  startHarness,
} from '../support/harness.ts';
import {
  type ClickWhere,
  clickPayload,
  type OpenedView,
  submission,
  submitView,
} from '../support/interactions.ts';

/**
 * Change requests end to end: signed Slack requests to the running app (commands, mentions,
 * button clicks, form submissions), Slack's Web API answered by the fake, the real broker
 * holding the policies lab, the real Redis (request store, audit trail, BullMQ apply queue).
 * Each flow ends with the broker changed as previewed, the audit diff posted in the approvals
 * channel and where the request came from, and exactly one audit record per change. Each
 * refusal leaves the broker and the trail as they were.
 */

let h: Harness;
const admin = adminClient();
const REQUESTER = 'U0REQUESTER';
const GROUPIE = 'U0GROUPIE';
const STRANGER = 'U0STRANGER';

beforeAll(async () => {
  // Changes outside the bot watched too: the bot's own applies must never be posted as such.
  h = await startHarness({ changes: true, watch: true, logLevel: process.env.TEST_LOG_LEVEL ?? 'warn' });
  h.slack.setUsergroup(APPROVER_GROUP, [GROUPIE]);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await admin.close();
});

// --- Slack's payloads -------------------------------------------------------------------------

/** A button click as Slack posts it, with a fresh response URL on the fake. */
const click = (user: string, action: { action_id: string; value: string }, where: ClickWhere) =>
  clickPayload(user, action, where, h.slack.responseUrl());

// --- what the fake Slack saw ------------------------------------------------------------------

const since = (mark: number) => h.slack.calls.slice(mark);

function next(
  mark: number,
  match: (c: RecordedCall) => boolean,
  what: string,
  deadlineMs = 60_000,
): Promise<RecordedCall> {
  return waitFor(() => since(mark).find(match), { deadlineMs, intervalMs: 25, what });
}

const isPost = (channel: string, threadTs?: string) => (c: RecordedCall) =>
  c.ok &&
  c.method === 'chat.postMessage' &&
  c.args.channel === channel &&
  (threadTs === undefined ? c.args.thread_ts === undefined : c.args.thread_ts === threadTs);

const buttonsOf = (c: RecordedCall) =>
  ((c.args.blocks as { type: string; elements?: { action_id?: string; value?: string }[] }[]) ?? []).flatMap(
    (b) => (b.type === 'actions' ? (b.elements ?? []) : []),
  );

const viewOf = (c: RecordedCall) => c.args.view as OpenedView;

/** The request message posted in the approvals channel after `mark`, and its id. */
async function approvalMessage(mark: number): Promise<{ id: string; ts: string; call: RecordedCall }> {
  const call = await next(
    mark,
    (c) => isPost(APPROVALS_CHANNEL)(c) && buttonsOf(c).length === 2,
    'the request in the approvals channel',
  );
  const [approve] = buttonsOf(call);
  return { id: String(approve?.value), ts: String(call.response?.ts), call };
}

/** Clicks Approve/Reject as `user` and submits the decision form with `reason`; returns the submission's HTTP answer. */
async function decide(
  user: string,
  kind: 'approve' | 'reject',
  request: { id: string; ts: string },
  reason: string,
  baseUrl?: string,
): Promise<{ status: number; body: string }> {
  const mark = h.slack.calls.length;
  const actionId = kind === 'approve' ? 'rmq_request_approve' : 'rmq_request_reject';
  const res = await h.interact(
    click(user, { action_id: actionId, value: request.id }, { channel: APPROVALS_CHANNEL, ts: request.ts }),
    baseUrl,
  );
  expect(res.status).toBe(200);
  const opened = await next(mark, (c) => c.method === 'views.open' && c.ok, 'the decision form');
  const view = viewOf(opened);
  expect(view.callback_id).toBe('rmq_decision_form');
  const answer = await h.interact(submission(user, view, { reason }), baseUrl);
  return { status: answer.status, body: await answer.text() };
}

function trail(): AuditTrail {
  return new AuditTrail(h.redis as never, h.keyPrefix);
}

async function recordsOf(policy: string): Promise<ChangeRecord[]> {
  return (await trail().list({ name: policy, vhost: h.vhost }))
    .filter(isChange)
    .filter((r) => r.policy === policy);
}

async function appliedPosts(
  mark: number,
  origin: { channel: string; threadTs?: string },
): Promise<[RecordedCall, RecordedCall]> {
  const inApprovals = await next(
    mark,
    (c) => isPost(APPROVALS_CHANNEL)(c) && /Applied:/.test(String(c.args.text)),
    'the audit diff in the approvals channel',
  );
  const inOrigin = await next(
    mark,
    (c) => isPost(origin.channel, origin.threadTs)(c) && /Applied:/.test(String(c.args.text)),
    'the audit diff where the request came from',
  );
  return [inApprovals, inOrigin];
}

const policyNames = async () => (await admin.listPolicies(h.vhost)).map((p) => p.name).sort();

// --- the flows --------------------------------------------------------------------------------

describe('delete, from a slash command', () => {
  it('files, asks an approver, applies, posts the audit diff in both places, records it once', async () => {
    expect(await policyNames()).toContain('audit-retention');
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `delete audit-retention --vhost ${h.vhost} --reason "INC-7: retire the audit DLX"`,
      { userId: REQUESTER },
    );
    const filed = await h.answerTo(responseUrl);
    expect(filed.args.response_type).toBe('in_channel');
    expect(renderedText(filed.args)).toMatch(/is filed by <@U0REQUESTER>/);

    const request = await approvalMessage(mark);
    const shown = renderedText(request.call.args).replaceAll(h.vhost, 'VHOST');
    expect(shown).toMatch(/\*Requested by\* <@U0REQUESTER>/);
    expect(shown).toMatch(/\*Environment\* `lab` · \*vhost\* `VHOST`/);
    expect(shown).toMatch(/\*Reason\* INC-7: retire the audit DLX/);
    expect(shown).toMatch(/\*1\* would lose a dead-letter target/);
    expect(shown).toMatch(/Waiting for an approver/);

    const decided = await decide(APPROVER, 'approve', request, 'checked the fallback policy');
    expect(decided).toEqual({ status: 200, body: '' });

    const [inApprovals, inOrigin] = await appliedPosts(mark, { channel: 'C0INCIDENT' });
    for (const post of [inApprovals, inOrigin]) {
      const diff = renderedText(post.args);
      expect(diff).toMatch(
        /What every object it governed lost\* \(1\):\n• `orders.audit` _\(classic\)_ → `audit-fallback` — lost `dead-letter-exchange`/,
      );
      expect(diff).toMatch(/\*Approved by\* <@U0APPROVER>: checked the fallback policy/);
      expect(buttonsOf(post).map((b) => b.action_id)).toEqual(['rmq_audit_revert']);
    }
    expect(await policyNames()).not.toContain('audit-retention');
    const records = await recordsOf('audit-retention');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      action: 'delete',
      requester: { user: REQUESTER },
      approver: { user: APPROVER },
    });

    // The request message, updated in place through every state to applied; no buttons left.
    const updates = await waitFor(
      () => {
        const u = since(mark).filter((c) => c.method === 'chat.update' && c.ok && c.args.ts === request.ts);
        return u.some((c) => /— applied\./.test(String(c.args.text))) ? u : undefined;
      },
      { deadlineMs: 30_000, intervalMs: 25, what: 'the request message updated to applied' },
    );
    const states = updates.map((c) => /— (\w+)\.$/.exec(String(c.args.text))?.[1]);
    expect(states).toEqual(expect.arrayContaining(['approved', 'applying', 'applied']));
    expect(buttonsOf(updates.at(-1) as RecordedCall)).toEqual([]);
    expect(h.slack.rejections()).toEqual([]);
  });
});

// --- helpers for the flows below ----------------------------------------------------------------

const THREAD = '1700000000.000777';

async function mentionIn(threadTs: string, user: string, text: string): Promise<void> {
  const res = await h.mention(
    mentionEnvelope({
      text: `<@${h.slack.botUserId}> ${text}`,
      threadTs,
      user,
      botUserId: h.slack.botUserId,
    }),
  );
  expect(res.status).toBe(200);
}

/** Submits an open form as `user`; returns the HTTP answer's JSON (an empty ack is `{}`). */
const submit = (user: string, view: OpenedView, values: Record<string, string>) =>
  submitView((payload) => h.interact(payload), user, view, values);

/** The policy form as the bot filled it in (views.update after the loading view). */
async function policyFormAfter(mark: number): Promise<OpenedView> {
  const filled = await next(
    mark,
    (c) => c.method === 'views.update' && c.ok && viewOf(c).callback_id === 'rmq_policy_form',
    'the policy form',
  );
  return viewOf(filled);
}

async function approveAndApply(
  request: { id: string; ts: string },
  origin: { channel: string; threadTs?: string },
  mark: number,
  approver = APPROVER,
): Promise<[RecordedCall, RecordedCall]> {
  expect(await decide(approver, 'approve', request, 'looked at the preview')).toEqual({
    status: 200,
    body: '',
  });
  return appliedPosts(mark, origin);
}

const writesOf = (mark: number) =>
  h.proxy.requests.slice(mark).filter((r) => r.method === 'PUT' || r.method === 'DELETE');

// --- more flows ---------------------------------------------------------------------------------

describe('create, from a mention in a thread', () => {
  it('answers in the thread, and after a group member approves, the policy is on the broker and the diff in the thread', async () => {
    const mark = h.slack.calls.length;
    await mentionIn(
      THREAD,
      REQUESTER,
      `create retry-cap --pattern '^retry\\.' --priority 5 --definition '{"max-length": 10}' --vhost ${h.vhost}`,
    );
    const filed = await next(mark, isPost('C0INCIDENT', THREAD), 'the filed notice in the thread');
    expect(renderedText(filed.args)).toMatch(/is filed by <@U0REQUESTER>/);
    const request = await approvalMessage(mark);
    expect(renderedText(request.call.args)).toContain('pattern     ^retry\\.');
    // GROUPIE approves through the user group S0APPROVERS (usergroups.users.list).
    const [, inThread] = await approveAndApply(
      request,
      { channel: 'C0INCIDENT', threadTs: THREAD },
      mark,
      GROUPIE,
    );
    expect(renderedText(inThread.args)).toMatch(/\+ definition.max-length: \(none\) {2}-&gt; {2}10/);
    expect(
      since(mark).some((c) => c.method === 'usergroups.users.list' && c.args.usergroup === APPROVER_GROUP),
    ).toBe(true);
    const written = await admin.getPolicy('user', h.vhost, 'retry-cap');
    expect(written).toMatchObject({
      pattern: '^retry\\.',
      applyTo: 'all',
      priority: 5,
      definition: { 'max-length': 10 },
    });
    expect(await recordsOf('retry-cap')).toHaveLength(1);
  });

  it('the Revert button files a new request restoring the before state, which waits for its own approval', async () => {
    const [record] = await recordsOf('retry-cap');
    const mark = h.slack.calls.length;
    await h.interact(
      click(
        REQUESTER,
        { action_id: 'rmq_audit_revert', value: String(record?.id) },
        { channel: 'C0INCIDENT', ts: '1700000000.000999', threadTs: THREAD },
      ),
    );
    const opened = await next(mark, (c) => c.method === 'views.open' && c.ok, 'the revert form');
    expect(viewOf(opened).callback_id).toBe('rmq_reason_form');
    const answer = await submit(REQUESTER, viewOf(opened), { reason: 'the cap dropped messages' });
    expect(answer, JSON.stringify(answer)).toEqual({});
    const revert = await approvalMessage(mark);
    expect(renderedText(revert.call.args)).toMatch(/revert \(delete\)/);
    expect(renderedText(revert.call.args)).toMatch(/\*Reverts\* audit record/);
    // Not applied until approved.
    expect(await admin.getPolicy('user', h.vhost, 'retry-cap')).not.toBeNull();
    await approveAndApply(revert, { channel: 'C0INCIDENT', threadTs: THREAD }, mark);
    expect(await admin.getPolicy('user', h.vhost, 'retry-cap')).toBeNull();
    expect(await recordsOf('retry-cap')).toHaveLength(2);
  });

  it('two Revert clicks at once on an applied change file one revert request; the other is told it was filed already (issue 28, item 15)', async () => {
    // The revert just applied is an applied change too: reverting it would create retry-cap again.
    const record = (await recordsOf('retry-cap')).find((r) => r.action === 'revert');
    expect(record).toBeDefined();
    const where = { channel: 'C0INCIDENT', ts: '1700000000.000999', threadTs: THREAD };
    const mark = h.slack.calls.length;
    for (const user of [REQUESTER, GROUPIE]) {
      await h.interact(click(user, { action_id: 'rmq_audit_revert', value: String(record?.id) }, where));
    }
    const forms = await waitFor(
      () => {
        const opened = since(mark).filter((c) => c.method === 'views.open' && c.ok);
        return opened.length === 2 ? opened.map(viewOf) : undefined;
      },
      { what: 'both revert forms', deadlineMs: 30_000 },
    );
    const answers = await Promise.all(
      [REQUESTER, GROUPIE].map((user, i) =>
        submit(user, forms[i] as OpenedView, { reason: `two clicks at once, ${user}` }),
      ),
    );
    const toldFiled = (c: RecordedCall) =>
      c.ok && c.method === 'chat.postEphemeral' && /filed already/.test(renderedText(c.args));
    await waitFor(
      () => answers.some((a) => /filed already/.test(JSON.stringify(a))) || since(mark).some(toldFiled),
      { what: 'the second submitter told the revert was filed already', deadlineMs: 60_000 },
    );
    const revert = await approvalMessage(mark);
    const open = (await store().listOpen()).filter((r) => r.revertOf === record?.id);
    expect(open.map((r) => r.id)).toEqual([revert.id]);
    const posted = since(mark).filter(
      (c) =>
        isPost(APPROVALS_CHANNEL)(c) && buttonsOf(c).length === 2 && /Reverts/.test(renderedText(c.args)),
    );
    expect(posted).toHaveLength(1);
    // Once it is closed, the record may be reverted again.
    expect((await decide(APPROVER, 'reject', revert, 'not now')).status).toBe(200);
    await waitFor(async () => (await store().get(revert.id))?.state === 'rejected', {
      what: 'the revert rejected',
    });
  });
});

describe('edit, from a mention in a thread, without flags', () => {
  it('offers the form, prefilled with the policy as it is; the submitted change is what gets written', async () => {
    const mark = h.slack.calls.length;
    await mentionIn(THREAD, REQUESTER, `edit billing-b --vhost ${h.vhost}`);
    const prompt = await next(
      mark,
      (c) => c.method === 'chat.postEphemeral' && c.ok,
      'the button that opens the form',
    );
    const [open] = buttonsOf(prompt);
    expect(open?.action_id).toBe('rmq_open_form');
    await h.interact(
      click(
        REQUESTER,
        { action_id: 'rmq_open_form', value: String(open?.value) },
        { channel: 'C0INCIDENT', ts: '1', threadTs: THREAD },
      ),
    );
    const form = await policyFormAfter(mark);
    const json = JSON.stringify(form);
    expect(json).toContain('"initial_value":"^billing\\\\."');
    expect(json).toContain('"initial_value":"5"');
    expect(json).toContain('max-length');
    // Only the apply-to values this broker's version accepts.
    const version = (await admin.overview()).version;
    const options = (
      form.blocks.find((b) => b.block_id === 'apply_to') as unknown as {
        element: { options: { value: string }[] };
      }
    ).element.options.map((o) => o.value);
    expect(options).toEqual(
      version.major > 3 || version.minor >= 12
        ? ['all', 'queues', 'exchanges', 'classic_queues', 'quorum_queues', 'streams']
        : ['all', 'queues', 'exchanges'],
    );

    expect(
      await submit(REQUESTER, form, {
        pattern: '^billing\\.',
        apply_to: 'queues',
        priority: '6',
        definition: '{"max-length": 2000}',
        reason: 'break the tie',
      }),
    ).toEqual({});
    await next(mark, isPost('C0INCIDENT', THREAD), 'the filed notice in the thread');
    const request = await approvalMessage(mark);
    await approveAndApply(request, { channel: 'C0INCIDENT', threadTs: THREAD }, mark);
    expect(await admin.getPolicy('user', h.vhost, 'billing-b')).toMatchObject({
      priority: 6,
      definition: { 'max-length': 2000 },
    });
    expect(await recordsOf('billing-b')).toHaveLength(1);
  });
});

describe('create, from a slash command, without flags', () => {
  it('the form refuses bad JSON and an unknown key on the definition field, files nothing, then files', async () => {
    const mark = h.slack.calls.length;
    const writes = h.proxy.requests.length;
    await h.command(`create form-made --vhost ${h.vhost}`, { userId: REQUESTER });
    const form = await policyFormAfter(mark);
    expect(JSON.stringify(form)).toContain('unanchored: matches every name that contains it');
    const base = { pattern: '^billing\\.', apply_to: 'queues', priority: '1', reason: '' };
    const bad = await submit(REQUESTER, form, { ...base, definition: '{"max-length": ' });
    expect(bad).toMatchObject({
      response_action: 'errors',
      errors: { definition: expect.stringMatching(/^Not valid JSON/) },
    });
    const unknown = await submit(REQUESTER, form, { ...base, definition: '{"max-lenght": 5}' });
    expect(unknown).toMatchObject({
      response_action: 'errors',
      errors: { definition: expect.stringMatching(/max-lenght is not a policy key/) },
    });
    expect(since(mark).filter((c) => isPost(APPROVALS_CHANNEL)(c))).toEqual([]);
    expect(writesOf(writes)).toEqual([]);

    expect(await submit(REQUESTER, form, { ...base, definition: '{"message-ttl": 1000}' })).toEqual({});
    const request = await approvalMessage(mark);
    await approveAndApply(request, { channel: 'C0INCIDENT' }, mark);
    expect(await admin.getPolicy('user', h.vhost, 'form-made')).toMatchObject({
      pattern: '^billing\\.',
      definition: { 'message-ttl': 1000 },
    });
    expect(await recordsOf('form-made')).toHaveLength(1);
  });
});

describe('edit from a slash command, delete from a mention', () => {
  it('edit with flags: applied as previewed, one record', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `edit orders-cap --pattern '^orders\\.' --vhost ${h.vhost} --reason "anchor it"`,
      {
        userId: REQUESTER,
      },
    );
    expect((await h.answerTo(responseUrl)).args.response_type).toBe('in_channel');
    const request = await approvalMessage(mark);
    expect(renderedText(request.call.args)).toMatch(/\*Now:\*[\s\S]*pattern {5}orders\n/);
    await approveAndApply(request, { channel: 'C0INCIDENT' }, mark);
    expect(await admin.getPolicy('user', h.vhost, 'orders-cap')).toMatchObject({ pattern: '^orders\\.' });
    // retry.orders.dlq lost the cap: the broker says so, as the preview said.
    await waitFor(async () => (await admin.getQueue(h.vhost, 'retry.orders.dlq'))?.policy === null, {
      deadlineMs: 30_000,
      intervalMs: 250,
      what: 'retry.orders.dlq to report no policy',
    });
    expect(await recordsOf('orders-cap')).toHaveLength(1);
  });

  it('delete in a thread without a reason: the bot asks for it in a form, then files', async () => {
    const mark = h.slack.calls.length;
    await mentionIn(THREAD, REQUESTER, `delete orders-ae --vhost ${h.vhost}`);
    const prompt = await next(
      mark,
      (c) => c.method === 'chat.postEphemeral' && c.ok,
      'the button that asks the reason',
    );
    const [open] = buttonsOf(prompt);
    await h.interact(
      click(
        REQUESTER,
        { action_id: 'rmq_open_form', value: String(open?.value) },
        { channel: 'C0INCIDENT', ts: '1', threadTs: THREAD },
      ),
    );
    const opened = await next(mark, (c) => c.method === 'views.open' && c.ok, 'the reason form');
    expect(viewOf(opened).callback_id).toBe('rmq_reason_form');
    expect(await submit(REQUESTER, viewOf(opened), { reason: '   ' })).toMatchObject({
      response_action: 'errors',
      errors: { reason: expect.stringMatching(/A reason is required/) },
    });
    expect(await submit(REQUESTER, viewOf(opened), { reason: 'unroutable goes to the DLX now' })).toEqual({});
    const request = await approvalMessage(mark);
    await approveAndApply(request, { channel: 'C0INCIDENT', threadTs: THREAD }, mark);
    expect(await admin.getPolicy('user', h.vhost, 'orders-ae')).toBeNull();
    expect(await recordsOf('orders-ae')).toHaveLength(1);
  });

  it('a slash delete without a reason opens the reason form at once', async () => {
    const mark = h.slack.calls.length;
    await h.command(`delete billing-a --vhost ${h.vhost}`, { userId: REQUESTER });
    const opened = await next(mark, (c) => c.method === 'views.open' && c.ok, 'the reason form');
    expect(viewOf(opened).callback_id).toBe('rmq_reason_form');
    expect(since(mark).filter((c) => isPost(APPROVALS_CHANNEL)(c))).toEqual([]);
  });
});

// --- refusals -----------------------------------------------------------------------------------

const store = () => new RequestStore(h.redis as never, h.keyPrefix);

/** Files `create NAME` (a policy that matches nothing in the lab) as `user`; returns the request. */
async function fileHarmless(name: string, user = REQUESTER): Promise<{ id: string; ts: string }> {
  const mark = h.slack.calls.length;
  await h.command(
    `create ${name} --pattern '^nothing\\.' --definition '{"max-length": 1}' --vhost ${h.vhost}`,
    {
      userId: user,
    },
  );
  return approvalMessage(mark);
}

describe('refusals: each told, nothing applied', () => {
  it('a read-only environment refuses every write, saying so', async () => {
    const mark = h.slack.calls.length;
    const writes = h.proxy.requests.length;
    const { responseUrl } = await h.command(`delete billing-b --env ro --vhost ${h.vhost} --reason x`, {
      userId: REQUESTER,
    });
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('ephemeral');
    expect(renderedText(answer.args)).toMatch(
      /The environment ro is read-only: the bot changes no policy there\. Nothing was filed\./,
    );
    expect(since(mark).filter((c) => isPost(APPROVALS_CHANNEL)(c))).toEqual([]);
    expect(writesOf(writes)).toEqual([]);
  });

  it('a broker identity that cannot write policies is refused at once, with the broker’s reason', async () => {
    const mark = h.slack.calls.length;
    const writes = h.proxy.requests.length;
    const { responseUrl } = await h.command(`delete billing-b --env weak --vhost ${h.vhost} --reason x`, {
      userId: REQUESTER,
    });
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('ephemeral');
    const shown = renderedText(answer.args);
    expect(shown).toMatch(
      /The bot's broker identity may not write policies here, so nothing was filed\. The broker says:\n> The bot's broker user .* has tags management; .* written with the policymaker or administrator tag\./,
    );
    expect(since(mark).filter((c) => isPost(APPROVALS_CHANNEL)(c))).toEqual([]);
    expect(writesOf(writes)).toEqual([]);
  });

  it('a non-approver, the requester approving their own request, and an empty reason are refused inline', async () => {
    const theirs = await fileHarmless('pending-theirs');
    const stranger = await decide(STRANGER, 'approve', theirs, 'lgtm');
    expect(JSON.parse(stranger.body)).toEqual({
      response_action: 'errors',
      errors: { reason: 'You are not among the approvers of environment lab: nothing was decided.' },
    });
    const empty = await decide(APPROVER, 'approve', theirs, '  \n ');
    expect(JSON.parse(empty.body)).toEqual({
      response_action: 'errors',
      errors: { reason: 'A reason is required: say why, for the audit trail.' },
    });
    const emptyReject = await decide(APPROVER, 'reject', theirs, '');
    expect(JSON.parse(emptyReject.body).errors.reason).toMatch(/A reason is required/);

    // An approver who files a request cannot approve it.
    const mine = await fileHarmless('pending-mine', APPROVER);
    const self = await decide(APPROVER, 'approve', mine, 'my own, trust me');
    expect(JSON.parse(self.body)).toEqual({
      response_action: 'errors',
      errors: { reason: 'You filed this request: another approver must decide it.' },
    });

    for (const r of [theirs, mine]) expect((await store().get(r.id))?.state).toBe('pending');
    expect(await admin.getPolicy('user', h.vhost, 'pending-theirs')).toBeNull();
    expect(await admin.getPolicy('user', h.vhost, 'pending-mine')).toBeNull();
    expect(await recordsOf('pending-theirs')).toEqual([]);
    expect(await recordsOf('pending-mine')).toEqual([]);
  });
});

// --- races and replicas ---------------------------------------------------------------------------

/** Opens the decision form as `user` at `baseUrl`; returns the view to submit later. */
async function openDecision(
  user: string,
  kind: 'approve' | 'reject',
  r: { id: string; ts: string },
  baseUrl: string,
): Promise<OpenedView> {
  const mark = h.slack.calls.length;
  const actionId = kind === 'approve' ? 'rmq_request_approve' : 'rmq_request_reject';
  await h.interact(
    click(user, { action_id: actionId, value: r.id }, { channel: APPROVALS_CHANNEL, ts: r.ts }),
    baseUrl,
  );
  return viewOf(
    await next(
      mark,
      (c) => c.method === 'views.open' && c.ok && c.args.trigger_id !== undefined,
      'the decision form',
    ),
  );
}

describe('two bot processes on one Redis', () => {
  let twin: Awaited<ReturnType<Harness['twin']>>;
  beforeAll(async () => {
    twin = await h.twin();
  });
  afterAll(async () => {
    await twin?.stop();
  });

  it('the same approval submitted to both at once: one decision, one apply, one record; the other is told who decided', async () => {
    const request = await fileHarmless('race-one');
    const mark = h.slack.calls.length;
    const writes = h.proxy.requests.length;
    const one = await openDecision(APPROVER, 'approve', request, h.url);
    const two = await openDecision(GROUPIE, 'approve', request, twin.url);
    const answers = await Promise.all([
      h.interact(submission(APPROVER, one, { reason: 'ok from one' }), h.url),
      h.interact(submission(GROUPIE, two, { reason: 'ok from two' }), twin.url),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    await appliedPosts(mark, { channel: 'C0INCIDENT' });
    const told = await next(
      mark,
      (c) => c.method === 'chat.postEphemeral' && /was already approved by/.test(renderedText(c.args)),
      'the loser told',
    );
    const decided = await store().get(request.id);
    expect(told.args.user).toBe(decided?.decision?.by === APPROVER ? GROUPIE : APPROVER);
    expect(renderedText(told.args)).toContain(`<@${decided?.decision?.by}>`);
    expect(await recordsOf('race-one')).toHaveLength(1);
    expect(writesOf(writes).filter((r) => r.url.endsWith('/race-one'))).toHaveLength(1);
    expect(
      since(mark).filter((c) => isPost(APPROVALS_CHANNEL)(c) && /Applied:/.test(String(c.args.text))),
    ).toHaveLength(1);
  });

  it('approved and rejected at once: one decision', async () => {
    const request = await fileHarmless('race-two');
    const mark = h.slack.calls.length;
    const approve = await openDecision(APPROVER, 'approve', request, h.url);
    const reject = await openDecision(GROUPIE, 'reject', request, twin.url);
    await Promise.all([
      h.interact(submission(APPROVER, approve, { reason: 'ship it' }), h.url),
      h.interact(submission(GROUPIE, reject, { reason: 'not today' }), twin.url),
    ]);
    const told = await next(
      mark,
      (c) =>
        c.method === 'chat.postEphemeral' && /was already (approved|rejected) by/.test(renderedText(c.args)),
      'the loser told',
    );
    const decided = await store().get(request.id);
    expect(decided?.decision).toBeDefined();
    const loser = decided?.decision?.kind === 'approve' ? GROUPIE : APPROVER;
    expect(told.args.user).toBe(loser);
    if (decided?.decision?.kind === 'approve') {
      await appliedPosts(mark, { channel: 'C0INCIDENT' });
      expect(await recordsOf('race-two')).toHaveLength(1);
    } else {
      await next(
        mark,
        (c) =>
          c.method === 'chat.update' && c.args.ts === request.ts && /— rejected\./.test(String(c.args.text)),
        'the message rejected',
      );
      expect(await recordsOf('race-two')).toEqual([]);
      expect(await admin.getPolicy('user', h.vhost, 'race-two')).toBeNull();
    }
  });
});

describe('stale', () => {
  it('the policy changed on the broker after the request: not applied, told, with a fresh preview', async () => {
    const mark = h.slack.calls.length;
    await mentionIn(THREAD, REQUESTER, `edit audit-fallback --priority 2 --vhost ${h.vhost}`);
    const request = await approvalMessage(mark);
    const current = await admin.getPolicy('user', h.vhost, 'audit-fallback');
    expect(current).not.toBeNull();
    await admin.putPolicy('user', { ...(current as NonNullable<typeof current>), priority: 3 });

    expect(await decide(APPROVER, 'approve', request, 'fine')).toEqual({ status: 200, body: '' });
    const notice = await next(
      mark,
      (c) => isPost('C0INCIDENT', THREAD)(c) && /not applied \(stale\)/.test(String(c.args.text)),
      'the stale notice in the thread',
    );
    const shown = renderedText(notice.args);
    expect(shown).toMatch(
      /Stale — not applied\*: the policy on the broker is no longer what the approver saw/,
    );
    expect(shown).toMatch(/\*Preview:\* edit policy `audit-fallback`/);
    expect(shown).toMatch(/Now: pattern `\^orders\\.` · applies to `queues` · priority 3/);
    await next(
      mark,
      (c) => c.method === 'chat.update' && c.args.ts === request.ts && /— stale\./.test(String(c.args.text)),
      'the message marked stale',
    );
    expect(await admin.getPolicy('user', h.vhost, 'audit-fallback')).toMatchObject({ priority: 3 });
    // Only the change made outside the bot above is recorded, as such (watched: see beforeAll),
    // once its burst of outside changes has ended (src/watch/outside.ts).
    await waitFor(async () => (await recordsOf('audit-fallback')).length > 0, {
      what: 'the outside change recorded',
    });
    expect((await recordsOf('audit-fallback')).map((r) => r.action)).toEqual(['outside']);
    expect(h.slack.rejections()).toEqual([]);
  });
});

describe('the rest of the surface', () => {
  it('--thread LINK: the result is posted in that thread', async () => {
    const mark = h.slack.calls.length;
    await h.command(
      `edit billing-b --priority 7 --vhost ${h.vhost} --reason "INC-9" --thread https://acme.slack.com/archives/C0WARROOM/p1700000000000555`,
      { userId: REQUESTER },
    );
    const request = await approvalMessage(mark);
    await approveAndApply(request, { channel: 'C0WARROOM', threadTs: '1700000000.000555' }, mark);
    expect(await admin.getPolicy('user', h.vhost, 'billing-b')).toMatchObject({ priority: 7 });
  });

  it('the pattern hint says unanchored until the pattern starts with ^', async () => {
    const mark = h.slack.calls.length;
    await h.command(`create hinted --vhost ${h.vhost}`, { userId: REQUESTER });
    const form = await policyFormAfter(mark);
    const typed = (value: string) => ({
      ...click(REQUESTER, { action_id: 'rmq_pattern_typed', value }, { channel: 'C0INCIDENT', ts: '1' }),
      container: { type: 'view', view_id: 'V0FORM' },
      view: {
        id: 'V0FORM',
        hash: '1.h',
        type: 'modal',
        title: { type: 'plain_text', text: 'Create policy' },
        submit: { type: 'plain_text', text: 'Preview & file' },
        ...form,
      },
      actions: [
        {
          type: 'plain_text_input',
          block_id: 'pattern',
          action_id: 'rmq_pattern_typed',
          value,
          action_ts: '1',
        },
      ],
    });
    await h.interact(typed('^orders'));
    const update = await next(
      mark,
      (c) => c.method === 'views.update' && c.args.view_id === 'V0FORM',
      'the form updated',
    );
    expect(update.args.hash).toBe('1.h');
    const hint = (viewOf(update).blocks.find((b) => b.block_id === 'pattern') as { hint?: { text: string } })
      .hint?.text;
    expect(hint).toBe('A regular expression over queue and exchange names.');
    expect(viewOf(update).private_metadata).toBe(form.private_metadata);
  });

  it('a click on a request past its deadline says it expired, and the message says so too', async () => {
    const request = await fileHarmless('late-one');
    // Time passes: the deadline moves into the past in the store, as the clock would move it.
    const key = (await h.redis.keys(`${h.keyPrefix}:*${request.id}*`))[0] as string;
    const past = new Date(Date.now() - 60_000).toISOString();
    const doc = JSON.parse(String(await h.redis.hget(key, 'doc'))) as Record<string, unknown>;
    await h.redis.hset(key, {
      doc: JSON.stringify({ ...doc, expiresAt: past }),
      expiresAt: String(Date.parse(past)),
    });

    const mark = h.slack.calls.length;
    await h.interact(
      click(
        APPROVER,
        { action_id: 'rmq_request_approve', value: request.id },
        { channel: APPROVALS_CHANNEL, ts: request.ts },
      ),
    );
    const told = await next(mark, (c) => c.method === 'chat.postEphemeral' && c.ok, 'the approver told');
    expect(renderedText(told.args)).toMatch(/expired at .*nothing was decided, nothing applied/);
    const updated = await next(
      mark,
      (c) =>
        c.method === 'chat.update' && c.args.ts === request.ts && /— expired\./.test(String(c.args.text)),
      'the message expired',
    );
    expect(buttonsOf(updated)).toEqual([]);
    expect(since(mark).filter((c) => c.method === 'views.open')).toEqual([]);
    expect((await store().get(request.id))?.state).toBe('expired');
  });
});

describe('a time-boxed edit (--for), from a slash command', () => {
  it('the approver approves change and revert together; at the deadline the bot reverts it through the apply job, posted in both places, recorded as its revert', async () => {
    const tbLimit = {
      vhost: h.vhost,
      name: 'tb-limit',
      pattern: '^tb\\.',
      applyTo: 'queues',
      priority: 4,
      definition: { 'max-length': 5 },
    };
    const outsidePosts = (from: number) =>
      since(from).filter(
        (c) =>
          isPost(APPROVALS_CHANNEL)(c) &&
          /Changed outside the bot: \w+ policy tb-limit/.test(String(c.args.text)),
      );
    const made = h.slack.calls.length;
    await admin.putPolicy('user', tbLimit);
    await next(made, (c) => outsidePosts(made).includes(c), 'the policy made outside the bot, posted');
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `edit tb-limit --definition '{"max-length": 50}' --for 20s --vhost ${h.vhost} --reason "INC-9: let tb drain"`,
      { userId: REQUESTER },
    );
    expect(renderedText((await h.answerTo(responseUrl)).args)).toMatch(/is filed by <@U0REQUESTER>/);
    const request = await approvalMessage(mark);
    expect(renderedText(request.call.args)).toMatch(
      /Time-boxed:\* reverted 20s after it is applied\. Approving it approves the revert too/,
    );
    expect(await decide(APPROVER, 'approve', request, 'ok for the incident')).toEqual({
      status: 200,
      body: '',
    });
    const [applied] = await appliedPosts(mark, { channel: 'C0INCIDENT' });
    expect(renderedText(applied.args)).toMatch(/Time-boxed:\* reverted at /);
    expect((await admin.getPolicy('user', h.vhost, 'tb-limit'))?.definition).toEqual({ 'max-length': 50 });

    // At the deadline: the revert, applied and posted like any change, in both places.
    const reverted = await next(
      mark,
      (c) => isPost(APPROVALS_CHANNEL)(c) && /Applied: revert/.test(String(c.args.text)),
      'the revert in the approvals channel',
      60_000,
    );
    await next(
      mark,
      (c) => isPost('C0INCIDENT')(c) && /Applied: revert/.test(String(c.args.text)),
      'the revert where the request came from',
    );
    expect(renderedText(reverted.args)).toMatch(/\*Approved by\* <@U0APPROVER>: approved with r-/);
    expect((await admin.getPolicy('user', h.vhost, 'tb-limit'))?.definition).toEqual({ 'max-length': 5 });
    const records = (await recordsOf('tb-limit')).filter((r) => r.action !== 'outside');
    expect(records.map((r) => r.action).sort()).toEqual(['edit', 'revert']);
    const edit = records.find((r) => r.action === 'edit');
    expect(records.find((r) => r.action === 'revert')?.revertOf).toBe(edit?.id);
    // The edit and the revert were the bot's own: once a later change outside it is posted
    // (events are handled in order), it is the only one posted since the request.
    await admin.putPolicy('user', { ...tbLimit, priority: 6 });
    await next(mark, (c) => outsidePosts(mark).includes(c), 'a later change outside the bot, posted');
    expect(outsidePosts(mark).map((c) => renderedText(c.args))).toEqual([
      expect.stringMatching(/edited policy `tb-limit`/),
    ]);
    expect(h.slack.rejections()).toEqual([]);
  }, 120_000); // its own wait for the revert alone may take 60 s (a 20 s box on a loaded machine)

  it('--for on a delete, or beyond a week, is refused, saying what to type; nothing filed', async () => {
    for (const [text, said] of [
      [`delete tb-limit --for 2h --reason x --vhost ${h.vhost}`, /--for is for create and edit/],
      [`edit tb-limit --priority 9 --for 8d --vhost ${h.vhost}`, /at most a week/],
    ] as const) {
      const mark = h.slack.calls.length;
      const { responseUrl } = await h.command(text, { userId: REQUESTER });
      expect(renderedText((await h.answerTo(responseUrl)).args)).toMatch(said);
      expect(since(mark).filter((c) => isPost(APPROVALS_CHANNEL)(c))).toEqual([]);
    }
    expect((await admin.getPolicy('user', h.vhost, 'tb-limit'))?.priority).toBe(6);
  });
});

describe('the approvals message when the broker refuses, or the list is long', () => {
  it('a write the broker refuses (4xx): not applied, the message says failed with the broker’s reason, the origin is told', async () => {
    const request = await fileHarmless('doomed');
    const mark = h.slack.calls.length;
    h.proxy.setRoute((url, method) => method === 'PUT' && url.endsWith('/doomed'), {
      kind: 'respond',
      status: 400,
      body: { error: 'bad_request', reason: 'simulated refusal <!channel>' },
    });
    try {
      expect(await decide(APPROVER, 'approve', request, 'go')).toEqual({ status: 200, body: '' });
      const failed = await next(
        mark,
        (c) =>
          c.method === 'chat.update' && c.args.ts === request.ts && /— failed\./.test(String(c.args.text)),
        'the message marked failed',
      );
      const shown = renderedText(failed.args);
      expect(shown).toMatch(/Failed — not applied\*: .*simulated refusal &lt;!channel&gt;/);
      expect(shown).not.toContain('<!channel>');
      await next(
        mark,
        (c) => isPost('C0INCIDENT')(c) && /not applied \(failed\)/.test(String(c.args.text)),
        'the origin told',
      );
    } finally {
      h.proxy.setRoute(null);
    }
    expect(await admin.getPolicy('user', h.vhost, 'doomed')).toBeNull();
    expect(await recordsOf('doomed')).toEqual([]);
  });

  it('every object in a CSV in the request message’s thread when the summary does not show them all', async () => {
    const fleet = Array.from({ length: 15 }, (_, i) => `fleet.${String(i).padStart(2, '0')}`);
    for (const q of fleet) await admin.putQueue(h.vhost, q, { kind: 'classic' });
    const mark = h.slack.calls.length;
    await h.command(
      `create fleet-ttl --pattern '^fleet\\.' --definition '{"message-ttl": 60000}' --vhost ${h.vhost}`,
      {
        userId: REQUESTER,
      },
    );
    const request = await approvalMessage(mark);
    expect(renderedText(request.call.args)).toMatch(/every object is in the attached file/);
    const complete = await next(
      mark,
      (c) => c.method === 'files.completeUploadExternal' && c.ok,
      'the list shared',
    );
    expect(complete.args).toMatchObject({ channel_id: APPROVALS_CHANNEL, thread_ts: request.ts });
    const upload = h.slack
      .uploads()
      .find((u) => u.completed && u.filename === 'preview-create-fleet-ttl.csv');
    expect((upload?.content ?? '').trim().split('\n')).toHaveLength(1 + fleet.length);
  });
});
