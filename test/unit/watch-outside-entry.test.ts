import { describe, expect, it } from 'vitest';
import { AuditRecordSchema } from '../../src/audit/types.ts';
import { outsideEntry } from '../../src/watch/outside.ts';
import type { OutsideChange } from '../../src/watch/watcher.ts';

const before = {
  vhost: 'v',
  name: 'limits',
  pattern: '^orders',
  applyTo: 'queues',
  priority: 1,
  definition: { 'max-length': 10 },
};
const after = { ...before, definition: { 'max-length': 20 } };
const change = (over: Partial<OutsideChange>): OutsideChange => ({
  env: 'prod',
  layer: 'user',
  vhost: 'v',
  name: 'limits',
  before,
  after,
  actor: 'alice',
  source: 'events',
  at: new Date('2026-11-30T18:00:00.123Z'),
  ...over,
});
const effect = {
  objects: [
    {
      name: 'orders.a',
      kind: 'classic' as const,
      before: { policy: 'limits' },
      after: { policy: 'limits' },
      lost: {},
      gained: {},
      changed: { 'max-length': [10, 20] as [unknown, unknown] },
      unchangedLayer: { layer: 'operator' as const, policy: null, source: 'engine' as const },
      heldBy: { 'max-length': 'policy' as const },
      inUse: { before: { 'max-length': 10 }, after: { 'max-length': 20 } },
      risks: [],
      now: null,
      impact: [],
    },
  ],
  unpredictable: [{ name: 'odd', kind: 'x', why: 'unknown type' }],
  unanchoredCatch: null,
  scanned: { queues: 2, exchanges: 0 },
  impact: {
    totals: { messagesDeadLettered: 0, messagesLost: 0, queuesDeleted: 0, queuesRefusingPublishes: 0 },
    queues: [],
    sampledAt: '2026-11-30T18:00:01.000Z',
    asOf: '2026-11-30T18:00:00.123Z',
    objects: [],
    count: 0,
    unknown: 1,
    notes: [],
  },
};

describe('the out-of-band record', () => {
  it('carries the actor, how it was caught, before and after, and each object as the trail keeps it', () => {
    const e = outsideEntry(change({}), effect, new Date('2026-11-30T18:00:01Z'));
    expect(e).toMatchObject({
      action: 'outside',
      env: 'prod',
      vhost: 'v',
      policy: 'limits',
      operator: false,
      actor: 'alice',
      detectedBy: 'events',
      at: '2026-11-30T18:00:01.000Z',
      appliedAt: '2026-11-30T18:00:00.123Z',
      before: { pattern: '^orders', applyTo: 'queues', priority: 1, definition: { 'max-length': 10 } },
      after: { definition: { 'max-length': 20 } },
      objects: [
        {
          name: 'orders.a',
          before: 'limits',
          after: 'limits',
          changed: { 'max-length': { before: 10, after: 20 } },
        },
      ],
      unpredictable: 1,
    });
    // What it did to the messages: the totals, and the summary without the list of losing queues.
    expect(e.impact).toEqual(effect.impact.totals);
    expect(e.impactDetail).toEqual({
      totals: effect.impact.totals,
      sampledAt: '2026-11-30T18:00:01.000Z',
      asOf: '2026-11-30T18:00:00.123Z',
      objects: [],
      count: 0,
      unknown: 1,
      notes: [],
    });
    expect(e).not.toHaveProperty('requester');
    expect(e).not.toHaveProperty('approver');
    expect(e.id).toMatch(/^o-[0-9a-f]{20}$/);
    expect(AuditRecordSchema.parse({ ...e, prev: '', hash: 'h' })).toMatchObject({
      detectedBy: 'events',
      actor: 'alice',
    });
  });

  it('found by comparing: no actor, and says how it was found', () => {
    const e = outsideEntry(
      change({ actor: null, source: 'interval', after: null, layer: 'operator' }),
      undefined,
      new Date(),
    );
    expect(e).not.toHaveProperty('actor');
    expect(e).toMatchObject({ detectedBy: 'interval', operator: true, after: null, objects: [] });
  });
});
