/**
 * The `--at` views, pure: the terminal says the instant in UTC ISO and that the answer is
 * recomputed from the trail; Slack writes every instant with its date formatting (each reader's
 * own time zone); unknown before the first snapshot and inside a gap (with what it was at the
 * gap's edges); the changes around the instant listed, nearest first, as made.
 */
import { describe, expect, it } from 'vitest';
import type { PoliciesAtResult, WhichAtResult } from '../../src/commands/at/index.ts';
import { policiesAtView, whichAtView } from '../../src/slack/views/at.ts';
import { historyView } from '../../src/slack/views/history.ts';
import { policiesAtText, whichAtText } from '../../src/terminal/at.ts';
import { historyText } from '../../src/terminal/history.ts';

const AT = '2026-12-04T03:12:00.000Z';
const base: WhichAtResult = {
  object: { vhost: '/', name: 'orders.audit', kind: 'classic', exists: true, kindAssumed: false },
  answer: 'not-reported',
  brokerVersion: '3.13.7',
  inForce: {
    name: 'audit-fallback',
    pattern: '^orders\\.',
    applyTo: 'queues',
    priority: 1,
    definition: { 'message-ttl': 60000 },
    unanchored: false,
  },
  operatorPolicy: null,
  effective: { 'message-ttl': { value: 60000, from: 'policy' } },
  alsoMatched: [],
  unreadable: [],
  nothingGoverns: false,
  ambiguous: false,
  disagreements: [],
  hazards: [],
  at: AT,
  atWritten: '03:12',
  atForm: 'today',
  source: 'trail',
  known: true,
  gap: null,
  replayedFrom: '2026-12-04T01:00:00.000Z',
  kindFrom: 'now',
  around: [
    {
      at: '2026-12-04T03:20:00.000Z',
      action: 'outside',
      policy: 'audit-retention',
      vhost: '/',
      operator: false,
      who: 'alice',
      outside: true,
      before: { pattern: '^orders\\.audit$', applyTo: 'queues', priority: 10, definition: {} },
      after: null,
      id: 'o-1',
    },
  ],
};
const slackText = (m: { blocks: unknown[] }) => JSON.stringify(m.blocks);

describe('which --at', () => {
  it('the terminal: the instant in UTC, recomputed, the answer, the changes around', () => {
    const text = whichAtText(base);
    expect(text).toContain(
      `At ${AT} (03:12 is today, UTC), recomputed from the trail; the broker cannot be asked about the past.`,
    );
    expect(text, "which's answer keeps its lines").not.toContain('\\n');
    expect(text.split('\n')).toEqual(
      expect.arrayContaining([
        '(as a classic queue, its kind now)',
        '  In force: audit-fallback — pattern "^orders\\.", apply-to queues, priority 1',
        '  2026-12-04T03:20:00.000Z  deleted policy "audit-retention", outside the bot by "alice"',
        '    had set pattern "^orders\\.audit$", apply-to queues, priority 10',
      ]),
    );
  });

  it('each change around says what it changed, in the terminal and in Slack', () => {
    const edit = {
      ...base.around[0],
      action: 'edit',
      outside: false,
      who: 'U0ONCALL',
      before: {
        pattern: '^orders\\.audit$',
        applyTo: 'queues',
        priority: 10,
        definition: { 'max-length': 5 },
      },
      after: { pattern: '^orders\\.', applyTo: 'all', priority: 10, definition: { 'message-ttl': 9 } },
    } as WhichAtResult['around'][number];
    const r = { ...base, around: [edit] };
    expect(whichAtText(r)).toContain(
      '    pattern "^orders\\.audit$" -> "^orders\\.", apply-to queues -> all, max-length 5 -> (none), message-ttl (none) -> 9',
    );
    expect(slackText(whichAtView(r))).toContain('`max-length` `5` -> (none)');
  });

  it('the broker not asked what the object is now: its kind not known, never said missing', () => {
    const r: WhichAtResult = {
      ...base,
      object: { ...base.object, exists: false, kindAssumed: true },
      kindFrom: 'not-asked',
    };
    const text = whichAtText(r);
    expect(text).toContain('The broker could not be asked what it is now');
    expect(text).not.toContain('exists');
    expect(text).not.toContain('In force:');
    const slack = slackText(whichAtView(r));
    expect(slack).toContain('The broker could not be asked what it is now');
    expect(slack).not.toContain('exists');
  });

  it('Slack: every instant in its date formatting', () => {
    const text = slackText(whichAtView(base));
    expect(text).toContain(`<!date^${Date.parse(AT) / 1000}^{date_short_pretty} {time}|${AT}>`);
    expect(text).toContain('recomputed from the trail');
    expect(text).toContain(`<!date^${Date.parse('2026-12-04T03:20:00.000Z') / 1000}^`);
  });

  it('before the first snapshot: the bot was not watching, unknown', () => {
    const r: WhichAtResult = {
      ...base,
      known: false,
      unknownBecause: 'not-watching',
      inForce: null,
      effective: {},
      watchedSince: '2026-12-04T05:00:00.000Z',
      around: [],
    };
    const text = whichAtText(r);
    expect(text).toContain(`At ${AT} (03:12 is today, UTC): unknown.`);
    expect(text).toContain(
      'The bot was not watching: unknown. It has watched this environment since 2026-12-04T05:00:00.000Z.',
    );
    expect(text).not.toContain('In force');
    expect(slackText(whichAtView(r))).toContain('The bot was not watching: unknown.');
  });

  it('inside a gap: unknown between A and B, with what it was at each', () => {
    const gap = { from: '2026-12-04T03:00:00.000Z', to: '2026-12-04T03:30:00.000Z' };
    const r: WhichAtResult = {
      ...base,
      known: false,
      unknownBecause: 'gap',
      gap,
      inForce: null,
      edges: {
        from: {
          at: gap.from,
          known: true,
          inForce: 'audit-retention',
          operatorPolicy: null,
          effective: { 'max-length': 5 },
        },
        to: { at: gap.to, known: true, inForce: 'audit-fallback', operatorPolicy: null, effective: {} },
      },
    };
    const text = whichAtText(r);
    expect(text).toContain(`Unknown between ${gap.from} and ${gap.to}: the bot was not watching`);
    expect(text).toContain(`At the gap's start, ${gap.from}: audit-retention; max-length=5`);
    expect(text).toContain(`At its end, ${gap.to}: audit-fallback`);
    const slack = slackText(whichAtView(r));
    expect(slack).toContain(`Unknown between <!date^${Date.parse(gap.from) / 1000}^`);
    expect(slack).toContain('`audit-retention` (`max-length`=`5`)');
  });
});

