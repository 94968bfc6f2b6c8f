import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChangeRecord } from '../../src/audit/types.ts';
import { type PoliciesBroker, policies } from '../../src/commands/policies/policies.ts';
import { requestEntry } from '../../src/commands/requests/requests.ts';
import { type WhichBroker, which } from '../../src/commands/which/which.ts';
import { InputError } from '../../src/core/errors.ts';
import { policyDiff } from '../../src/policy/diff.ts';
import { type InventoryObject, simulate } from '../../src/policy/simulate/simulate.ts';
import type { Policy } from '../../src/policy/types.ts';
import { withImpact } from '../../src/preview/impact.ts';
import type { PreviewAnswer } from '../../src/preview/preview.ts';
import { SUMMARY_NAMES, summarize } from '../../src/preview/summary.ts';
import { code, prose } from '../../src/slack/escape.ts';
import { refusalView } from '../../src/slack/views/errors.ts';
import { historyView } from '../../src/slack/views/history.ts';
import { outsideView } from '../../src/slack/views/outside.ts';
import { policiesCsv, policiesView } from '../../src/slack/views/policies.ts';
import { previewCsv, previewView } from '../../src/slack/views/preview.ts';
import {
  alreadyDecidedView,
  auditView,
  decisionNoticeView,
  filedView,
  notAppliedView,
  reminderView,
  requestMessage,
} from '../../src/slack/views/request.ts';
import { requestRefusedView } from '../../src/slack/views/requestRefusals.ts';
import { requestsView } from '../../src/slack/views/requests.ts';
import { timeBoxAskView, timeBoxNothingView, timeBoxWarningView } from '../../src/slack/views/timebox.ts';
import { defaultsSetView, defaultsShownView } from '../../src/slack/views/use.ts';
import { whichView } from '../../src/slack/views/which.ts';
import { historyText } from '../../src/terminal/history.ts';
import { policiesText } from '../../src/terminal/policies.ts';
import { previewText } from '../../src/terminal/preview.ts';
import { requestsText } from '../../src/terminal/requests.ts';
import { whichText } from '../../src/terminal/which.ts';
import { asWritten, jsonText, quoted, showInvisible, terminalText } from '../../src/text/asWritten.ts';
import { WorkflowError } from '../../src/workflow/errors.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { renderedText } from '../support/fakeSlack.ts';
import { V310 } from '../support/policies.ts';

/**
 * The one "as written" rendering (src/text/asWritten.ts), and every view walked with hostile
 * strings: the attack of issue 20 (a pattern `^inj3\n~ priority: 3  ->  999` and a definition
 * value holding U+202E and `\n+ definition.message-ttl: (none)  ->  60000` made the Applied post
 * show two diff lines that are not in the policy) in every name, pattern, value and reason that
 * reaches Slack or the terminal. No view may show a forged line, a bidi override, a control
 * character, or (in Slack) a live mention.
 */

const FORGE_PRIORITY = '\n~ priority: 3  ->  999';
const FORGE_TTL = '\u202e\n+ definition.message-ttl: (none)  ->  60000';
const H = `x${FORGE_PRIORITY}${FORGE_TTL}<!channel>\u0007\u2066`;
const PATTERN = `^inj3|^x${FORGE_PRIORITY}`;
const DEFINITION = { 'dead-letter-exchange': `dlx${FORGE_TTL}`, 'max-length': 10 };

/** Nothing forged reached a line of its own; nothing invisible or live is left. */
function expectInert(shown: string, slack: boolean): void {
  const lines = shown.split('\n').map((l) => l.trim());
  expect(
    lines.filter((l) => l.startsWith('~ priority: 3') || l.startsWith('+ definition.message-ttl')),
  ).toEqual([]);
  expect(shown).not.toMatch(
    /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/,
  );
  if (slack) expect(shown).not.toContain('<!channel>');
}

const slackText = (m: { text: string; blocks: unknown[] }) =>
  renderedText({ text: m.text, blocks: m.blocks });

const hostilePolicy: Policy = {
  vhost: H,
  name: `p${H}`,
  pattern: PATTERN,
  applyTo: 'queues',
  priority: 3,
  definition: DEFINITION,
};
const otherPolicy: Policy = {
  ...hostilePolicy,
  name: `q${H}`,
  priority: 1,
  definition: { 'message-ttl': 5 },
};

const whichBroker: WhichBroker = {
  overview: async () => ({ version: V310 }),
  getQueue: async () => ({
    type: 'classic',
    arguments: { [`x-${H}`]: H },
    policy: hostilePolicy.name,
    operatorPolicy: null,
  }),
  getExchange: async () => null,
  federation: async () => ({ upstreams: new Set<string>(), upstreamSets: new Set<string>(), links: null }),
  listPolicies: async () => [hostilePolicy, otherPolicy],
  listOperatorPolicies: async () => [{ ...otherPolicy, name: `op${H}` }],
};

