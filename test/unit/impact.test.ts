/**
 * The rules of immediate effect (src/policy/impact/impact.ts): the table as rows, and properties
 * over random queues and values. Each rule is proven by behaviour on the real brokers in
 * test/integration/impact.test.ts; here, the arithmetic and the bookkeeping around them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Hazard,
  type HazardInput,
  hazardsOf,
  type Impact,
  type ImpactInput,
  impactOf,
  impactTotals,
  type LiveQueue,
  losingQueues,
  lossGrew,
  maxAgeSeconds,
  removesData,
  type World,
} from '../../src/policy/impact/impact.ts';
import { deadLetteredOver, fullWithMissingDeadLetter, lostToMissingDeadLetter } from '../support/hazards.ts';

const WORLD: World = {
  exchanges: new Set(['dlx', 'ae', 'amq.direct']),
  upstreams: new Set(['up1']),
  upstreamSets: new Set(['set1']),
  links: new Set(['linked']),
};

const live = (ready: number, more: Partial<LiveQueue> = {}): LiveQueue => ({
  messages: ready + (more.unacked ?? 0),
  ready,
  unacked: 0,
  bytes: ready * 10,
  consumers: 0,
  idleSince: '2026-12-01T08:00:00.000Z',
  ...more,
});

const input = (more: Partial<ImpactInput>): ImpactInput => ({
  name: 'q',
  kind: 'classic',
  before: {},
  after: {},
  now: live(0),
  ...more,
});

describe('impactOf: the issue table', () => {
  it.each<[string, Partial<ImpactInput>, Impact[]]>([
    [
      'max-length 10 + existing dlx on 50 (classic)',
      { after: { 'max-length': 10, 'dead-letter-exchange': 'dlx' }, now: live(50) },
      [deadLetteredOver(10, 40, 'dlx')],
    ],
    [
      'max-length 10 + existing dlx on 50 (quorum)',
      { kind: 'quorum', after: { 'max-length': 10, 'dead-letter-exchange': 'dlx' }, now: live(50) },
      [deadLetteredOver(10, 40, 'dlx')],
    ],
    [
      'max-length 5 + missing dlx on 30',
      { after: { 'max-length': 5, 'dead-letter-exchange': 'no-such-dlx' }, now: live(30) },
      lostToMissingDeadLetter(25, 5, 'no-such-dlx'),
    ],
    [
      'expires 4000 on 5 messages, no consumer',
      { after: { expires: 4000 }, now: live(5) },
      [{ effect: 'delete', messages: 5, inMs: 4000, because: 'expires' }],
    ],
    [
      'expires 4000 with a consumer',
      { after: { expires: 4000 }, now: live(5, { consumers: 1 }) },
      [{ effect: 'delete-when-idle', inMs: 4000, consumers: 1, because: 'expires' }],
    ],
    [
      'message-ttl 2000 on 20 queued',
      { kind: 'quorum', after: { 'message-ttl': 2000 }, now: live(20) },
      [{ effect: 'ttl-from-now', ttlMs: 2000, because: 'message-ttl' }],
    ],
    [
      'a delete whose fallback caps lower',
      { before: { 'max-length': 100 }, after: { 'max-length': 10 }, now: live(60) },
      [{ effect: 'drop', messages: 50, fate: 'lost', because: 'max-length', limit: 10 }],
    ],
  ])('%s', (_, more, expected) => {
    expect(impactOf(input(more), WORLD)).toEqual(expected);
  });
});

describe('impactOf: overflow, bytes, targets and the slow rules', () => {
  it.each<[string, Partial<ImpactInput>, Impact[]]>([
    [
      'classic reject-publish: the excess trimmed at once, then publishers refused',
      { after: { 'max-length': 10, overflow: 'reject-publish' }, now: live(50) },
      [
        { effect: 'drop', messages: 40, fate: 'lost', because: 'max-length', limit: 10 },
        { effect: 'reject-publish', because: 'max-length', limit: 10 },
      ],
    ],
    [
      'quorum reject-publish: nothing removed, publishers refused',
      { kind: 'quorum', after: { 'max-length': 10, overflow: 'reject-publish' }, now: live(50) },
      [{ effect: 'reject-publish', because: 'max-length', limit: 10 }],
    ],
    [
      'quorum reject-publish below the limit: nothing yet',
      { kind: 'quorum', after: { 'max-length': 10, overflow: 'reject-publish' }, now: live(3) },
      [],
    ],
    [
      'quorum reject-publish-dlx (not implemented by quorum queues): trims like drop-head',
      {
        kind: 'quorum',
        after: { 'max-length': 10, overflow: 'reject-publish-dlx', 'dead-letter-exchange': 'dlx' },
        now: live(50),
      },
      [deadLetteredOver(10, 40, 'dlx')],
    ],
    [
      'max-length-bytes: the count from the mean size',
      { after: { 'max-length-bytes': 100 }, now: live(50) },
      [
        {
          effect: 'drop',
          messages: 40,
          fate: 'lost',
          because: 'max-length-bytes',
          limit: 100,
          estimated: true,
        },
      ],
    ],
    [
      'max-length-bytes over ready messages whose bytes read 0 (not reported yet): may drop, not nothing',
      { kind: 'quorum', after: { 'max-length-bytes': 1500 }, now: live(20, { bytes: 0 }) },
      [{ effect: 'may-drop', because: 'max-length-bytes', limit: 1500, fate: 'lost' }],
    ],
    [
      'both limits: the one that removes more',
      { after: { 'max-length': 30, 'max-length-bytes': 100 }, now: live(50) },
      [
        {
          effect: 'drop',
          messages: 40,
          fate: 'lost',
          because: 'max-length-bytes',
          limit: 100,
          estimated: true,
        },
      ],
    ],
    [
      'a limit raised: nothing',
      { before: { 'max-length': 10 }, after: { 'max-length': 20 }, now: live(10) },
      [],
    ],
    [
      'no statistics: may drop, no number',
      { after: { 'max-length': 10 }, now: null },
      [{ effect: 'may-drop', because: 'max-length', limit: 10, fate: 'lost' }],
    ],
    [
      'no statistics: expires is not counted',
      { after: { expires: 1000 }, now: null },
      [{ effect: 'delete-when-idle', inMs: 1000, consumers: null, because: 'expires' }],
    ],
    [
      'a limit and expires: the deletion counts what the limit left',
      { after: { 'max-length': 10, expires: 1000 }, now: live(50) },
      [
        { effect: 'drop', messages: 40, fate: 'lost', because: 'max-length', limit: 10 },
        { effect: 'delete', messages: 10, inMs: 1000, because: 'expires' },
      ],
    ],
    [
      'the default exchange is a dead-letter exchange that exists',
      { after: { 'max-length': 1, 'dead-letter-exchange': '' }, now: live(3) },
      [{ effect: 'drop', messages: 2, fate: 'dead-lettered', exchange: '', because: 'max-length', limit: 1 }],
    ],
    [
      'an exchange gains a missing alternate exchange',
      { kind: 'exchange', after: { 'alternate-exchange': 'nope' }, now: null },
      [{ effect: 'missing-target', key: 'alternate-exchange', target: 'nope' }],
    ],
    [
      'an existing alternate exchange: nothing',
      { kind: 'exchange', after: { 'alternate-exchange': 'ae' }, now: null },
      [],
    ],
    [
      'a missing upstream and upstream set',
      { kind: 'exchange', after: { 'federation-upstream': 'up9' }, now: null },
      [{ effect: 'missing-target', key: 'federation-upstream', target: 'up9' }],
    ],
    [
      'a dead-letter exchange lost on a queue with messages',
      { before: { 'dead-letter-exchange': 'dlx' }, after: {}, now: live(7) },
      [{ effect: 'dead-letter-lost', messages: 7, exchange: 'dlx' }],
    ],
    [
      'a dead-letter exchange lost on an empty queue: nothing',
      { before: { 'dead-letter-exchange': 'dlx' } },
      [],
    ],
    [
      'federation lost where a link runs',
      { name: 'linked', kind: 'exchange', before: { 'federation-upstream-set': 'all' }, now: null },
      [{ effect: 'link-stops', key: 'federation-upstream-set', upstream: 'all' }],
    ],
    [
      'a stream retention lowered: may remove, not now',
      { kind: 'stream', before: { 'max-age': '7D' }, after: { 'max-age': '1h' }, now: live(50) },
      [{ effect: 'may-remove', because: 'max-age', value: '1h' }],
    ],
    [
      'a quorum delivery limit lowered from 4.0s default',
      { kind: 'quorum', after: { 'delivery-limit': 3 }, defaultDeliveryLimit: 20 },
      [{ effect: 'delivery-limit-lowered', limit: 3, was: 20 }],
    ],
  ])('%s', (_, more, expected) => {
    expect(impactOf(input(more), WORLD)).toEqual(expected);
  });

  it('reads max-age as the broker writes it', () => {
    expect(maxAgeSeconds('7D')).toBe(604_800);
    expect(maxAgeSeconds('1Y')).toBe(31_536_000);
    expect(maxAgeSeconds('90s')).toBe(90);
    expect(maxAgeSeconds('7 days')).toBeUndefined();
  });
});

// --- properties ---------------------------------------------------------------------------

const values = fc.record(
  {
    'max-length': fc.nat(100),
    'max-length-bytes': fc.nat(1000),
    overflow: fc.constantFrom('drop-head', 'reject-publish', 'reject-publish-dlx'),
    'dead-letter-exchange': fc.constantFrom('dlx', 'missing', ''),
    expires: fc.integer({ min: 1, max: 10_000 }),
    'message-ttl': fc.nat(10_000),
  },
  { requiredKeys: [] },
);
const now = fc.option(
  fc
    .record({
      ready: fc.nat(200),
      unacked: fc.nat(20),
      size: fc.integer({ min: 1, max: 50 }),
      consumers: fc.nat(3),
    })
    .map(({ ready, unacked, size, consumers }) => live(ready, { unacked, bytes: ready * size, consumers })),
  { nil: null },
);
const queue = fc.record({
  kind: fc.constantFrom('classic' as const, 'quorum' as const),
  before: values,
  after: values,
  now,
});

describe('impactOf: properties', () => {
  it('removes no more than the queue holds, and counts nothing without statistics', () => {
    fc.assert(
      fc.property(queue, (q) => {
        const impact = impactOf(input(q), WORLD);
        const t = impactTotals([impact]);
        const removed = t.messagesDeadLettered + t.messagesLost;
        if (q.now === null) expect(removed + t.queuesDeleted).toBe(0);
        else expect(removed).toBeLessThanOrEqual(q.now.messages);
      }),
    );
  });

  it('a change that changes nothing does nothing', () => {
    fc.assert(
      fc.property(queue, (q) => {
        expect(impactOf(input({ ...q, after: q.before }), WORLD)).toEqual([]);
      }),
    );
  });

  it('a lower max-length never removes fewer messages', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('classic' as const, 'quorum' as const),
        fc.nat(100),
        fc.nat(100),
        fc.nat(200),
        (kind, a, b, ready) => {
          const removedAt = (limit: number) =>
            impactTotals([impactOf(input({ kind, after: { 'max-length': limit }, now: live(ready) }), WORLD)])
              .messagesLost;
          const [low, high] = a < b ? [a, b] : [b, a];
          expect(removedAt(low)).toBeGreaterThanOrEqual(removedAt(high));
          expect(removedAt(low)).toBe(Math.max(0, ready - low));
        },
      ),
    );
  });

  it('a quorum queue with reject-publish never loses a message to a limit', () => {
    fc.assert(
      fc.property(queue, (q) => {
        const after = { ...q.after, overflow: 'reject-publish' };
        const impact = impactOf(input({ ...q, kind: 'quorum', after }), WORLD);
        expect(impact.some((x) => x.effect === 'drop' || x.effect === 'may-drop')).toBe(false);
      }),
    );
  });

  it('removed messages are dead-lettered exactly when the dead-letter exchange exists', () => {
    fc.assert(
      fc.property(queue, (q) => {
        for (const x of impactOf(input(q), WORLD)) {
          if (x.effect !== 'drop') continue;
          const dlx = q.after['dead-letter-exchange'];
          expect(x.fate).toBe(dlx === 'dlx' || dlx === '' ? 'dead-lettered' : 'lost');
        }
      }),
    );
  });
});

describe('the loss an approval accepts', () => {
  const loss = (lost: number, queues: string[]) => ({
    totals: { messagesDeadLettered: 0, messagesLost: lost, queuesDeleted: 0, queuesRefusingPublishes: 0 },
    queues,
  });
  it('grows with more messages or another queue, not with fewer', () => {
    expect(lossGrew(loss(25, ['a']), loss(26, ['a']))).toBe(true);
    expect(lossGrew(loss(25, ['a']), loss(25, ['a', 'b']))).toBe(true);
    expect(lossGrew(loss(25, ['a']), loss(20, ['a']))).toBe(false);
    expect(lossGrew(loss(25, ['a', 'b']), loss(25, ['b']))).toBe(false);
  });
  it('names the queues that lose messages or go', () => {
    const d: Impact = { effect: 'delete', messages: 0, inMs: 1, because: 'expires' };
    const r: Impact = { effect: 'reject-publish', because: 'max-length', limit: 1 };
    expect(
      losingQueues([
        { name: 'a', impact: [d] },
        { name: 'b', impact: [r] },
      ]),
    ).toEqual(['a']);
    expect(removesData(impactTotals([[d]]))).toBe(true);
    expect(removesData(impactTotals([[r]]))).toBe(false);
  });
});

describe('hazardsOf: what threatens an object as it stands (which)', () => {
  const AT = Date.parse('2026-12-01T12:00:00.000Z');
  const h = (more: Partial<HazardInput>): HazardInput => ({
    kind: 'classic',
    values: {},
    now: live(0),
    at: AT,
    ...more,
  });
  it.each<[string, Partial<HazardInput>, Hazard[]]>([
    ['nothing set', { now: live(30) }, []],
    [
      'at max-length with drop-head and a missing dead-letter exchange: the oldest pushed out, lost',
      { values: { 'max-length': 5, 'dead-letter-exchange': 'no-such-dlx' }, now: live(5) },
      fullWithMissingDeadLetter(5, 'no-such-dlx'),
    ],
    [
      'below its limit: nothing',
      { values: { 'max-length': 5, 'dead-letter-exchange': 'dlx' }, now: live(4) },
      [],
    ],
    [
      'at max-length with reject-publish (quorum): refused, the publisher keeps the message',
      { kind: 'quorum', values: { 'max-length': 10, overflow: 'reject-publish' }, now: live(50) },
      [
        {
          effect: 'full',
          because: 'max-length',
          limit: 10,
          overflow: 'reject-publish',
          refused: true,
          dropped: null,
        },
      ],
    ],
    [
      'quorum reject-publish at exactly its limit: the next message is taken, then refused (measured)',
      { kind: 'quorum', values: { 'max-length': 3, overflow: 'reject-publish' }, now: live(3) },
      [
        {
          effect: 'full',
          because: 'max-length',
          limit: 3,
          overflow: 'reject-publish',
          refused: false,
          dropped: null,
        },
      ],
    ],
    [
      'classic reject-publish-dlx at its limit: refused and dead-lettered',
      {
        values: { 'max-length-bytes': 100, overflow: 'reject-publish-dlx', 'dead-letter-exchange': 'dlx' },
        now: live(10),
      },
      [
        {
          effect: 'full',
          because: 'max-length-bytes',
          limit: 100,
          overflow: 'reject-publish-dlx',
          refused: true,
          dropped: 'dead-lettered',
          exchange: 'dlx',
        },
      ],
    ],
    [
      'quorum reject-publish-dlx (not implemented by quorum queues): the oldest pushed out',
      { kind: 'quorum', values: { 'max-length': 3, overflow: 'reject-publish-dlx' }, now: live(3) },
      [
        {
          effect: 'full',
          because: 'max-length',
          limit: 3,
          overflow: 'reject-publish-dlx',
          refused: false,
          dropped: 'lost',
        },
      ],
    ],
    [
      'idle with expires: deleted with its messages, by the reading plus expires at the latest',
      { values: { expires: 4000 }, now: live(5) },
      [{ effect: 'expires-idle', messages: 5, inMs: 4000, by: '2026-12-01T12:00:04.000Z' }],
    ],
    [
      'expires with a consumer: after the last one leaves',
      { values: { expires: 4000 }, now: live(5, { consumers: 2 }) },
      [{ effect: 'expires-when-unused', inMs: 4000, consumers: 2 }],
    ],
    [
      'no statistics: no limit claimed, consumers unknown',
      { values: { expires: 4000, 'max-length': 1 }, now: null },
      [{ effect: 'expires-when-unused', inMs: 4000, consumers: null }],
    ],
    [
      'an exchange whose alternate exchange and upstream do not exist',
      {
        kind: 'exchange',
        values: { 'alternate-exchange': 'gone', 'federation-upstream': 'nope' },
        now: null,
      },
      [
        { effect: 'missing-target', key: 'alternate-exchange', target: 'gone' },
        { effect: 'missing-target', key: 'federation-upstream', target: 'nope' },
      ],
    ],
    [
      'the default exchange and the set "all" are always there',
      { values: { 'dead-letter-exchange': '', 'federation-upstream-set': 'all' } },
      [],
    ],
  ])('%s', (_, more, expected) => {
    expect(hazardsOf(h(more), WORLD)).toEqual(expected);
  });

  it('impactOf agrees: a quorum queue put at exactly its reject-publish limit is not yet refusing', () => {
    const after = { 'max-length': 3, overflow: 'reject-publish' };
    expect(impactOf(input({ kind: 'quorum', after, now: live(3) }), WORLD)).toEqual([]);
    expect(impactOf(input({ kind: 'classic', after, now: live(3) }), WORLD)).toEqual([
      { effect: 'reject-publish', because: 'max-length', limit: 3 },
    ]);
  });

  it('targets not read are not claimed missing', () => {
    const unknown: World = { exchanges: null, upstreams: null, upstreamSets: null, links: null };
    expect(
      hazardsOf(h({ values: { 'dead-letter-exchange': 'x', 'federation-upstream': 'y' } }), unknown),
    ).toEqual([]);
  });
});
