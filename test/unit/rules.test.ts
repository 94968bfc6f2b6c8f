import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refusalSentence, type WorkflowErrorCode } from '../../src/workflow/errors.ts';
import {
  approvalOrder,
  approvalsNeeded,
  awaitsReview,
  type BreakGlassFacts,
  breakGlassRefusal,
  type DecideFacts,
  decideRefusal,
  environmentRefusal,
  type FileFacts,
  fileRefusal,
  freezeHolds,
  freezeRefusal,
  hasApproved,
  MAX_REASON,
  type RequesterFacts,
  type ReviewFacts,
  requesterRefusal,
  reviewRefusal,
  takesReview,
  timeBoxRevertAuthority,
  waitsItsTurn,
} from '../../src/workflow/rules.ts';
import { REQUEST_STATES } from '../../src/workflow/types.ts';

/** The workflow's rules (src/workflow/rules.ts), table by table; the integration suites run them against Redis and the broker. */

const env = (mode: FileFacts['env']['mode']) => ({ name: 'prod', mode });
const LONG = 'x'.repeat(MAX_REASON + 1);
const LONGEST = 'x'.repeat(MAX_REASON);

describe('fileRefusal', () => {
  const cases: [string, FileFacts, WorkflowErrorCode | null][] = [
    [
      'an edit in a normal environment, no reason',
      { env: env('normal'), action: 'edit', reason: undefined },
      null,
    ],
    [
      'a create in a normal environment, empty reason',
      { env: env('normal'), action: 'create', reason: '' },
      null,
    ],
    [
      'a delete without a reason',
      { env: env('normal'), action: 'delete', reason: undefined },
      'reason-required',
    ],
    ['a delete with a reason', { env: env('normal'), action: 'delete', reason: 'INC-1' }, null],
    [
      'an edit in a guarded environment, no reason',
      { env: env('guarded'), action: 'edit', reason: '' },
      'reason-required',
    ],
    [
      'a create in a guarded environment with a reason',
      { env: env('guarded'), action: 'create', reason: 'INC-1' },
      null,
    ],
    [
      'anything in a read-only environment',
      { env: env('read-only'), action: 'edit', reason: 'INC-1' },
      'read-only-env',
    ],
    [
      'a delete in a read-only environment, no reason',
      { env: env('read-only'), action: 'delete', reason: undefined },
      'read-only-env',
    ],
    ['a reason of MAX_REASON characters', { env: env('guarded'), action: 'delete', reason: LONGEST }, null],
    [
      'a reason one longer than MAX_REASON',
      { env: env('normal'), action: 'edit', reason: LONG },
      'reason-too-long',
    ],
  ];
  it.each(cases)('%s: %s', (_what, facts, code) => {
    expect(fileRefusal(facts)?.code ?? null).toBe(code);
  });

  it('says which environment is read-only, and how long the reason was', () => {
    expect(fileRefusal({ env: env('read-only'), action: 'edit', reason: 'x' })).toEqual({
      code: 'read-only-env',
      env: 'prod',
      notDone: 'filed',
    });
    expect(fileRefusal({ env: env('normal'), action: 'edit', reason: LONG })).toEqual({
      code: 'reason-too-long',
      length: MAX_REASON + 1,
      max: MAX_REASON,
    });
  });

  it.each([
    ['read-only', 'read-only-env'],
    ['normal', null],
    ['guarded', null],
  ] as const)('environmentRefusal: a %s environment: %s', (mode, code) => {
    expect(environmentRefusal(env(mode))?.code ?? null).toBe(code);
  });

  it('no reason over MAX_REASON is ever taken, whatever the environment and action', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('normal', 'guarded', 'read-only' as const),
        fc.constantFrom('create', 'edit', 'delete' as const),
        fc.string({ minLength: MAX_REASON + 1, maxLength: MAX_REASON + 50 }),
        (mode, action, reason) => {
          expect(fileRefusal({ env: env(mode), action, reason })).not.toBeNull();
        },
      ),
    );
  });
});

