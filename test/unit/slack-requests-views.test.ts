import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/audit/types.ts';
import { parseThreadLink } from '../../src/commands/change/change.ts';
import { deleteWarning } from '../../src/commands/words.ts';
import { InputError } from '../../src/core/errors.ts';
import type { ImpactSummary } from '../../src/preview/impact.ts';
import {
  BREAK_GLASS_BUTTONS,
  breakGlassAppliedView,
  breakGlassForm,
  parseBreakGlassMeta,
  parseReviewMeta,
  reviewedView,
  reviewForm,
  reviewReminderView,
} from '../../src/slack/views/breakGlass.ts';
import {
  ANCHORED_HINT,
  BLOCK,
  type Draft,
  decisionForm,
  FORMS,
  parseDecisionMeta,
  parseDraft,
  patternHint,
  policyForm,
  readLossAcknowledged,
  readPolicyForm,
  reasonForm,
  UNANCHORED_HINT,
  withPatternHint,
} from '../../src/slack/views/forms.ts';
import type { SlackMessage } from '../../src/slack/views/message.ts';
import {
  alreadyDecidedView,
  auditDiffLines,
  auditView,
  REQUEST_BUTTONS,
  requestMessage,
} from '../../src/slack/views/request.ts';
import type { ChangeRequest, RequestState } from '../../src/workflow/types.ts';
import { checkMessage, checkView } from '../support/fakeSlack.ts';
import { renderedText } from '../support/harness.ts';

/**
 * The change-request views and forms, pure: what each state of the approvals message says and
 * offers, the audit diff, the forms' fields read back, the thread link. Every message and view
 * is also checked against the fake Slack's rules (Slack's limits and block schema).
 */

const T0 = '2026-11-30T18:00:00.000Z';

function request(overrides: Partial<ChangeRequest> = {}): ChangeRequest {
  return {
    id: 'r-0123456789abcdef0123',
    env: 'prod',
    vhost: '/',
    layer: 'user',
    action: 'delete',
    policy: 'audit-retention',
    before: {
      pattern: '^orders\\.audit$',
      applyTo: 'queues',
      priority: 10,
      definition: { 'dead-letter-exchange': 'dlx' },
    },
    after: null,
    preview: {
      brokerVersion: '3.10.8',
      summary: {
        objects: 1,
        unpredictable: 0,
        risks: [
          {
            risk: 'dead-letter',
            words: 'lose a dead-letter target',
            count: 1,
            possible: 0,
            keys: ['dead-letter-exchange'],
            names: ['orders.audit'],
          },
        ],
        newTies: { count: 0, objects: [] },
        unanchoredCatch: null,
        groups: [],
        heldByOperator: 0,
        scanned: { queues: 5, exchanges: 7 },
      },
      warnings: [],
      diff: {
        action: 'delete',
        layer: 'user',
        vhost: '/',
        name: 'audit-retention',
        fields: {},
        definition: {},
        unchanged: false,
      },
      objects: 1,
      unpredictable: 0,
    },
    requester: { user: 'U0ASKER', reason: 'INC-42 <!channel> retire it' },
    origin: { channel: 'C0INCIDENT', threadTs: '1700000000.000100' },
    approvalsChannel: 'C0APPROVALS',
    message: { channel: 'C0APPROVALS', ts: '1700000001.000200' },
    state: 'pending',
    createdAt: T0,
    expiresAt: '2026-12-01T18:00:00.000Z',
    updatedAt: T0,
    ...overrides,
  };
}

const decision = { kind: 'approve' as const, by: 'U0APPROVER', reason: 'checked <@U0X> ok', at: T0 };

function buttons(m: SlackMessage): string[] {
  return m.blocks.flatMap((b) =>
    b.type === 'actions' ? b.elements.map((e) => ('action_id' in e ? String(e.action_id) : '')) : [],
  );
}

function valid(m: SlackMessage): void {
  expect(checkMessage({ text: m.text, blocks: m.blocks }, { maxText: 4000 })).toBeNull();
}