describe('policies --at', () => {
  const listed: PoliciesAtResult = {
    vhost: '/',
    answer: 'listed',
    brokerVersion: '3.13.7',
    policies: [
      {
        name: 'audit-fallback',
        pattern: '^orders\\.',
        applyTo: 'queues',
        priority: 1,
        definition: {},
        unanchored: false,
        tie: false,
      },
    ],
    operatorPolicies: [],
    at: AT,
    atWritten: AT,
    atForm: 'iso',
    source: 'trail',
    known: true,
    gap: null,
    around: [],
  };

  it("lists the policies then, and the vhost's changes around", () => {
    const text = policiesAtText(listed);
    expect(text).toContain(`At ${AT}, recomputed from the trail`);
    expect(text).toContain('audit-fallback');
    expect(text).toContain("No change to the vhost's policies in the hour either side.");
    expect(slackText(policiesAtView(listed))).toContain('audit-fallback');
  });
});

describe('history lists snapshots and gaps', () => {
  const snapshot = {
    id: 's-lab-1',
    at: '2026-12-04T01:00:00.000Z',
    env: 'lab',
    prev: '',
    hash: 'h1',
    action: 'snapshot' as const,
    why: 'first' as const,
    vhosts: null,
    version: '3.13.7',
    policies: [
      { vhost: '/', name: 'a', pattern: '^a', applyTo: 'queues', priority: 0, definition: {} },
      { vhost: '/', name: 'b', pattern: '^b', applyTo: 'queues', priority: 0, definition: {} },
    ],
    operatorPolicies: [],
  };
  const gap = {
    id: 'g-lab-1-2',
    at: '2026-12-04T03:30:00.000Z',
    env: 'lab',
    prev: 'h1',
    hash: 'h2',
    action: 'gap' as const,
    from: '2026-12-04T03:00:00.000Z',
    to: '2026-12-04T03:30:00.000Z',
  };

  it('in the terminal and in Slack, the gap with its instants as each surface writes them', () => {
    const text = historyText({ entries: [gap, snapshot], unreadable: 0 });
    expect(text).toContain('snapshot of lab');
    expect(text).toContain('2 policies and 0 operator policies of every vhost');
    expect(text).toContain(`not watched from ${gap.from} to ${gap.to}`);
    const slack = JSON.stringify(historyView({ entries: [gap, snapshot], unreadable: 0 }));
    expect(slack).toContain(`not watched from <!date^${Date.parse(gap.from) / 1000}^`);
  });

  it("a change found at the gap's end: made at some moment of it, not when it was noticed", () => {
    const found = {
      id: 'o-found',
      at: '2026-12-04T03:30:01.000Z',
      env: 'lab',
      prev: 'h2',
      hash: 'h3',
      vhost: '/',
      policy: 'audit-retention',
      operator: false,
      action: 'outside' as const,
      detectedBy: 'start' as const,
      between: { from: gap.from, to: gap.to },
      before: null,
      after: { pattern: '^a', applyTo: 'queues', priority: 0, definition: {} },
      objects: [],
      unpredictable: 0,
    };
    expect(historyText({ entries: [found], unreadable: 0 })).toContain(
      `  made at a moment not known between ${gap.from} and ${gap.to}`,
    );
    expect(JSON.stringify(historyView({ entries: [found], unreadable: 0 }))).toContain(
      `made at a moment not known between <!date^${Date.parse(gap.from) / 1000}^`,
    );
  });
});
