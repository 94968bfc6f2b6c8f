import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { RequestStore } from '../../src/workflow/store.ts';
import { adminClient, waitFor } from '../support/broker.ts';
import {
  APPROVALS_CHANNEL,
  APPROVER,
  APPROVER_GROUP,
  type Harness,
  renderedText,
  startHarness,
} from '../support/harness.ts';
import { submission } from '../support/interactions.ts';
import { buttonsOf, ephemeralTo, isPost, requestFlow, viewOf } from '../support/requestFlow.ts';

/**
 * The approval rules end to end (signed Slack requests to the running app, the fake Web API,
 * the real broker and Redis): environment `lab` needs two approvals, only U0REQUESTER and the
 * members of S0REQUESTERS may file, and a request waits a minute for its decisions.
 */

let h: Harness;
let flow: ReturnType<typeof requestFlow>;
const admin = adminClient();
const REQUESTER = 'U0REQUESTER';
const GROUPIE = 'U0GROUPIE';
const STRANGER = 'U0STRANGER';

beforeAll(async () => {
  h = await startHarness({
    changes: true,
    labRules: 'approvalsRequired: 2, requesters: [U0REQUESTER, S0REQUESTERS], requestTtl: 1m',
    logLevel: process.env.TEST_LOG_LEVEL ?? 'warn',
  });
  h.slack.setUsergroup(APPROVER_GROUP, [GROUPIE]);
  h.slack.setUsergroup('S0REQUESTERS', ['U0MEMBER']);
  flow = requestFlow(h);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await admin.close();
});

describe('two approvals required', () => {
  it('the first approval counts (1 of 2, and who), the same approver again is refused, the second applies once', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `create two-cap --pattern ^billing\\. --definition {"max-length":50} --vhost ${h.vhost} --reason INC-9`,
      { userId: REQUESTER },
    );
    expect(renderedText((await h.answerTo(responseUrl)).args)).toMatch(/is filed by <@U0REQUESTER>/);
    const request = await flow.approvalMessage(mark);
    expect(renderedText(request.call.args)).toMatch(/\*0 of 2 approvals\*, each from another approver/);

    expect(await flow.decide(APPROVER, 'approve', request, 'first look')).toEqual({ status: 200, body: '' });
    const counted = await flow.next(
      mark,
      (c) =>
        c.method === 'chat.update' &&
        c.ok &&
        c.args.ts === request.ts &&
        /1 of 2 approvals/.test(renderedText(c.args)),
      'the request message saying 1 of 2',
    );
    expect(renderedText(counted.args)).toMatch(/Approved so far by <@U0APPROVER> at .*: first look/);
    expect(await admin.getPolicy('user', h.vhost, 'two-cap')).toBeNull();

    // The same approver clicks again: told at once, no form, nothing counted.
    const again = h.slack.calls.length;
    await flow.clickDecision(APPROVER, 'approve', request);
    const told = await flow.next(again, ephemeralTo(APPROVER), 'the ephemeral refusal');
    expect(renderedText(told.args)).toMatch(/You already approved this request/);
    expect(flow.since(again).some((c) => c.method === 'views.open')).toBe(false);

    // The requester cannot be the second approver.
    const own = await flow.decide(REQUESTER, 'approve', request, 'mine');
    expect(own.body).toMatch(/You filed this request/);

    expect(await flow.decide(GROUPIE, 'approve', request, 'second look')).toEqual({ status: 200, body: '' });
    const applied = await flow.next(
      mark,
      (c) => isPost(APPROVALS_CHANNEL)(c) && /Applied:/.test(String(c.args.text)),
      'the audit diff in the approvals channel',
    );
    const diff = renderedText(applied.args);
    expect(diff).toMatch(
      /\*Approved by\* <@U0APPROVER>: first look\n\*Approved by\* <@U0GROUPIE>: second look/,
    );
    expect((await admin.getPolicy('user', h.vhost, 'two-cap'))?.definition).toEqual({ 'max-length': 50 });
    const records = (await new AuditTrail(h.redis as never, h.keyPrefix).list({ vhost: h.vhost }))
      .filter(isChange)
      .filter((r) => r.policy === 'two-cap');
    expect(records).toHaveLength(1);
    expect(records[0]?.approvers).toEqual([
      { user: APPROVER, reason: 'first look' },
      { user: GROUPIE, reason: 'second look' },
    ]);
    expect(h.proxy.requests.filter((r) => r.method === 'PUT' && r.url.includes('two-cap'))).toHaveLength(1);

    // The requester was told by DM at each decision: approved, then applied (not at the first approval).
    const dms = await waitFor(
      () => {
        const told = flow
          .since(mark)
          .filter((c) => c.ok && c.method === 'chat.postMessage' && c.args.channel === REQUESTER);
        return told.some((c) => /is applied\./.test(String(c.args.text))) ? told : undefined;
      },
      { deadlineMs: 30_000, intervalMs: 50, what: 'the DM to the requester' },
    );
    expect(dms.map((c) => /is (\w+)\.$/.exec(String(c.args.text))?.[1])).toEqual(['approved', 'applied']);
    expect(renderedText(dms[0]?.args ?? {})).toMatch(
      /Approved\* by <@U0APPROVER> at .*: first look; <@U0GROUPIE> at .*: second look/,
    );
    // And where it was asked: the approval (the audit diff follows there too).
    const inOrigin = flow
      .since(mark)
      .filter((c) => isPost('C0INCIDENT')(c) && /is approved\./.test(String(c.args.text)));
    expect(inOrigin).toHaveLength(1);
    expect(h.slack.rejections()).toEqual([]);
  });
});