const policiesBroker: PoliciesBroker = {
  overview: async () => ({ version: V310 }),
  listPolicies: async () => [hostilePolicy, otherPolicy],
  listOperatorPolicies: async () => [{ ...otherPolicy, name: `op${H}` }],
};

function hostilePreview(): PreviewAnswer {
  const now = { ...hostilePolicy, definition: { 'message-ttl': 5 } };
  const change = { action: 'edit' as const, layer: 'user' as const, before: now, after: hostilePolicy };
  const objects: InventoryObject[] = [
    { name: H, kind: 'classic', arguments: {}, policy: hostilePolicy.name },
    { name: `inj3${H}`, kind: 'classic', arguments: { [`x-${H}`]: H }, policy: hostilePolicy.name },
  ];
  const r = simulate({ version: V310, user: [now, otherPolicy], operator: [], change }, objects);
  const live = withImpact(r.objects, null, new Set(), V310, SUMMARY_NAMES);
  const fields = (p: Policy) => ({
    pattern: p.pattern,
    applyTo: p.applyTo,
    priority: p.priority,
    definition: p.definition,
  });
  return {
    status: 'answered',
    change: {
      action: 'edit',
      policy: hostilePolicy.name,
      vhost: H,
      operator: false,
      before: fields(now),
      after: fields(hostilePolicy),
    },
    brokerVersion: '3.10.8',
    warnings: [],
    notes: [`read ${H}`],
    objects: live.objects,
    unpredictable: [...r.unpredictable, { name: `u${H}`, kind: 'classic', why: `why ${H}` }],
    summary: { ...summarize(r, change, V310), impact: live.summary },
    diff: policyDiff(change),
    ms: 1,
  };
}

const T0 = '2026-11-30T18:00:00.000Z';
const before = { pattern: '^inj3', applyTo: 'queues', priority: 3, definition: { 'max-length': 10 } };
const after = { pattern: PATTERN, applyTo: 'queues', priority: 3, definition: DEFINITION };

const record: ChangeRecord = {
  id: 'a-r-0123456789abcdef0123',
  at: T0,
  env: 'prod',
  vhost: H,
  policy: `p${H}`,
  operator: false,
  action: 'edit',
  requester: { user: `U0${H}`, reason: `because ${H}` },
  approver: { user: 'U0APPROVER', reason: `ok ${H}` },
  appliedAt: T0,
  before,
  after,
  objects: [
    {
      name: `x${H}`,
      kind: 'classic',
      before: `q${H}`,
      after: `p${H}`,
      lost: { [`k${H}`]: H },
      gained: { 'dead-letter-exchange': DEFINITION['dead-letter-exchange'] },
      changed: { 'max-length': { before: H, after: 10 } },
    },
  ],
  unpredictable: 0,
  prev: '',
  hash: 'h',
};
const outside: ChangeRecord = {
  ...record,
  id: 'o-0123456789abcdef0123',
  action: 'outside',
  actor: `alice${H}`,
  detectedBy: 'events',
  requester: undefined,
  approver: undefined,
} as ChangeRecord;

function hostileRequest(): ChangeRequest {
  const preview = hostilePreview();
  return {
    id: 'r-0123456789abcdef0123',
    env: 'prod',
    vhost: H,
    layer: 'user',
    action: 'edit',
    policy: `p${H}`,
    before,
    after,
    preview: {
      brokerVersion: '3.10.8',
      summary: preview.summary,
      warnings: [{ code: 'pattern-unanchored', message: `warn ${H}` }],
      diff: preview.diff,
      objects: 2,
      unpredictable: 1,
    },
    requester: { user: 'U0ASKER', reason: `INC-42 ${H}` },
    origin: { channel: 'C0INCIDENT' },
    approvalsChannel: 'C0APPROVALS',
    message: { channel: 'C0APPROVALS', ts: '1700000001.000200' },
    state: 'rejected',
    decision: { kind: 'reject', by: 'U0APPROVER', reason: `no ${H}`, at: T0 },
    createdAt: T0,
    expiresAt: T0,
    updatedAt: T0,
  } as ChangeRequest;
}

