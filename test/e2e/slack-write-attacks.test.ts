import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/terminal/cli.ts';
import { RequestStore } from '../../src/workflow/store.ts';
import { waitFor } from '../support/broker.ts';
import type { RecordedCall } from '../support/fakeSlack.ts';
import {
  APPROVALS_CHANNEL,
  APPROVER,
  APPROVER_GROUP,
  commandForm,
  type Harness,
  mentionEnvelope,
  renderedText,
  signed,
  startHarness,
} from '../support/harness.ts';
import { clickPayload, type OpenedView, submission, submitView } from '../support/interactions.ts';

/**
 * Issue 20's attacks on the write half that came through Slack, as signed requests to the running
 * app. A signed request captured once (a proxy's log, a HAR file) and posted again while its
 * signature still holds: the same `/rmq delete …` body twice, and the same reason-form submission
 * twice, each gave two pending requests; each is now one, on one replica or across two that share
 * Redis (the replay is acknowledged, HTTP 200, and nothing else happens). A definition number
 * beyond 2^53, rounded silently on its way to the broker, is refused from the command and from the
 * form. A reason of 100,000 characters on the reason and decision forms is refused inline. A
 * mention without a user is told what happened. And the audit trail of an applied change, sealed
 * with RMQ_AUDIT_KEY and logged by the bot, checked by the terminal against that log.
 */

let h: Harness;
const AUDIT_KEY = `e2e-audit-key-${randomBytes(16).toString('hex')}`;
const REQUESTER = 'U0REQUESTER';
const FORM = 'application/x-www-form-urlencoded';