describe('the approvals message', () => {
  const states: [RequestState, Partial<ChangeRequest>, RegExp][] = [
    ['pending', {}, /Waiting for an approver\* · expires/],
    [
      'approved',
      { decision },
      /\*Approved\* by <@U0APPROVER> at <!date\^\d+\^[^|]+\|2026-11-30T18:00:00.000Z>: checked &lt;@U0X&gt; ok/,
    ],
    ['applying', { decision }, /\*Applying\* by <@U0APPROVER>/],
    ['applied', { decision, appliedAt: T0 }, /\*Applied\* at .* · approved by <@U0APPROVER>/],
    [
      'failed',
      {
        decision,
        failure: {
          code: 'refused-by-broker',
          message: 'precondition_failed: <b>bad</b>',
          status: 400,
          attempts: 1,
          at: T0,
        },
      },
      /Failed — not applied\*: precondition_failed: &lt;b&gt;bad&lt;\/b&gt; \(`refused-by-broker`, HTTP 400, after 1 attempt\)/,
    ],
    [
      'rejected',
      { decision: { ...decision, kind: 'reject', reason: 'not during the freeze' } },
      /\*Rejected\* by <@U0APPROVER> .*: not during the freeze/,
    ],
    ['expired', {}, /Expired — not applied\*: nobody decided before/],
    ['stale', {}, /Stale — not applied\*: the policy on the broker is no longer what the approver saw/],
  ];

  it.each(states)('%s: says so, with Approve and Reject only while pending', (state, extra, says) => {
    const m = requestMessage(request({ state, ...extra }));
    valid(m);
    const shown = renderedText(m as never);
    expect(shown).toMatch(says);
    expect(buttons(m)).toEqual(state === 'pending' ? [REQUEST_BUTTONS.approve, REQUEST_BUTTONS.reject] : []);
    // Requester, environment, vhost, reason (escaped: no channel ping), the change, the summary.
    expect(shown).toMatch(/\*Requested by\* <@U0ASKER>/);
    expect(shown).toMatch(/\*Environment\* `prod` · \*vhost\* `\/`/);
    expect(shown).toContain('INC-42 &lt;!channel&gt; retire it');
    expect(shown).not.toContain('<!channel>');
    expect(shown).toContain('^orders\\.audit$');
    expect(shown).toMatch(/\*1\* would lose a dead-letter target/);
  });

  it('carries the request id on both buttons', () => {
    const m = requestMessage(request());
    const values = m.blocks.flatMap((b) =>
      b.type === 'actions' ? b.elements.map((e) => (e as { value?: string }).value) : [],
    );
    expect(values).toEqual(['r-0123456789abcdef0123', 'r-0123456789abcdef0123']);
  });

  it('shows an edit as now and as it will be written, the definition verbatim', () => {
    const after = {
      pattern: '^orders\\.',
      applyTo: 'queues',
      priority: 10,
      definition: { 'message-ttl': 60000, 'x-a\\b': 'c"d' },
    };
    const m = requestMessage(request({ action: 'edit', after }));
    const shown = renderedText(m as never);
    expect(shown).toMatch(/\*Now:\*/);
    expect(shown).toMatch(/\*Will be written as:\*/);
    expect(shown).toContain('"x-a\\\\b":"c\\"d"');
  });

  it('warns the approver as the preview warns the requester: a delete restores no default, a write reaches later objects', () => {
    expect(renderedText(requestMessage(request()) as never)).toContain(deleteWarning(false));
    expect(renderedText(requestMessage(request({ layer: 'operator' })) as never)).toContain(
      deleteWarning(true),
    );
    const after = { pattern: 'orders', applyTo: 'queues', priority: 1, definition: { 'max-length': 5 } };
    const edit = renderedText(requestMessage(request({ action: 'edit', after })) as never);
    expect(edit).toMatch(/every one created later/);
    expect(edit).toMatch(/unanchored/);
    expect(edit).not.toContain(deleteWarning(false));
  });

  it('tells a late approver who decided and when', () => {
    const late = alreadyDecidedView(request({ state: 'approved', decision }));
    valid(late);
    expect(renderedText(late as never)).toMatch(/already approved by <@U0APPROVER> at <!date\^/);
    expect(renderedText(alreadyDecidedView(request({ state: 'expired' })) as never)).toMatch(/expired at/);
  });
});