describe('requests that do not rot', () => {
  it('half its time to live without a decision: one reminder in its thread naming the approvers; expired: the requester told', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `create rot-cap --pattern ^rot --definition {"max-length":5} --vhost ${h.vhost}`,
      { userId: REQUESTER },
    );
    await h.answerTo(responseUrl);
    const request = await flow.approvalMessage(mark);
    const reminder = await flow.next(
      mark,
      isPost(APPROVALS_CHANNEL, request.ts),
      'the reminder in the request’s thread',
      60_000,
    );
    const text = renderedText(reminder.args);
    expect(text).toMatch(/still waits for a decision \(0 of 2 approvals so far\); it expires/);
    expect(text).toMatch(/<@U0APPROVER>, <!subteam\^S0APPROVERS>: please approve or reject it\./);
    const filed = await new RequestStore(h.redis as never, h.keyPrefix).get(request.id);
    // Not before half the time to live (the store's clock, not the test's, is what counts).
    expect(Date.parse(filed?.remindedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(filed?.createdAt ?? '') + 30_000,
    );

    const expired = await flow.next(
      mark,
      (c) =>
        c.ok &&
        c.method === 'chat.postMessage' &&
        c.args.channel === REQUESTER &&
        /is expired\./.test(String(c.args.text)),
      'the DM saying it expired',
      90_000,
    );
    expect(renderedText(expired.args)).toMatch(/Expired — not applied/);
    // Once: the sweep ran every second meanwhile, on both the reminder and the expiry.
    expect(flow.since(mark).filter(isPost(APPROVALS_CHANNEL, request.ts))).toHaveLength(1);
  }, 150_000);
});