describe('decideRefusal', () => {
  const d = (kind: DecideFacts['kind'], role: DecideFacts['role'], reason = 'looks right'): DecideFacts => ({
    kind,
    role,
    env: 'prod',
    reason,
    mode: 'normal',
  });
  const cases: [string, DecideFacts, WorkflowErrorCode | null][] = [
    ['an approver approves', d('approve', 'approver'), null],
    ['an approver rejects', d('reject', 'approver'), null],
    ['the requester approves their own', d('approve', 'requester'), 'self-approval'],
    ['the requester withdraws their own', d('reject', 'requester'), null],
    ['someone else approves', d('approve', 'other'), 'not-approver'],
    ['someone else rejects', d('reject', 'other'), 'not-approver'],
    ['an approver approves without a reason', d('approve', 'approver', ''), 'reason-required'],
    ['the requester withdraws without a reason', d('reject', 'requester', ''), 'reason-required'],
    ['an approver with a reason over MAX_REASON', d('approve', 'approver', LONG), 'reason-too-long'],
    ['an approver with a reason of MAX_REASON', d('reject', 'approver', LONGEST), null],
    [
      'an approver approves a second time',
      { ...d('approve', 'approver'), alreadyApproved: true },
      'already-approved',
    ],
    [
      'an approver who approved may still reject',
      { ...d('reject', 'approver'), alreadyApproved: true },
      null,
    ],
    ['the second approver approves', { ...d('approve', 'approver'), alreadyApproved: false }, null],
    [
      'someone who approved but is no longer an approver',
      { ...d('approve', 'other'), alreadyApproved: true },
      'not-approver',
    ],
    [
      'an approver approves in an environment read-only now',
      { ...d('approve', 'approver'), mode: 'read-only' },
      'read-only-env',
    ],
    [
      'an approver rejects in an environment read-only now (a rejection writes nothing)',
      { ...d('reject', 'approver'), mode: 'read-only' },
      null,
    ],
    [
      'an approver approves a change that loses messages without acknowledging it',
      { ...d('approve', 'approver'), loss: '25 messages lost' },
      'loss-not-acknowledged',
    ],
    [
      'an approver approves it acknowledging the loss',
      { ...d('approve', 'approver'), loss: '25 messages lost', acknowledgedLoss: true },
      null,
    ],
    [
      'an approver rejects it without acknowledging',
      { ...d('reject', 'approver'), loss: '25 messages lost' },
      null,
    ],
    [
      'a change that loses nothing needs no acknowledgement',
      { ...d('approve', 'approver'), loss: null },
      null,
    ],
  ];
  it.each(cases)('%s: %s', (_what, facts, code) => {
    expect(decideRefusal(facts)?.code ?? null).toBe(code);
  });

  it('the requester never approves their own request, whatever the reason', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: MAX_REASON + 10 }), (reason) => {
        expect(decideRefusal(d('approve', 'requester', reason))).not.toBeNull();
      }),
    );
  });

  it('the refusal names the loss in numbers', () => {
    const refusal = decideRefusal({ ...d('approve', 'approver'), loss: '25 messages lost, 1 queue deleted' });
    expect(refusal && refusalSentence(refusal)).toBe(
      'This change removes data (25 messages lost, 1 queue deleted): tick the acknowledgement to approve it. Nothing was approved.',
    );
  });

  it('a decision without a reason is asked for the audit trail', () => {
    const refusal = decideRefusal(d('reject', 'approver', ''));
    expect(refusal && refusalSentence(refusal)).toBe('A reason is required: say why, for the audit trail.');
  });
});

describe('requesterRefusal', () => {
  const facts = (requesters: string[], isRequester: boolean): RequesterFacts => ({
    env: 'prod',
    requesters,
    isRequester,
    approvers: ['U0APPROVER', 'S0APPROVERS'],
  });
  const cases: [string, RequesterFacts, WorkflowErrorCode | null][] = [
    ['no requesters configured: anyone files', facts([], false), null],
    ['among the requesters (directly or in a group)', facts(['U0A', 'S0ONCALL'], true), null],
    ['not among them', facts(['U0A', 'S0ONCALL'], false), 'not-requester'],
  ];
  it.each(cases)('%s: %s', (_what, f, code) => {
    expect(requesterRefusal(f)?.code ?? null).toBe(code);
  });

  it('the refusal names who may ask and who may approve', () => {
    expect(requesterRefusal(facts(['U0A'], false))).toEqual({
      code: 'not-requester',
      env: 'prod',
      requesters: ['U0A'],
      approvers: ['U0APPROVER', 'S0APPROVERS'],
    });
  });
});

