import { describe, expect, it } from 'vitest';
import { timeBoxLine } from '../../src/slack/views/request.ts';
import { timeBoxAskView, timeBoxNothingView, timeBoxWarningView } from '../../src/slack/views/timebox.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { renderedText } from '../support/fakeSlack.ts';

const request = {
  id: 'r-0123456789abcdef0123',
  env: 'prod',
  vhost: '/',
  layer: 'user',
  action: 'edit',
  policy: 'orders-limit',
  before: { pattern: '^orders', applyTo: 'queues', priority: 1, definition: { 'max-length': 10 } },
  after: { pattern: '^orders', applyTo: 'queues', priority: 1, definition: { 'max-length': 1000 } },
  requester: { user: 'U0REQUESTER', reason: 'INC-42' },
  origin: { channel: 'C0INCIDENT', threadTs: '1700000000.000100' },
  approvalsChannel: 'C0APPROVALS',
  state: 'applied',
  decision: { kind: 'approve', by: 'U0APPROVER', reason: 'ok', at: '2026-11-30T12:00:00.000Z' },
  appliedAt: '2026-11-30T12:00:05.000Z',
  timeBoxMs: 2 * 3_600_000,
} as unknown as ChangeRequest;
const text = (m: { text: string; blocks: unknown[] }) => renderedText({ ...m });

describe('time-box messages', () => {
  it('before the apply: a duration, and that approving approves the revert; after: the time', () => {
    expect(timeBoxLine({}, 2 * 3_600_000)).toMatch(
      /reverted 2h after it is applied\. Approving it approves the revert too; if the policy is changed again meanwhile, the revert asks for a new approval instead\./,
    );
    expect(timeBoxLine({ appliedAt: '2026-11-30T12:00:05.000Z' }, 2 * 3_600_000)).toMatch(
      /reverted at <!date\^1796047205\^.*\|2026-11-30T14:00:05.000Z> \(2h after it was applied\)/,
    );
  });

  it("a set's: its revert's way is not covered by the approval, before the apply and after", () => {
    const set = { set: { steps: [], source: 'definitions.json' } } as unknown as Pick<ChangeRequest, 'set'>;
    expect(timeBoxLine(set, 3_600_000)).toMatch(
      /reverted 1h after it is applied, the whole set\. Approving it approves the revert too; if a policy of the set is changed again meanwhile, or no order of writing the revert spares every queue on its way, the revert asks for a new approval instead\./,
    );
    expect(timeBoxLine({ ...set, appliedAt: '2026-11-30T12:00:05.000Z' }, 3_600_000)).toMatch(
      /unless a policy of the set is changed again meanwhile, or no order of writing the revert spares every queue on its way: then the revert asks for a new approval\./,
    );
  });

  it.each([
    [
      true,
      /In 10 minutes\* .* the bot reverts `orders-limit` in `prod`\/`\/` to the state before `r-0123456789abcdef0123`, as approved with it by <@U0APPROVER>/,
    ],
    [
      false,
      /was changed again since: the bot will not revert it blindly and will ask for a new approval instead/,
    ],
  ])('the warning, will revert: %s', (willRevert, said) => {
    expect(text(timeBoxWarningView(request, new Date('2026-11-30T14:00:05.000Z'), willRevert))).toMatch(said);
  });

  it("a set's warning: the revert is planned at the deadline, and asks where no order spares every queue", () => {
    const set = { ...request, set: { steps: [], source: 'definitions.json' } } as unknown as ChangeRequest;
    expect(text(timeBoxWarningView(set, new Date('2026-11-30T14:00:05.000Z'), true))).toMatch(
      /as approved with it by <@U0APPROVER>, in the order it plans then: should no order spare every queue on the way, it asks for a new approval instead\./,
    );
    expect(text(timeBoxWarningView(request, new Date('2026-11-30T14:00:05.000Z'), true))).not.toMatch(
      /in the order it plans then/,
    );
  });

  it('at the deadline: the revert asked for, with why and where; or nothing to revert', () => {
    const revert = { ...request, id: 'r-fedcba9876543210fedc', state: 'pending' } as ChangeRequest;
    expect(text(timeBoxAskView(request, revert, 'the policy was changed again since the change'))).toMatch(
      /The time box of 2h ended\* for .* but the policy was changed again since the change\. Nothing was reverted: the revert is request `r-fedcba9876543210fedc`, waiting for a new approval in <#C0APPROVALS>/,
    );
    expect(text(timeBoxNothingView(request))).toMatch(/already as it was before it\. Nothing to revert\./);
  });

  it('escapes the policy name', () => {
    const evil = { ...request, policy: '<!channel> *x*' } as ChangeRequest;
    for (const m of [timeBoxWarningView(evil, new Date(), true), timeBoxNothingView(evil)]) {
      expect(JSON.stringify(m)).not.toContain('<!channel>');
    }
  });
});