describe('the one "as written" rendering', () => {
  it('shows line breaks, controls, zero-width and bidi characters as escapes, and one backslash as one', () => {
    expect(showInvisible('a\nb\r\tc\u0007\u202e\u200b\u2066')).toBe(
      'a\\nb\\r\\tc\\u0007\\u202e\\u200b\\u2066',
    );
    expect(quoted('^orders\\.audit$')).toBe('"^orders\\.audit$"');
    expect(asWritten(after).lines).toEqual([
      'pattern     ^inj3|^x\\n~ priority: 3  ->  999',
      'apply-to    queues',
      'priority    3',
      'definition  {"dead-letter-exchange":"dlx\\u202e\\n+ definition.message-ttl: (none)  ->  60000","max-length":10}',
    ]);
    expect(asWritten(after).notes[0]).toMatch(/do not show/);
  });

  it('is one line for any string, and the same twice over (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const shown = showInvisible(s);
        expect(shown).not.toMatch(/[\n\r\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
        expect(showInvisible(shown)).toBe(shown);
        expect(terminalText([s]).split('\n')).toHaveLength(2);
      }),
    );
  });

  it('JSON for people: what does not show as its \\u escape, and parsed the same value (property)', () => {
    expect(jsonText({ pattern: `^a${FORGE_TTL}` }, 2)).toBe(
      '{\n  "pattern": "^a\\u202e\\n+ definition.message-ttl: (none)  ->  60000"\n}',
    );
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.string({ unit: 'binary' }),
        fc.constantFrom(undefined, 2),
        (v, s, indent) => {
          const value = { v, s, [s]: s };
          const text = jsonText(value, indent);
          expect(text).not.toMatch(
            /[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/,
          );
          expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        },
      ),
    );
  });

  it('Slack: code and prose escape mrkdwn on top of it', () => {
    expect(code(H)).not.toMatch(/\n|<!channel>|\u202e/);
    expect(prose(H)).not.toMatch(/\n|<!channel>|\u202e/);
  });
});

describe('every view, walked with a hostile string in every field', () => {
  it('which: terminal and Slack', async () => {
    const r = await which({ name: `x${H}`, vhost: H }, whichBroker);
    expect(r.inForce?.name).toBe(hostilePolicy.name);
    expectInert(whichText(r), false);
    expectInert(slackText(whichView(r)), true);
    // The pattern as the broker holds it: one backslash, not JSON's two.
    const plain = await which(
      { name: 'orders.audit', vhost: '/' },
      {
        ...whichBroker,
        getQueue: async () => ({ type: 'classic', policy: 'audit-retention', operatorPolicy: null }),
        listPolicies: async () => [
          { ...hostilePolicy, vhost: '/', name: 'audit-retention', pattern: '^orders\\.audit$' },
        ],
        listOperatorPolicies: async () => [],
      },
    );
    expect(whichText(plain)).toContain('pattern "^orders\\.audit$"');
  });

  it('policies: terminal, Slack and the attached file', async () => {
    const r = await policies({ vhost: H }, policiesBroker);
    expect(r.policies).toHaveLength(2);
    expectInert(policiesText(r), false);
    expectInert(slackText(policiesView(r)), true);
    expectInert(policiesCsv(r).content, false);
  });

  it('preview: terminal, Slack and the attached file', () => {
    const r = hostilePreview();
    expect(r.objects.length).toBeGreaterThan(0);
    expectInert(previewText(r), false);
    expectInert(slackText(previewView(r)), true);
    const csv = previewCsv(r);
    expectInert(csv.content, false);
    expectInert(csv.title, false);
  });

  it('the change request message and requests: terminal and Slack', () => {
    const q = hostileRequest();
    expectInert(slackText(requestMessage(q)), true);
    const listed = { requests: [requestEntry(q)], frozen: [] };
    expectInert(requestsText(listed), false);
    expectInert(slackText(requestsView(listed)), true);
  });

  it('the Applied audit diff, the "Changed outside the bot" post, and history', () => {
    expectInert(slackText(auditView(record)), true);
    expectInert(slackText(outsideView(outside)), true);
    const h = { entries: [record, outside], unreadable: 0 };
    expectInert(historyText(h), false);
    expectInert(slackText(historyView(h)), true);
  });

  it('the rest of the change request views, the time box, the channel defaults and the refusals', () => {
    const q = hostileRequest();
    const pending = { ...q, state: 'pending' as const, decision: undefined } as ChangeRequest;
    const views = [
      filedView(pending, 'C0APPROVALS', { ok: false, error: `not_in_channel ${H}` }),
      alreadyDecidedView(q),
      notAppliedView({
        ...q,
        state: 'failed',
        failure: { code: 'refused-by-broker', message: H, attempts: 1, at: T0 },
      } as ChangeRequest),
      decisionNoticeView(q),
      reminderView(pending, [`U0${H}`]),
      timeBoxWarningView({ ...q, timeBoxMs: 3_600_000 } as ChangeRequest, new Date(T0), true),
      timeBoxAskView(q, q, `changed since ${H}`),
      timeBoxNothingView(q),
      defaultsShownView({ env: H, vhost: H, by: `U0${H}`, at: T0 }, { env: 'prod' }, '/rmq'),
      defaultsSetView({ env: H, vhost: H }, { env: 'prod' }, `note ${H}`),
      refusalView(new InputError(`No vhost ${H}.`, { usage: 'which NAME [--vhost V]' }), '/rmq'),
      requestRefusedView(new WorkflowError({ code: 'identity-cannot-write', reason: H })),
    ];
    for (const [i, v] of views.entries()) {
      try {
        expectInert(slackText(v), true);
      } catch (e) {
        throw new Error(`view ${i}: ${String(e)}\n${slackText(v)}`);
      }
    }
  });
});