describe('approvals counted', () => {
  it.each([
    [{}, 1],
    [{ approvalsRequired: 1 }, 1],
    [{ approvalsRequired: 3 }, 3],
  ])('approvalsNeeded(%j) = %d (a request filed before the rule needs one)', (r, n) => {
    expect(approvalsNeeded(r)).toBe(n);
  });

  it('hasApproved looks at who approved, nothing else', () => {
    const approvals = [{ by: 'U0A', reason: 'ok', at: '2026-12-01T08:00:00.000Z' }];
    expect(hasApproved({ approvals }, 'U0A')).toBe(true);
    expect(hasApproved({ approvals }, 'U0B')).toBe(false);
    expect(hasApproved({}, 'U0A')).toBe(false);
  });
});

describe('breakGlassRefusal', () => {
  const facts = (over: Partial<BreakGlassFacts>): BreakGlassFacts => ({
    env: 'prod',
    allowed: true,
    role: 'requester',
    reason: 'INC-7: orders are piling up',
    mode: 'normal',
    ...over,
  });
  const cases: [string, Partial<BreakGlassFacts>, WorkflowErrorCode | null][] = [
    ['the requester, allowed, with a reason', {}, null],
    ['the environment does not allow it', { allowed: false }, 'break-glass-not-allowed'],
    ['the environment is read-only now', { mode: 'read-only' }, 'read-only-env'],
    [
      'not allowed, even for someone else, says not allowed first',
      { allowed: false, role: 'other' },
      'break-glass-not-allowed',
    ],
    ['an approver who is not the requester', { role: 'approver' }, 'break-glass-not-requester'],
    ['anyone else', { role: 'other' }, 'break-glass-not-requester'],
    ['no reason', { reason: '' }, 'reason-required'],
    ['the longest reason', { reason: LONGEST }, null],
    ['a reason over the limit', { reason: LONG }, 'reason-too-long'],
    ['a change that loses messages, not acknowledged', { loss: '25 messages lost' }, 'loss-not-acknowledged'],
    [
      'a change that loses messages, acknowledged',
      { loss: '25 messages lost', acknowledgedLoss: true },
      null,
    ],
    ['a change that loses nothing', { loss: null }, null],
  ];
  it.each(cases)('%s', (_what, over, code) => {
    expect(breakGlassRefusal(facts(over))?.code ?? null).toBe(code);
  });

  it('a missing reason is asked for as a break-glass reason', () => {
    expect(breakGlassRefusal(facts({ reason: '' }))).toEqual({ code: 'reason-required', for: 'break-glass' });
  });

  it('a loss not acknowledged is refused as a break-glass, with its numbers', () => {
    expect(breakGlassRefusal(facts({ loss: '25 messages lost' }))).toEqual({
      code: 'loss-not-acknowledged',
      loss: '25 messages lost',
      by: 'break-glass',
    });
  });
});

/** A break-glass, and a review of it, for the rules about both. */
const glass = {
  by: 'U0REQ',
  reason: 'INC-7',
  at: '2026-12-01T08:00:00.000Z',
  reviewBy: '2026-12-01T12:00:00.000Z',
};
const review = { outcome: 'reviewed' as const, by: 'U0B', reason: 'fine', at: '2026-12-01T09:00:00.000Z' };