describe('the audit diff', () => {
  const record: AuditRecord = {
    id: 'a-r-0123456789abcdef0123',
    at: T0,
    env: 'prod',
    vhost: '/',
    policy: 'audit-retention',
    operator: false,
    action: 'delete',
    requestId: 'r-0123456789abcdef0123',
    requester: { user: 'U0ASKER', reason: 'INC-42' },
    approver: { user: 'U0APPROVER', reason: 'ok' },
    appliedAt: T0,
    before: {
      pattern: '^orders\\.audit$',
      applyTo: 'queues',
      priority: 10,
      definition: { 'dead-letter-exchange': 'dlx' },
    },
    after: null,
    objects: [
      {
        name: 'orders.audit',
        kind: 'classic',
        before: 'audit-retention',
        after: 'audit-fallback',
        lost: { 'dead-letter-exchange': 'dlx' },
        gained: {},
        changed: {},
      },
    ],
    unpredictable: 0,
    matchedPreview: true,
    prev: '',
    hash: 'x',
  };

  it('a delete: every field before -> (none), and what every governed object lost', () => {
    const m = auditView(record);
    valid(m);
    const shown = renderedText(m as never);
    expect(shown).toContain('~ pattern: ^orders\\.audit$  -&gt;  (none)');
    expect(shown).toContain('- definition.dead-letter-exchange: dlx  -&gt;  (none)');
    expect(shown).toMatch(
      /What every object it governed lost\* \(1\):\n• `orders.audit` _\(classic\)_ → `audit-fallback` — lost `dead-letter-exchange` `dlx`/,
    );
    expect(shown).toMatch(/\*Approved by\* <@U0APPROVER>: ok/);
    expect(buttons(m)).toEqual([REQUEST_BUTTONS.revert]);
  });

  it('an edit marks what changed, and keeps what did not', () => {
    const lines = auditDiffLines({
      before: { pattern: 'a', applyTo: 'all', priority: 1, definition: { x: 1, y: 2 } },
      after: { pattern: 'a', applyTo: 'queues', priority: 1, definition: { x: 1, z: 3 } },
    });
    expect(lines).toEqual([
      '  pattern: a',
      '~ apply-to: all  ->  queues',
      '  priority: 1',
      '  definition.x: 1',
      '- definition.y: 2  ->  (none)',
      '+ definition.z: (none)  ->  3',
    ]);
  });
});

