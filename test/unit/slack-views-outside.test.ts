import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/audit/types.ts';
import { outsideView } from '../../src/slack/views/outside.ts';
import { renderedText } from '../support/fakeSlack.ts';

const base: AuditRecord = {
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
const text = (r: AuditRecord) => renderedText({ ...outsideView(r) });

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
    const t = text(record as AuditRecord);
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
    } as AuditRecord;
    const view = outsideView(r);
    const all = JSON.stringify(view);
    expect(all).not.toContain('<!channel>');
    expect(all).not.toContain('<http://x|y>');
    expect(view.text).not.toContain('<!channel>');
  });
});