beforeAll(async () => {
  // info: the bot logs each audit record at info, the anchor `--against` reads.
  h = await startHarness({
    changes: true,
    auditKey: AUDIT_KEY,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'info',
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const store = () => new RequestStore(h.redis as never, h.keyPrefix);
const pendingFor = async (policy: string) =>
  (await store().listOpen()).filter((r) => r.vhost === h.vhost && r.policy === policy);

const approvalPosts = (mark: number) =>
  h.slack.calls
    .slice(mark)
    .filter((c) => c.ok && c.method === 'chat.postMessage' && c.args.channel === APPROVALS_CHANNEL);

function next(mark: number, match: (c: RecordedCall) => boolean, what: string): Promise<RecordedCall> {
  return waitFor(() => h.slack.calls.slice(mark).find(match), { deadlineMs: 60_000, intervalMs: 25, what });
}

describe('a signed request posted again within its lifetime', () => {
  it('the same /rmq delete body twice (and to a second replica): one pending request, one approval post', async () => {
    const twin = await h.twin();
    try {
      const mark = h.slack.calls.length;
      const body = commandForm({
        text: `delete audit-retention --reason "INC-7 retire it" --vhost ${h.vhost}`,
        responseUrl: h.slack.responseUrl(),
        userId: REQUESTER,
      });
      const request = signed(h.signingSecret, body, FORM);
      const first = await h.post('/slack/events', request);
      expect(first.status).toBe(200);
      await waitFor(async () => (await pendingFor('audit-retention')).length === 1, {
        deadlineMs: 60_000,
        intervalMs: 100,
        what: 'the first delete filed',
      });
      await next(mark, (c) => approvalPosts(mark).includes(c), 'the request in the approvals channel');
      const again = await h.post('/slack/events', request);
      const onTwin = await fetch(`${twin.url}/slack/events`, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
      });
      expect([again.status, onTwin.status]).toEqual([200, 200]);
      // A request posted after the replays is filed: when it is, the replays would have been too.
      const later = h.slack.calls.length;
      await h.command(`delete orders-cap --reason "INC-7 after" --vhost ${h.vhost}`, { userId: REQUESTER });
      await waitFor(async () => (await pendingFor('orders-cap')).length === 1, {
        deadlineMs: 60_000,
        intervalMs: 100,
        what: 'the later delete filed',
      });
      await next(later, (c) => approvalPosts(later).includes(c), 'the later request posted');
      expect(await pendingFor('audit-retention')).toHaveLength(1);
      expect(approvalPosts(mark).filter((c) => /audit-retention/.test(JSON.stringify(c.args)))).toHaveLength(
        1,
      );
      const replays = await h.metrics.replayedRequests.get();
      expect(replays.values.find((v) => v.labels.kind === 'command')?.value).toBe(1);
    } finally {
      await twin.stop();
    }
  });

  it('the same reason-form submission twice: one pending request', async () => {
    const mark = h.slack.calls.length;
    await h.command(`delete billing-a --vhost ${h.vhost}`, { userId: REQUESTER });
    const opened = await next(mark, (c) => c.method === 'views.open' && c.ok, 'the reason form');
    const view = opened.args.view as OpenedView;
    expect(view.callback_id).toBe('rmq_reason_form');
    const payload = submission(REQUESTER, view, { reason: 'INC-8 the tie goes' });
    const request = signed(
      h.signingSecret,
      new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
      FORM,
    );
    const first = await h.post('/slack/events', request);
    expect(first.status).toBe(200);
    await waitFor(async () => (await pendingFor('billing-a')).length === 1, {
      deadlineMs: 60_000,
      intervalMs: 100,
      what: 'the delete filed from the form',
    });
    const again = await h.post('/slack/events', request);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('');
    // Filed through the same path as the first: a later submission of another form is filed.
    const later = h.slack.calls.length;
    await h.command(`delete billing-b --vhost ${h.vhost}`, { userId: REQUESTER });
    const reopened = await next(later, (c) => c.method === 'views.open' && c.ok, 'the second reason form');
    await h.interact(submission(REQUESTER, reopened.args.view as OpenedView, { reason: 'INC-8 the other' }));
    await waitFor(async () => (await pendingFor('billing-b')).length === 1, {
      deadlineMs: 60_000,
      intervalMs: 100,
      what: 'the second form filed',
    });
    expect(await pendingFor('billing-a')).toHaveLength(1);
    const replays = await h.metrics.replayedRequests.get();
    expect(replays.values.find((v) => v.labels.kind === 'view_submission')?.value).toBe(1);
  });
});

const viewOf = (c: RecordedCall) => c.args.view as OpenedView;

const submit = (user: string, view: OpenedView, values: Record<string, string>) =>
  submitView((payload) => h.interact(payload), user, view, values);

describe('a definition number beyond 2^53', () => {
  const BIG = '{"max-length": 12345678901234567890}';

  it('from /rmq create: refused, saying so; nothing filed', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `create huge --pattern ^orders\\. --definition ${BIG} --reason "INC-9" --vhost ${h.vhost}`,
      { userId: REQUESTER },
    );
    const answer = await h.answerTo(responseUrl);
    expect(renderedText(answer.args)).toMatch(/max-length is a number beyond 9007199254740991/);
    expect(renderedText(answer.args)).toMatch(/written as 12345678901234567000/);
    expect(await pendingFor('huge')).toEqual([]);
    expect(approvalPosts(mark)).toEqual([]);
  });

  it('from the policy form: an inline error on the definition; nothing filed', async () => {
    const mark = h.slack.calls.length;
    await h.command(`create huge-form --vhost ${h.vhost}`, { userId: REQUESTER });
    const filled = await next(
      mark,
      (c) => c.method === 'views.update' && c.ok && viewOf(c).callback_id === 'rmq_policy_form',
      'the policy form',
    );
    const answer = await submit(REQUESTER, viewOf(filled), {
      pattern: '^orders\\.',
      apply_to: 'queues',
      priority: '1',
      reason: 'INC-9',
      definition: BIG,
    });
    expect(answer).toMatchObject({
      response_action: 'errors',
      errors: { definition: expect.stringMatching(/beyond 9007199254740991 .*12345678901234567000/) },
    });
    expect(await pendingFor('huge-form')).toEqual([]);
    expect(approvalPosts(mark)).toEqual([]);
  });
});

describe('a reason of 100,000 characters', () => {
  const LONG = 'x'.repeat(100_000);

  it('on the reason form and on the decision form: refused inline, nothing stored', async () => {
    const mark = h.slack.calls.length;
    await h.command(`delete orders-ae --vhost ${h.vhost}`, { userId: REQUESTER });
    const reasonForm = await next(mark, (c) => c.method === 'views.open' && c.ok, 'the reason form');
    expect(await submit(REQUESTER, viewOf(reasonForm), { reason: LONG })).toMatchObject({
      response_action: 'errors',
      errors: { reason: expect.stringMatching(/1,?000/) },
    });
    expect(await pendingFor('orders-ae')).toEqual([]);
    expect(await submit(REQUESTER, viewOf(reasonForm), { reason: 'INC-10 unroutable goes nowhere' })).toEqual(
      {},
    );
    const posted = await next(mark, (c) => approvalPosts(mark).includes(c), 'the request posted');
    const [filed] = await pendingFor('orders-ae');
    expect(filed?.requester.reason).toBe('INC-10 unroutable goes nowhere');

    const clicked = h.slack.calls.length;
    await h.interact(
      clickPayload(
        APPROVER,
        { action_id: 'rmq_request_approve', value: String(filed?.id) },
        { channel: APPROVALS_CHANNEL, ts: String(posted.response?.ts) },
        h.slack.responseUrl(),
      ),
    );
    const decision = await next(clicked, (c) => c.method === 'views.open' && c.ok, 'the decision form');
    expect(await submit(APPROVER, viewOf(decision), { reason: LONG })).toMatchObject({
      response_action: 'errors',
      errors: { reason: expect.stringMatching(/1,?000/) },
    });
    const after = await store().get(String(filed?.id));
    expect(after?.state).toBe('pending');
    expect(after?.decision).toBeUndefined();
  });
});

describe('a user group id as the user of a signed payload (issue 28, item 9)', () => {
  const NOT_A_USER =
    /This did not come from a Slack user \(a user group never files, approves or reviews as itself\): nothing was done\./;

  it('files nothing, and approves nothing, although the group is among the approvers', async () => {
    const mark = h.slack.calls.length;
    const create = (policy: string) =>
      `create ${policy} --pattern ^${policy}\\. --definition {"max-length":5} --reason INC-28 --vhost ${h.vhost}`;
    const asGroup = await h.command(create('grp-cap'), { userId: APPROVER_GROUP });
    expect(renderedText((await h.answerTo(asGroup.responseUrl)).args)).toMatch(NOT_A_USER);
    expect(await pendingFor('grp-cap')).toEqual([]);
    expect(approvalPosts(mark)).toEqual([]);

    await h.command(create('grp-ok'), { userId: REQUESTER });
    const posted = await next(mark, (c) => approvalPosts(mark).includes(c), 'the request posted');
    const [filed] = await pendingFor('grp-ok');
    const clicked = h.slack.calls.length;
    await h.interact(
      clickPayload(
        APPROVER,
        { action_id: 'rmq_request_approve', value: String(filed?.id) },
        { channel: APPROVALS_CHANNEL, ts: String(posted.response?.ts) },
        h.slack.responseUrl(),
      ),
    );
    const decision = await next(clicked, (c) => c.method === 'views.open' && c.ok, 'the decision form');
    expect(await submit(APPROVER_GROUP, viewOf(decision), { reason: 'the group says yes' })).toMatchObject({
      response_action: 'errors',
      errors: { reason: expect.stringMatching(NOT_A_USER) },
    });
    const after = await store().get(String(filed?.id));
    expect(after?.state).toBe('pending');
    expect(after?.approvals ?? []).toEqual([]);
  });
});

describe('a mention without a user', () => {
  it('is told that a change request needs a person, not that requests are not set up', async () => {
    const threadTs = `${Math.floor(Date.now() / 1000)}.000777`;
    const envelope = mentionEnvelope({
      text: `<@${h.slack.botUserId}> delete orders-cap --reason "INC-11" --vhost ${h.vhost}`,
      threadTs,
      botUserId: h.slack.botUserId,
    });
    delete (envelope.event as Record<string, unknown>).user;
    const mark = h.slack.calls.length;
    expect((await h.mention(envelope)).status).toBe(200);
    const told = await next(
      mark,
      (c) => c.ok && c.method.startsWith('chat.post') && c.args.thread_ts === threadTs,
      'the answer in the thread',
    );
    expect(renderedText(told.args)).toMatch(/names no user/);
    expect(renderedText(told.args)).not.toMatch(/not set up/);
  });
});

describe('the audit trail of an applied change, with RMQ_AUDIT_KEY', () => {
  async function history(...argv: string[]) {
    let out = '';
    let err = '';
    const code = await runCli(
      ['history', ...argv],
      { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', RMQ_AUDIT_KEY: AUDIT_KEY },
      { out: (x) => (out += x), err: (x) => (err += x) },
      { keyPrefix: h.keyPrefix },
    );
    return { code, out, err };
  }

  it("is sealed with the key and logged; the terminal verifies it against the bot's log, and finds its last record deleted", async () => {
    const mark = h.slack.calls.length;
    await h.command(
      `create sealed-probe --pattern ^sealed-probe$ --definition {"max-length": 5} --reason "INC-12" --vhost ${h.vhost}`,
      { userId: REQUESTER },
    );
    const posted = await next(mark, (c) => approvalPosts(mark).includes(c), 'the request posted');
    const [filed] = await pendingFor('sealed-probe');
    const clicked = h.slack.calls.length;
    await h.interact(
      clickPayload(
        APPROVER,
        { action_id: 'rmq_request_approve', value: String(filed?.id) },
        { channel: APPROVALS_CHANNEL, ts: String(posted.response?.ts) },
        h.slack.responseUrl(),
      ),
    );
    const decision = await next(clicked, (c) => c.method === 'views.open' && c.ok, 'the decision form');
    expect(await submit(APPROVER, viewOf(decision), { reason: 'checked the preview' })).toEqual({});
    await next(
      clicked,
      (c) => c.ok && c.args.channel === APPROVALS_CHANNEL && /Applied:/.test(String(c.args.text)),
      'the change applied',
    );

    const rows = await h.redis.xrange(`${h.keyPrefix}:audit`, '-', '+');
    const records = rows.map(
      ([, f]) => JSON.parse(f[1] as string) as { id: string; keyed?: boolean; hash: string },
    );
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.keyed === true)).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(AUDIT_KEY);
    expect(h.logs.join('')).not.toContain(AUDIT_KEY);

    const dir = mkdtempSync(join(tmpdir(), 'rmq-e2e-log-'));
    try {
      const log = join(dir, 'bot.log');
      writeFileSync(log, h.logs.join(''));
      const clean = await history('--verify', '--against', log, '--json');
      expect(clean.code, clean.err).toBe(0);
      expect(JSON.parse(clean.out).verify).toMatchObject({
        ok: true,
        keyed: true,
        against: { logged: records.length, missing: [], altered: [], extra: [] },
      });
      // Someone with Redis deletes the last record and sets the head back: only the log shows it.
      const last = rows[rows.length - 1] as [string, string[]];
      await h.redis.xdel(`${h.keyPrefix}:audit`, last[0]);
      await h.redis.set(`${h.keyPrefix}:audit:head`, records[records.length - 2]?.hash ?? '');
      expect((await history('--verify')).code).toBe(0);
      const found = await history('--verify', '--against', log);
      expect(found.code).toBe(1);
      expect(found.out).toContain(`missing from Redis (1): ${records[records.length - 1]?.id}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
