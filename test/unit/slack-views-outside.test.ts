import { describe, expect, it } from 'vitest';
import type { ChangeRecord } from '../../src/audit/types.ts';
import { outsideView } from '../../src/slack/views/outside.ts';
import { renderedText } from '../support/fakeSlack.ts';

const base: ChangeRecord = {
  id: 'o-0123456789abcdef0123',
  at: '2026-11-30T18:00:01.000Z',
  env: 'prod',
  vhost: '/',
  policy: 'orders-limit',
  operator: false,
  action: 'outside',
  actor: 'alice',
  detectedBy: 'events',
  appliedAt: '2026-11-30T18:00:00.123Z',
  before: { pattern: '^orders\\.', applyTo: 'queues', priority: 1, definition: { 'max-length': 10 } },
  after: {
    pattern: '^orders\\.',
    applyTo: 'queues',
    priority: 2,
    definition: { 'max-length': 20, 'message-ttl': 5 },
  },
  objects: [
    {
      name: 'orders.a',
      kind: 'classic',
      before: 'orders-limit',
      after: 'orders-limit',
      lost: {},
      gained: { 'message-ttl': 5 },
      changed: { 'max-length': { before: 10, after: 20 } },
    },
  ],
  unpredictable: 0,
  prev: '',
  hash: 'h',
};
const text = (r: ChangeRecord) => renderedText({ ...outsideView(r) });

describe('outsideView', () => {
  it.each([
    [
      'an edit seen by events',
      base,
      [
        'edited policy',
        '`alice`',
        'event exchange',
        '~ priority: 1  -&gt;  2',
        '~ definition.max-length: 10  -&gt;  20',
        '+ definition.message-ttl: (none)  -&gt;  5',
        'gained `message-ttl` `5`',
        '`o-0123456789abcdef0123`',
      ],
    ],
    [
      'a delete found by comparing',
      { ...base, actor: undefined, detectedBy: 'interval' as const, after: null, objects: [] },
      [
        'deleted policy',
        'not known',
        'on the interval',
        'does not say who',
        "No object's policy or values changed.",
      ],
    ],
    [
      'a create found at start, operator',
      { ...base, actor: undefined, detectedBy: 'start' as const, before: null, operator: true },
      ['created operator policy', 'while it was down', '~ pattern: (none)  -&gt;  ^orders'],
    ],
    [
      'an edit found once the event exchange was followed again',
      { ...base, actor: undefined, detectedBy: 'reconnect' as const },
      ['edited policy', 'not known', 'followed again', 'does not say who'],
    ],
  ])('%s', (_, record, parts) => {
    const t = text(record as ChangeRecord);
    for (const p of parts) expect(t).toContain(p);
  });

  it('escapes what users typed: names, actor, values', () => {
    const evil = '<!channel> *bold* <http://x|y>';
    const r = {
      ...base,
      policy: evil,
      actor: evil,
      vhost: evil,
      objects: [{ ...base.objects[0], name: evil }],
    } as ChangeRecord;
    const view = outsideView(r);
    const all = JSON.stringify(view);
    expect(all).not.toContain('<!channel>');
    expect(all).not.toContain('<http://x|y>');
    expect(view.text).not.toContain('<!channel>');
  });
});

describe('what an outside change did to the messages', () => {
  const totals = { messagesDeadLettered: 0, messagesLost: 20, queuesDeleted: 0, queuesRefusingPublishes: 0 };
  const detail = {
    totals,
    sampledAt: '2026-11-30T18:00:03.000Z',
    asOf: '2026-11-30T18:00:00.123Z',
    objects: [
      {
        name: 'orders.a',
        kind: 'classic' as const,
        now: null,
        impact: [
          {
            effect: 'drop' as const,
            messages: 20,
            fate: 'lost' as const,
            because: 'max-length' as const,
            limit: 10,
          },
        ],
      },
    ],
    count: 1,
    unknown: 0,
    notes: [],
  };

  it('the loss first, each object, and the numbers as of just before the change', () => {
    const t = text({ ...base, impact: totals, impactDetail: detail });
    expect(t).toContain(':rotating_light: *What it did to the messages — loss: 20 messages lost*');
    expect(t).toContain(
      '• `orders.a`: 20 messages removed at once and lost (max-length 10) — no dead-letter exchange',
    );
    expect(t).toContain(
      'sampled them just before 18:00:00 UTC, from its length history read at 18:00:03 UTC',
    );
  });

  it('nothing removed is said too', () => {
    const none = {
      ...detail,
      totals: { ...totals, messagesLost: 0 },
      objects: [],
      count: 0,
      asOf: undefined,
    };
    const t = text({ ...base, impact: none.totals, impactDetail: none });
    expect(t).toContain('What it did to the messages: none removed, no queue deleted or refusing publishes.');
    expect(t).toContain("Messages as the broker's statistics said at 18:00:03 UTC");
  });
});
