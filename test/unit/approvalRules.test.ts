import { describe, expect, it } from 'vitest';
import {
  approvalsNeeded,
  type DecideFacts,
  decideRefusal,
  fileRefusal,
  hasApproved,
} from '../../src/workflow/approvalRules.ts';

const REQUESTER = 'U0REQ';
const A = 'U0A';
const B = 'U0B';
const at = '2026-12-01T08:00:00.000Z';

const request = (approvals: string[] = []): DecideFacts['request'] => ({
  requester: { user: REQUESTER },
  approvals: approvals.map((by) => ({ by, reason: 'ok', at })),
});

describe('decideRefusal', () => {
  it.each<[string, Partial<DecideFacts>, ReturnType<typeof decideRefusal>]>([
    ['an approver approves', {}, undefined],
    ['an approver rejects', { kind: 'reject' }, undefined],
    ['a second approver approves', { user: B, request: request([A]) }, undefined],
    ['no reason', { reason: '' }, 'reason-required'],
    ['no reason to reject either', { kind: 'reject', reason: '' }, 'reason-required'],
    ['the requester approves', { user: REQUESTER, isApprover: true }, 'self-approval'],
    [
      'the requester withdraws (rejects) without being an approver',
      { user: REQUESTER, kind: 'reject', isApprover: false },
      undefined,
    ],
    ['someone else approves', { isApprover: false }, 'not-approver'],
    ['someone else rejects', { kind: 'reject', isApprover: false }, 'not-approver'],
    ['the same approver approves twice', { request: request([A]) }, 'already-approved'],
    ['an approver who approved may still reject', { kind: 'reject', request: request([A]) }, undefined],
    [
      'a non-approver who is listed in approvals (removed since) is refused as one',
      { isApprover: false, request: request([A]) },
      'not-approver',
    ],
  ])('%s', (_what, over, want) => {
    const facts: DecideFacts = {
      kind: 'approve',
      user: A,
      reason: 'ok',
      request: request(),
      isApprover: true,
      ...over,
    };
    expect(decideRefusal(facts)).toBe(want);
  });
});

describe('fileRefusal', () => {
  it.each<[string, { requesters: string[]; isRequester: boolean }, ReturnType<typeof fileRefusal>]>([
    ['no requesters configured: anyone', { requesters: [], isRequester: false }, undefined],
    ['among the requesters', { requesters: ['U1', 'S1'], isRequester: true }, undefined],
    ['not among them', { requesters: ['U1', 'S1'], isRequester: false }, 'not-requester'],
  ])('%s', (_what, facts, want) => {
    expect(fileRefusal(facts)).toBe(want);
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
    expect(hasApproved(request([A]), A)).toBe(true);
    expect(hasApproved(request([A]), B)).toBe(false);
    expect(hasApproved({}, A)).toBe(false);
  });
});