describe('change freeze', () => {
  it('approvers only; an approved request is held, its message says so; unfreeze applies it', async () => {
    const refused = await h.command('freeze --for 1h --reason "not mine"', { userId: STRANGER });
    expect(renderedText((await h.answerTo(refused.responseUrl)).args)).toMatch(
      /Only the approvers of environment lab may freeze or unfreeze it/,
    );
    for (const [words, says] of [
      ['freeze --for 8d --reason long', /at most a week \(7d\)/],
      ['freeze --reason "no length"', /freeze needs its length: --for DURATION/],
      ['freeze --for 2h', /freeze needs your reason: --reason TEXT/],
    ] as const) {
      const bad = await h.command(words, { userId: APPROVER });
      expect(renderedText((await h.answerTo(bad.responseUrl)).args)).toMatch(says);
    }
    const frozen = await h.command('freeze --for 2h --reason "INC-10 under way"', { userId: APPROVER });
    const told = await h.answerTo(frozen.responseUrl);
    expect(told.args.response_type).toBe('in_channel');
    expect(renderedText(told.args)).toMatch(
      /`lab` is frozen\* until .* by <@U0APPROVER> because INC-10 under way/,
    );

    const mark = h.slack.calls.length;
    const filed = await h.command(
      `create frozen-cap --pattern ^frozen --definition {"max-length":7} --vhost ${h.vhost} --reason INC-10`,
      { userId: REQUESTER },
    );
    await h.answerTo(filed.responseUrl);
    const request = await flow.approvalMessage(mark);
    expect(await flow.decide(APPROVER, 'approve', request, 'ok')).toEqual({ status: 200, body: '' });
    expect(await flow.decide(GROUPIE, 'approve', request, 'ok too')).toEqual({ status: 200, body: '' });
    const held = await flow.next(
      mark,
      (c) =>
        c.method === 'chat.update' &&
        c.ok &&
        c.args.ts === request.ts &&
        /is frozen/.test(renderedText(c.args)),
      'the request message saying it is held by the freeze',
    );
    expect(renderedText(held.args)).toMatch(
      /Approved\* by .*\n:snowflake: \*`lab` is frozen\* until .* by <@U0APPROVER> because INC-10 under way\. It is applied when the freeze ends or is lifted\./,
    );
    expect(await admin.getPolicy('user', h.vhost, 'frozen-cap')).toBeNull();

    const shown = await h.command('use', { userId: APPROVER });
    expect(renderedText((await h.answerTo(shown.responseUrl)).args)).toMatch(/`lab` is frozen/);

    const lifted = await h.command('unfreeze --reason "INC-10 resolved"', { userId: GROUPIE });
    expect(renderedText((await h.answerTo(lifted.responseUrl)).args)).toMatch(
      /`lab` is no longer frozen\*: lifted by <@U0GROUPIE> because INC-10 resolved .* 1 approved request waiting is applied now/,
    );
    await flow.next(
      mark,
      (c) =>
        isPost(APPROVALS_CHANNEL)(c) &&
        /Applied:/.test(String(c.args.text)) &&
        /frozen-cap/.test(String(c.args.text)),
      'the held request applied',
    );
    expect((await admin.getPolicy('user', h.vhost, 'frozen-cap'))?.definition).toEqual({ 'max-length': 7 });
    const trail = await new AuditTrail(h.redis as never, h.keyPrefix).list({});
    expect(
      trail
        .filter((r) => r.action === 'freeze' || r.action === 'unfreeze')
        .map((r) => [r.action, 'actor' in r ? r.actor : undefined]),
    ).toEqual([
      ['unfreeze', GROUPIE],
      ['freeze', APPROVER],
    ]);
  });
});

describe('who may ask', () => {
  it('someone else gets an ephemeral refusal naming who can ask or approve; nothing filed or posted; read-only commands answer', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `create stranger-cap --pattern ^x --definition {"max-length":5} --vhost ${h.vhost}`,
      { userId: STRANGER },
    );
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('ephemeral');
    const text = renderedText(answer.args);
    expect(text).toMatch(/You may not file change requests in environment lab: nothing was filed or posted/);
    expect(text).toMatch(
      /Who may ask: <@U0REQUESTER>, <!subteam\^S0REQUESTERS>\. Who may approve: <@U0APPROVER>, <!subteam\^S0APPROVERS>/,
    );
    // The form-opening variant is refused before the form: no views.open.
    const form = await h.command(`edit two-cap --vhost ${h.vhost}`, { userId: STRANGER });
    expect(renderedText((await h.answerTo(form.responseUrl)).args)).toMatch(
      /You may not file change requests/,
    );
    expect(flow.since(mark).some((c) => c.method === 'views.open')).toBe(false);
    expect(flow.since(mark).some((c) => isPost(APPROVALS_CHANNEL)(c))).toBe(false);
    const open = await new RequestStore(h.redis as never, h.keyPrefix).listOpen();
    expect(open.filter((r) => r.requester.user === STRANGER)).toEqual([]);

    // A member of the requesters' group may file.
    const member = await h.command(
      `create member-cap --pattern ^y --definition {"max-length":5} --vhost ${h.vhost}`,
      {
        userId: 'U0MEMBER',
      },
    );
    expect(renderedText((await h.answerTo(member.responseUrl)).args)).toMatch(/is filed by <@U0MEMBER>/);

    const policies = await h.command(`policies --vhost ${h.vhost}`, { userId: STRANGER });
    expect(renderedText((await h.answerTo(policies.responseUrl)).args)).toMatch(/two-cap/);
  });
});

