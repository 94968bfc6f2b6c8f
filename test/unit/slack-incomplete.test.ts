/**
 * An answer that could not read what it depends on leads with the sentence that says so, in Slack
 * as in the terminal (one home: src/commands/words.ts `incompleteWords`): the plan's and the lint's
 * Slack messages start with it, inside Slack's limits; without it they are as before.
 */
import { describe, expect, it } from 'vitest';
import { type LintResult, lintExitCode } from '../../src/commands/lint/lint.ts';
import { planExitCode } from '../../src/commands/plan/plan.ts';
import { incompleteJson } from '../../src/commands/words.ts';
import type { PlanResult } from '../../src/plan/plan.ts';
import { impactTotals } from '../../src/policy/impact/impact.ts';
import type { Unread } from '../../src/rabbit/index.ts';
import { lintView } from '../../src/slack/views/lint.ts';
import { planView } from '../../src/slack/views/plan.ts';
import { planText } from '../../src/terminal/plan.ts';
import { quoted } from '../../src/text/index.ts';
import { checkMessage } from '../support/fakeSlack.ts';

const timedOut: Unread = {
  what: 'queue-statistics',
  vhost: 'orders',
  why: 'timeout',
  detail: 'GET /api/queues/orders?columns=…: no complete answer within 15000 ms',
  budgetMs: 15_000,
};

function planned(unread: readonly Unread[]): PlanResult {
  return {
    status: 'planned',
    plan: {
      vhosts: [],
      ignored: {},
      changes: [],
      unchanged: 1,
      impact: impactTotals([]),
      losing: [],
      transitional: [],
      findings: [],
      unread,
    },
  };
}

const LEAD =
  "INCOMPLETE, not an answer: the queues' statistics (messages, consumers) of vhost `orders` could not be read — timeout after 15 s, the budget RMQ_TIMEOUT gives a question — so what the change loses is not known. Raise RMQ_TIMEOUT above 15s and ask again.";

describe('the leading sentence in Slack', () => {
  it('plan: the first block and the notification text start with it; exit 3 even with --detailed-exitcode', () => {
    const m = planView(planned([timedOut]), 'defs.json');
    expect(checkMessage({ ...m })).toBeNull();
    expect(JSON.stringify(m.blocks[0])).toContain(`:rotating_light: *${LEAD}*`);
    expect(m.text.startsWith(LEAD)).toBe(true);
    // The terminal's first line is the same sentence, its names quoted as the terminal quotes them.
    expect(planText(planned([timedOut])).split('\n')[0]).toBe(LEAD.replace('`orders`', '"orders"'));
    expect(planExitCode(planned([timedOut]), true)).toBe(3);
    expect(planExitCode(planned([timedOut]), false)).toBe(3);
  });

  it('plan, all read: no such block, exit 0 (4 is for a plan with changes)', () => {
    const m = planView(planned([]), 'defs.json');
    expect(JSON.stringify(m.blocks)).not.toContain('INCOMPLETE');
    expect(planExitCode(planned([]), true)).toBe(0);
  });

  it('lint: the federation upstreams refused lead the message; exit 3 whatever --fail-on says', () => {
    const unread: Unread[] = [
      { what: 'federation-upstreams', vhost: 'orders', why: 'forbidden', detail: 'Not monitor user' },
    ];
    const incomplete = incompleteJson(unread, 'findings', quoted);
    if (!incomplete) throw new Error('no incomplete');
    const r: LintResult = {
      env: 'prod',
      vhost: 'orders',
      answer: 'linted',
      brokerVersion: '4.3.6',
      findings: [],
      policies: 1,
      objects: 1,
      notRead: [],
      incomplete,
    };
    const m = lintView(r);
    expect(checkMessage({ ...m })).toBeNull();
    const first = JSON.stringify(m.blocks[0]);
    expect(first).toContain(
      ":rotating_light: *INCOMPLETE, not an answer: the federation upstreams of vhost `orders` could not be read — not permitted: the bot's broker user may not read them — so what they would find is not claimed either way.",
    );
    expect(lintExitCode(r, undefined)).toBe(3);
    expect(lintExitCode(r, 'error')).toBe(3);
    expect(incomplete).toMatchObject({ what: ['federation-upstreams'], why: 'forbidden' });
  });
});