describe('reviewRefusal', () => {
  const facts = (over: Partial<ReviewFacts>): ReviewFacts => ({
    env: 'prod',
    role: 'approver',
    reason: 'it had to be done',
    request: { breakGlass: glass, state: 'applied' },
    ...over,
  });
  const cases: [string, Partial<ReviewFacts>, WorkflowErrorCode | null][] = [
    ['an approver, an applied break-glass change, a reason', {}, null],
    ['a change approved as usual', { request: { state: 'applied' } }, 'nothing-to-review'],
    [
      'a break-glass change still applying',
      { request: { breakGlass: glass, state: 'applying' } },
      'nothing-to-review',
    ],
    [
      'a break-glass change that went stale',
      { request: { breakGlass: glass, state: 'stale' } },
      'nothing-to-review',
    ],
    ['reviewed already', { request: { breakGlass: glass, state: 'applied', review } }, 'already-reviewed'],
    ['who broke the glass', { role: 'requester' }, 'self-review'],
    ['someone not among the approvers', { role: 'other' }, 'not-approver'],
    ['no reason', { reason: '' }, 'reason-required'],
    ['a reason over the limit', { reason: LONG }, 'reason-too-long'],
  ];
  it.each(cases)('%s', (_what, over, code) => {
    expect(reviewRefusal(facts(over))?.code ?? null).toBe(code);
  });

  it.each([
    [{ breakGlass: glass, state: 'approved' as const }, true],
    [{ breakGlass: glass, state: 'applied' as const }, true],
    [{ breakGlass: glass, state: 'applied' as const, review }, false],
    [{ breakGlass: glass, state: 'failed' as const }, false],
    [{ state: 'applied' as const }, false],
  ])('awaitsReview(%j) = %s', (r, want) => {
    expect(awaitsReview(r)).toBe(want);
  });
});

describe('whom a freeze holds, and in which order they go after it (issue 26, item 7)', () => {
  it('freezeHolds: every request but a break-glass change', () => {
    expect(freezeHolds({})).toBe(true);
    expect(freezeHolds({ breakGlass: glass })).toBe(false);
  });

  const freeze = {
    by: 'U0B',
    reason: 'release',
    at: '2026-12-01T07:00:00.000Z',
    until: '2026-12-01T09:00:00.000Z',
  };
  const decided = (at: string) => ({ kind: 'approve' as const, by: 'U0B', reason: 'ok', at });
  /** A request approved at `at` (its decision; none: its last move, `updatedAt`), held by the freeze unless `held: false`. */
  const approved = (id: string, at: string, over: { env?: string; held?: false; decision?: false } = {}) => ({
    id,
    env: over.env ?? 'prod',
    updatedAt: at,
    ...(over.decision === false ? {} : { decision: decided(at) }),
    ...(over.held === false ? {} : { held: freeze }),
  });

  it('approvalOrder: by when each was approved (its decision, else its last move), then by id', () => {
    const a = approved('r-b', '2026-12-01T08:00:00.000Z');
    const b = approved('r-a', '2026-12-01T08:00:01.000Z', { decision: false });
    const c = approved('r-a', '2026-12-01T08:00:00.000Z');
    expect([b, a, c].sort(approvalOrder).map((r) => `${r.id}@${r.updatedAt}`)).toEqual([
      'r-a@2026-12-01T08:00:00.000Z',
      'r-b@2026-12-01T08:00:00.000Z',
      'r-a@2026-12-01T08:00:01.000Z',
    ]);
  });

  it('waitsItsTurn: a held request waits for every held request of its environment approved before it', () => {
    const first = approved('r-1', '2026-12-01T08:00:00.000Z');
    const second = approved('r-2', '2026-12-01T08:05:00.000Z');
    expect(waitsItsTurn(second, [first, second])).toBe(true);
    expect(waitsItsTurn(first, [first, second])).toBe(false);
    // The first finished (no longer unfinished): the second goes.
    expect(waitsItsTurn(second, [second])).toBe(false);
    // Another environment's, or one the freeze did not hold, is no one to wait for.
    expect(waitsItsTurn(second, [{ ...first, env: 'staging' }, second])).toBe(false);
    expect(waitsItsTurn(second, [approved('r-1', first.updatedAt, { held: false }), second])).toBe(false);
    // Not held itself: it never waits its turn.
    expect(waitsItsTurn(approved('r-2', second.updatedAt, { held: false }), [first])).toBe(false);
  });

  it('waitsItsTurn: of any held requests, exactly the earliest-approved goes first (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 8 }),
        (offsets) => {
          const held = offsets.map((ms, i) =>
            approved(`r-${i}`, new Date(Date.parse('2026-12-01T08:00:00.000Z') + ms).toISOString()),
          );
          const going = held.filter((r) => !waitsItsTurn(r, held));
          expect(going).toEqual([[...held].sort(approvalOrder)[0]]);
        },
      ),
    );
  });
});

