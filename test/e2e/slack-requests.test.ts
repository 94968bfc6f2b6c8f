import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/workflow/audit.ts';
import type { AuditRecord } from '../../src/workflow/types.ts';
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
} from './harness.ts';

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
  h = await startHarness({ changes: true, logLevel: process.env.TEST_LOG_LEVEL ?? 'warn' });
  h.slack.setUsergroup(APPROVER_GROUP, [GROUPIE]);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await admin.close();
});

// --- Slack's payloads -------------------------------------------------------------------------

const triggerId = () => `${Date.now()}.${randomBytes(4).toString('hex')}`;

function click(
  user: string,
  action: { action_id: string; value: string },
  where: { channel: string; ts: string; threadTs?: string },
): Record<string, unknown> {
  return {
    type: 'block_actions',
    user: { id: user, username: user.toLowerCase(), team_id: 'T0TEST' },
    api_app_id: 'A0RMQ',
    token: 'deprecated-verification-token',
    team: { id: 'T0TEST', domain: 'test' },
    container: {
      type: 'message',
      message_ts: where.ts,
      channel_id: where.channel,
      is_ephemeral: false,
      ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
    },
    trigger_id: triggerId(),
    channel: { id: where.channel, name: 'approvals' },
    message: { type: 'message', ts: where.ts, text: '' },
    response_url: h.slack.responseUrl(),
    actions: [
      { type: 'button', block_id: 'b', text: { type: 'plain_text', text: 'x' }, action_ts: '1', ...action },
    ],
  };
}

type OpenedView = { callback_id: string; private_metadata: string; blocks: { block_id?: string }[] };

/** A view_submission of `view` (as the bot opened it) with `values` typed in, by block id. */
function submission(user: string, view: OpenedView, values: Record<string, string>): Record<string, unknown> {
  const state: Record<string, Record<string, unknown>> = {};
  for (const [block, value] of Object.entries(values)) {
    state[block] =
      block === 'apply_to'
        ? {
            value: {
              type: 'static_select',
              selected_option: { text: { type: 'plain_text', text: value }, value },
            },
          }
        : { [block === 'pattern' ? 'rmq_pattern_typed' : 'value']: { type: 'plain_text_input', value } };
  }
  return {
    type: 'view_submission',
    team: { id: 'T0TEST', domain: 'test' },
    user: { id: user, username: user.toLowerCase(), team_id: 'T0TEST' },
    api_app_id: 'A0RMQ',
    token: 'deprecated-verification-token',
    trigger_id: triggerId(),
    view: {
      id: `V${randomBytes(4).toString('hex')}`,
      team_id: 'T0TEST',
      type: 'modal',
      callback_id: view.callback_id,
      private_metadata: view.private_metadata,
      hash: '1.abc',
      blocks: view.blocks,
      title: { type: 'plain_text', text: 'x' },
      state: { values: state },
    },
    response_urls: [],
  };
}

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

async function recordsOf(policy: string): Promise<AuditRecord[]> {
  return (await trail().list({ name: policy, vhost: h.vhost })).filter((r) => r.policy === policy);
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
    const { responseUrl } = await h.commandAs(
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