describe('the forms', () => {
  const draft: Draft = {
    action: 'create',
    policy: 'tight',
    env: 'prod',
    vhost: '/',
    layer: 'user',
    origin: { channel: 'C0INCIDENT' },
    fields: {},
  };
  const values = (v: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(v).map(([block, value]) => [
        block,
        block === BLOCK.applyTo ? { value: { selected_option: { value } } } : { value: { value } },
      ]),
    );

  it('the policy form offers only the apply-to values given, with the hints', () => {
    const view = policyForm({ draft, applyTo: ['all', 'queues', 'exchanges'], initial: null });
    expect(checkView(view)).toBeNull();
    expect(view.callback_id).toBe(FORMS.policy);
    expect(parseDraft(view.private_metadata ?? '')).toEqual(draft);
    const json = JSON.stringify(view);
    expect(json).toContain(UNANCHORED_HINT);
    expect(json).toContain('Highest wins. Two matches at the same priority leave it undefined.');
    const select = view.blocks.find((b) => b.block_id === BLOCK.applyTo) as {
      element: { options: { value: string }[] };
    };
    expect(select.element.options.map((o) => o.value)).toEqual(['all', 'queues', 'exchanges']);
  });

  it('an edit is prefilled with the policy as it is', () => {
    const initial = {
      pattern: '^orders\\.',
      applyTo: 'quorum_queues',
      priority: 7,
      definition: { 'max-length': 5 },
    };
    const view = policyForm({
      draft: { ...draft, action: 'edit' },
      applyTo: ['all', 'queues', 'quorum_queues'],
      initial,
    });
    expect(checkView(view)).toBeNull();
    const json = JSON.stringify(view);
    expect(json).toContain(ANCHORED_HINT);
    expect(json).toContain('"initial_value":"^orders\\\\."');
    expect(json).toContain('"initial_value":"7"');
    expect(json).toContain(
      '"initial_option":{"text":{"type":"plain_text","text":"quorum_queues"},"value":"quorum_queues"}',
    );
  });

  it('the hint says unanchored exactly while the pattern lacks ^', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (p) => {
        expect(patternHint(p) === UNANCHORED_HINT).toBe(!p.startsWith('^'));
      }),
    );
    const view = policyForm({ draft, applyTo: ['all'], initial: null });
    const updated = withPatternHint(view as never, '^orders');
    expect(JSON.stringify(updated)).toContain(ANCHORED_HINT);
    expect(withPatternHint(view as never, 'orders')).toBeUndefined();
  });

  it('reads the fields back, and says inline what is wrong', () => {
    expect(
      readPolicyForm(
        values({
          pattern: '^a',
          apply_to: 'queues',
          priority: '5',
          definition: '{"max-length": 10}',
          reason: ' why ',
        }),
      ),
    ).toEqual({
      fields: { pattern: '^a', applyTo: 'queues', priority: 5, definition: { 'max-length': 10 } },
      reason: 'why',
    });
    expect(
      readPolicyForm(values({ pattern: '', apply_to: 'all', priority: 'x', definition: '{bad' })),
    ).toEqual({
      errors: {
        pattern: 'A pattern is required.',
        priority: 'A whole number, not "x".',
        definition: expect.stringMatching(/^Not valid JSON: /),
      },
    });
    expect(
      readPolicyForm(values({ pattern: 'a', apply_to: 'all', priority: '', definition: '[1]' })),
    ).toEqual({
      errors: { definition: expect.stringMatching(/must be a JSON object/) },
    });
    // Typed on a phone: the curly quotes are read as straight ones, as for --definition.
    expect(
      readPolicyForm(
        values({ pattern: 'a', apply_to: 'all', priority: '', definition: '{“max-length”: 7}' }),
      ),
    ).toMatchObject({ fields: { definition: { 'max-length': 7 } } });
  });

  it('the reason and decision forms require a reason and carry what they are for', () => {
    const r = reasonForm({ for: 'file', draft: { ...draft, action: 'delete' } }, 'A reason is required.');
    expect(checkView(r)).toBeNull();
    expect(JSON.stringify(r.blocks)).not.toContain('"optional":true');
    const d = decisionForm(request(), 'reject');
    expect(checkView(d)).toBeNull();
    expect(parseDecisionMeta(d.private_metadata ?? '')).toEqual({
      id: 'r-0123456789abcdef0123',
      kind: 'reject',
    });
    expect(parseDecisionMeta('{"id": 3}')).toBeUndefined();
    expect(parseDecisionMeta('not json')).toBeUndefined();
  });

  it('the approval of a change that removes data asks to acknowledge the loss, in numbers', () => {
    const base = request();
    const impact: ImpactSummary = {
      totals: { messagesDeadLettered: 0, messagesLost: 25, queuesDeleted: 1, queuesRefusingPublishes: 0 },
      queues: ['c.lost', 'c.idle'],
      sampledAt: '2026-12-01T09:00:00.000Z',
      objects: [],
      count: 2,
      unknown: 0,
      notes: [],
    };
    const lossy = request({ preview: { ...base.preview, summary: { ...base.preview.summary, impact } } });
    const approve = decisionForm(lossy, 'approve');
    expect(checkView(approve)).toBeNull();
    const ack = approve.blocks.find((b) => b.block_id === BLOCK.acknowledgeLoss);
    expect(JSON.stringify(ack)).toContain('I accept: 25 messages lost, 1 queue deleted');
    // Rejecting asks nothing more; a change that removes nothing neither.
    expect(decisionForm(lossy, 'reject').blocks.some((b) => b.block_id === BLOCK.acknowledgeLoss)).toBe(
      false,
    );
    expect(decisionForm(base, 'approve').blocks.some((b) => b.block_id === BLOCK.acknowledgeLoss)).toBe(
      false,
    );
    const ticked = { [BLOCK.acknowledgeLoss]: { value: { selected_options: [{ value: 'accepted' }] } } };
    expect(readLossAcknowledged(ticked)).toBe(true);
    expect(readLossAcknowledged({ [BLOCK.acknowledgeLoss]: { value: { selected_options: [] } } })).toBe(
      false,
    );
    expect(readLossAcknowledged({})).toBe(false);
  });
});

describe('--thread LINK', () => {
  it('reads a message link, and a reply link by its thread', () => {
    expect(parseThreadLink('https://acme.slack.com/archives/C0INC/p1700000000000901', 'u')).toEqual({
      channel: 'C0INC',
      threadTs: '1700000000.000901',
    });
    expect(
      parseThreadLink(
        'https://acme.slack.com/archives/C0INC/p1700000050000001?thread_ts=1700000000.000901&cid=C0INC',
        'u',
      ),
    ).toEqual({ channel: 'C0INC', threadTs: '1700000000.000901' });
  });

  it('refuses anything else, saying what it wants', () => {
    for (const bad of [
      'C0INC',
      'http://acme.slack.com/archives/C0INC/p1700000000000901',
      'https://x/archives/c/p1',
    ]) {
      expect(() => parseThreadLink(bad, 'u')).toThrow(InputError);
    }
  });
});