describe('unreviewed, defined once (issue 26, item 7)', () => {
  it.each(REQUEST_STATES.flatMap((state) => [[state, true] as const, [state, false] as const]))(
    'a break-glass change %s (reviewed: %s): unreviewed only on its way or applied, review taken only applied',
    (state, reviewed) => {
      const r = { breakGlass: glass, state, ...(reviewed ? { review } : {}) };
      const onItsWay = state === 'approved' || state === 'applying' || state === 'applied';
      expect(awaitsReview(r)).toBe(onItsWay && !reviewed);
      expect(takesReview(r)).toBe(state === 'applied');
      expect(awaitsReview({ state })).toBe(false);
      expect(takesReview({ state })).toBe(false);
    },
  );
});

describe('refusal sentences (src/workflow/errors.ts)', () => {
  it.each([
    [
      { code: 'read-only-env', env: 'prod', notDone: 'filed' } as const,
      /^The environment prod is read-only.*Nothing was filed\.$/,
    ],
    [
      { code: 'read-only-env', env: 'prod', notDone: 'decided' } as const,
      /prod is read-only.*Nothing was decided\./,
    ],
    [{ code: 'reason-too-long', length: 1001, max: 1000 } as const, /1001 characters; at most 1000/],
    [{ code: 'unknown-env', env: 'qa', known: ['prod', 'staging'] } as const, /knows prod, staging/],
    [{ code: 'store-unavailable', notDone: 'nothing was decided' } as const, /: nothing was decided\./],
    [{ code: 'not-found', what: 'audit record', id: 'a-r-1' } as const, /^There is no audit record a-r-1\.$/],
    [
      { code: 'break-glass-not-allowed', env: 'prod' } as const,
      /does not allow break-glass.*Nothing was applied\./,
    ],
    [{ code: 'reason-required', for: 'break-glass' } as const, /break-glass reason is required/],
    [{ code: 'self-review' } as const, /another approver must review it/],
  ])('%j reads %s', (refusal, sentence) => {
    expect(refusalSentence(refusal)).toMatch(sentence);
  });
});

describe('timeBoxRevertAuthority (issue 28, item 2)', () => {
  const at = '2026-12-01T08:00:00.000Z';
  it.each([
    ['approved', { decision: { kind: 'approve' as const, by: 'U0A', reason: 'ok', at } }, 'approval'],
    [
      'applied by break-glass after one of two approvals (no decision)',
      { breakGlass: { by: 'U0R', reason: 'INC', at, reviewBy: at } },
      'break-glass',
    ],
    ['rejected', { decision: { kind: 'reject' as const, by: 'U0A', reason: 'no', at } }, null],
    ['neither', {}, null],
  ])('%s: %s', (_what, r, kind) => {
    expect(timeBoxRevertAuthority(r)?.kind ?? null).toBe(kind);
  });
});

describe('freezeRefusal (issue 28, item 11)', () => {
  const f = (forMs: number) => freezeRefusal({ env: 'prod', isApprover: true, reason: 'INC', forMs });
  it.each([
    [0, 'freeze-too-short'],
    [-1, 'freeze-too-short'],
    [1, null],
    [7 * 86_400_000, null],
    [7 * 86_400_000 + 1, 'freeze-too-long'],
  ])('--for %d ms: %s', (ms, code) => {
    expect(f(ms)?.code ?? null).toBe(code);
  });
  it('zero is told it must last more than zero, not that it is too long', () => {
    const refused = f(0);
    expect(refused && refusalSentence(refused)).toBe(
      'A freeze must last more than zero (--for 2h; at most --for 7d): nothing changed.',
    );
  });
});
