/**
 * The plan's new lint findings where people read a plan (issue 29 item 2): the terminal lists
 * them after the loss, every one with its sentence; Slack's message counts them and shows the
 * worst, inside Slack's limits. Pure; the findings themselves: test/integration/plan-lint.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { PlanResult } from '../../src/plan/plan.ts';
import { impactTotals } from '../../src/policy/impact/impact.ts';
import type { Finding } from '../../src/policy/lint/lint.ts';
import { planView } from '../../src/slack/views/plan.ts';
import { planText } from '../../src/terminal/plan.ts';
import { checkMessage, renderedText } from '../support/fakeSlack.ts';

const step = {
  layer: 'user' as const,
  vhost: 'v',
  name: 'orders-cap',
  before: null,
  after: {
    vhost: 'v',
    name: 'orders-cap',
    pattern: 'orders',
    applyTo: 'queues',
    priority: 2,
    definition: { 'max-length': 100 },
  },
  action: 'create' as const,
  verify: [],
  links: { start: [], stop: [] },
};

function planned(findings: (Finding & { vhost: string })[]): PlanResult {
  return {
    status: 'planned',
    plan: {
      vhosts: [],
      ignored: {},
      changes: [step],
      unchanged: 0,
      impact: impactTotals([]),
      losing: [],
      transitional: [],
      findings,
    },
  };
}

const unanchored = (i: number): Finding & { vhost: string } => ({
  vhost: 'v',
  kind: 'unanchored',
  severity: 'warning',
  policy: `p${'x'.repeat(240)}${i}`,
  operator: false,
  objects: Array.from({ length: 20 }, (_, k) => `q${'y'.repeat(240)}${k}`),
  objectCount: 40,
  pattern: 'x'.repeat(255),
});

describe('the plan with new lint findings', () => {
  it('the terminal: after the loss, each with its sentence and objects; "nothing" when none', () => {
    const text = planText(planned([unanchored(1)]));
    const loss = text.indexOf('What the set loses:');
    const found = text.indexOf('What lint would find in the end state and does not find now (1):');
    expect(loss).toBeGreaterThanOrEqual(0);
    expect(found).toBeGreaterThan(loss);
    expect(text).toMatch(/WARNING {2}unanchored {2}\(vhost v\) {2}Policy "px+1"'s pattern "x+" has no \^/);
    expect(text).toContain(', and 20 more');
    expect(planText(planned([]))).toContain(
      'What lint would find in the end state and does not find now: nothing.',
    );
  });

  it('Slack: counted, the first three shown, inside the limits however long their names', () => {
    const m = planView(planned(Array.from({ length: 50 }, (_, i) => unanchored(i))), 'defs.json');
    const { file, ...message } = m;
    expect(checkMessage(message)).toBeNull();
    expect(renderedText(message)).toMatch(
      /\*New lint findings in the end state\* \(50\): warning · unanchored · /,
    );
    expect(file?.content).toContain('What lint would find in the end state and does not find now (50):');
    expect(renderedText({ ...planView(planned([]), 'defs.json') })).not.toContain('New lint findings');
  });
});

describe('the plan in Slack: the file name as written', () => {
  it('no mention, link or bidi control of the name reaches the message or its fallback text', () => {
    const evil = '<!channel> *defs* <http://x|y>\u202e.json';
    const view = planView(planned([]), evil);
    const all = `${view.text}\n${renderedText({ ...view })}`;
    expect(all).not.toContain('<!channel>');
    expect(all).not.toContain('<http://x|y>');
    expect(all).not.toContain('\u202e');
  });
});