describe('break-glass where the environment does not allow it', () => {
  it('--break-glass is refused ephemerally; nothing filed, posted or applied; the request message offers no Break glass', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `create nobg-cap --pattern ^nobg --definition {"max-length":5} --vhost ${h.vhost} --reason INC-9 --break-glass`,
      { userId: REQUESTER },
    );
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('ephemeral');
    expect(renderedText(answer.args)).toMatch(
      /Environment lab does not allow break-glass: the change needs an approval\. Nothing was applied\./,
    );
    expect(flow.since(mark).some((c) => isPost(APPROVALS_CHANNEL)(c))).toBe(false);
    const open = await new RequestStore(h.redis as never, h.keyPrefix).listOpen();
    expect(open.filter((r) => r.policy === 'nobg-cap')).toEqual([]);
    expect(await admin.getPolicy('user', h.vhost, 'nobg-cap')).toBeNull();

    // Filed without it: Approve and Reject only.
    const filed = await h.command(
      `create nobg-cap --pattern ^nobg --definition {"max-length":5} --vhost ${h.vhost} --reason INC-9`,
      { userId: REQUESTER },
    );
    await h.answerTo(filed.responseUrl);
    const request = await flow.approvalMessage(mark);
    expect(buttonsOf(request.call).map((b) => b.action_id)).toEqual([
      'rmq_request_approve',
      'rmq_request_reject',
    ]);
  });
});

describe('an environment made read-only while a request waits (issue 28, item 1)', () => {
  it('the bot restarted read-only refuses the second approval, naming the environment; nothing applied', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `create ro-cap --pattern ^ro\\. --definition {"max-length":7} --vhost ${h.vhost} --reason INC-28`,
      { userId: REQUESTER },
    );
    await h.answerTo(responseUrl);
    const request = await flow.approvalMessage(mark);
    expect(await flow.decide(APPROVER, 'approve', request, 'first look')).toEqual({ status: 200, body: '' });
    // A replica started since with `lab` read-only (as a restart with RMQ_MODE=read-only would be).
    const restarted = await h.twin({
      environmentsYaml: (yaml) => yaml.replace('{ name: lab,', '{ name: lab, mode: read-only,'),
    });
    try {
      const opened = h.slack.calls.length;
      await flow.clickDecision(GROUPIE, 'approve', request);
      const form = await flow.next(opened, (c) => c.method === 'views.open' && c.ok, 'the decision form');
      const answer = await h.interact(
        submission(GROUPIE, viewOf(form), { reason: 'second look' }),
        restarted.url,
      );
      expect(answer.status).toBe(200);
      expect(await answer.text()).toMatch(
        /The environment lab is read-only: the bot changes no policy there\. Nothing was decided\./,
      );
      const stored = await new RequestStore(h.redis as never, h.keyPrefix).get(request.id);
      expect(stored?.state).toBe('pending');
      expect(stored?.approvals?.map((a) => a.by)).toEqual([APPROVER]);
      expect(await admin.getPolicy('user', h.vhost, 'ro-cap')).toBeNull();
    } finally {
      await restarted.stop();
    }
  });
});