describe('break-glass', () => {
  const glass = {
    by: 'U0ASKER',
    reason: 'INC-7 <!channel> *now*',
    at: T0,
    reviewBy: '2026-11-30T22:00:00.000Z',
  };
  const applied = request({
    state: 'applied',
    appliedAt: T0,
    auditId: 'a-r-0123456789abcdef0123',
    breakGlass: glass,
  });
  const record: AuditRecord = {
    id: 'a-r-0123456789abcdef0123',
    at: T0,
    env: 'prod',
    vhost: '/',
    policy: 'audit-retention',
    operator: false,
    action: 'delete',
    requestId: applied.id,
    requester: { user: 'U0ASKER', reason: 'INC-7' },
    breakGlass: { user: 'U0ASKER', reason: glass.reason },
    appliedAt: T0,
    before: request().before,
    after: null,
    objects: [],
    unpredictable: 0,
    prev: '',
    hash: 'h',
  };

  it.each([
    [
      'offered: Approve, Reject, Break glass',
      request({ breakGlassOffered: true }),
      ['rmq_request_approve', 'rmq_request_reject', 'rmq_request_break_glass'],
    ],
    ['not offered: Approve and Reject', request(), ['rmq_request_approve', 'rmq_request_reject']],
    ['broken, being applied: no buttons', request({ state: 'approved', breakGlass: glass }), []],
  ])('the request message, %s', (_what, r, want) => {
    const m = requestMessage(r);
    expect(buttons(m)).toEqual(want);
    expect(checkMessage({ ...m })).toBeNull();
  });

  it('the request message says who broke the glass and why, escaped, and that it is unreviewed', () => {
    const text = renderedText(requestMessage(applied) as never);
    expect(text).toMatch(
      /Break glass:\* applied without approval by <@U0ASKER> at .*, because INC-7 &lt;!channel&gt;/,
    );
    expect(text).not.toMatch(/<!channel>/);
    expect(text).toMatch(/\*Unreviewed:\* an approver reviews it \(Review, or Revert\), due by/);
    const reviewed = renderedText(
      requestMessage({
        ...applied,
        review: {
          outcome: 'reverted',
          by: 'U0APPROVER',
          reason: 'too broad',
          at: T0,
          revertRequestId: 'r-11111111111111111111',
        },
      }) as never,
    );
    expect(reviewed).toMatch(
      /Reverted on review\* by <@U0APPROVER> at .*: too broad \(revert request `r-11111111111111111111`/,
    );
    expect(reviewed).not.toMatch(/Unreviewed/);
  });

  it('applied: loud, the audit diff, Review and Revert carrying the request id (no audit Revert)', () => {
    const m = breakGlassAppliedView(record, applied);
    expect(checkMessage({ ...m })).toBeNull();
    expect(renderedText(m as never)).toMatch(
      /:rotating_light: \*Applied without approval\* by <@U0ASKER>, because INC-7 &lt;!channel&gt;/,
    );
    expect(buttons(m)).toEqual([BREAK_GLASS_BUTTONS.review, BREAK_GLASS_BUTTONS.revert]);
    expect(
      m.blocks.flatMap((b) =>
        b.type === 'actions' ? b.elements.map((e) => ('value' in e ? e.value : '')) : [],
      ),
    ).toEqual([applied.id, applied.id]);
  });

  it('the reminder names the approvers and offers Review and Revert; the review notice says who', () => {
    const reminder = reviewReminderView(applied, ['U0APPROVER', 'S0APPROVERS']);
    expect(checkMessage({ ...reminder })).toBeNull();
    expect(renderedText(reminder as never)).toMatch(
      /still \*unreviewed\*[\s\S]*\n<@U0APPROVER>, <!subteam\^S0APPROVERS>: please review it, or revert it\./,
    );
    expect(buttons(reminder)).toEqual([BREAK_GLASS_BUTTONS.review, BREAK_GLASS_BUTTONS.revert]);
    const done = reviewedView({
      ...applied,
      review: { outcome: 'reviewed', by: 'U0APPROVER', reason: 'fine', at: T0 },
    });
    expect(renderedText(done as never)).toMatch(/Reviewed\* by <@U0APPROVER> at .*: fine/);
  });

  it('the forms carry only the request id (and the outcome), and check against Slack', () => {
    const form = breakGlassForm(request({ breakGlassOffered: true }));
    expect(checkView(form)).toBeNull();
    expect(parseBreakGlassMeta(form.private_metadata ?? '')).toEqual({ id: 'r-0123456789abcdef0123' });
    const review = reviewForm(applied, 'reverted');
    expect(checkView(review)).toBeNull();
    expect(parseReviewMeta(review.private_metadata ?? '')).toEqual({ id: applied.id, outcome: 'reverted' });
    expect(parseReviewMeta('{"id":"r-1","outcome":"approve"}')).toBeUndefined();
  });
});
