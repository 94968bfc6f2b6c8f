/**
 * The durability rules (src/policy/durability/): the verdict per failure of one chain, and
 * `lint`'s durability kinds over the same facts, as rows and as properties over random chains.
 * Each verdict is proven by making the failure happen on the real brokers in
 * test/integration/path-failures.test.ts; here, the bookkeeping: null never read as 0, a verdict
 * that holds loses nothing, `path` and `lint` never disagree.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bindingsRoute,
  type Chain,
  type ConsumerFacts,
  type DeadLetterFacts,
  DurabilityLint,
  deliveryLimitOf,
  type ExchangeFacts,
  FAILURES,
  failuresFirst,
  poisonOf,
  type QueueFacts,
  survives,
  topicMatches,
  transientOf,
} from '../../src/policy/durability/index.ts';
import type { BrokerVersion } from '../../src/policy/types.ts';

const V3: BrokerVersion = { major: 3, minor: 10, patch: 8 };
const V4: BrokerVersion = { major: 4, minor: 0, patch: 5 };
const V43: BrokerVersion = { major: 4, minor: 3, patch: 6 };
const name = (s: string) => `"${s}"`;

const queue = (q: Partial<QueueFacts> = {}): QueueFacts => ({
  name: 'q',
  type: 'classic',
  kind: 'classic',
  durable: true,
  exclusive: false,
  messages: 0,
  persistent: 0,
  members: null,
  online: null,
  nodeDown: false,
  values: {},
  reportedDeliveryLimit: null,
  ...q,
});
const exchange = (x: Partial<ExchangeFacts> = {}): ExchangeFacts => ({
  name: 'x',
  durable: true,
  routesEvery: false,
  alternateExchange: null,
  alternateExists: null,
  alternateRoutes: null,
  unrouted: null,
  ...x,
});
const NO_DL: DeadLetterFacts = { exchange: null, exists: null, routes: null };
const NO_CONSUMERS: ConsumerFacts = { consumers: 0, autoAck: 0, unlimitedPrefetch: 0 };

const chain = (c: Partial<Chain> = {}): Chain => ({
  version: V4,
  object: { name: 'q', kind: 'queue' },
  exchanges: [exchange({ name: '' })],
  publishers: { channels: 0, confirming: 0 },
  queue: queue(),
  deadLetter: NO_DL,
  consumers: NO_CONSUMERS,
  nodes: 1,
  ...c,
});

describe('a restart', () => {
  it('loses the transient messages of a durable classic queue', () => {
    const v = survives(chain({ queue: queue({ messages: 40, persistent: 10 }) }), name).restart;
    expect(v).toMatchObject({ holds: false, lost: 30 });
    expect(v.why).toContain('30 transient messages of 40');
  });
  it('loses a non-durable queue with all it holds', () => {
    expect(
      survives(chain({ queue: queue({ durable: false, messages: 7, persistent: 7 }) }), name).restart,
    ).toMatchObject({
      holds: false,
      lost: 7,
    });
  });
  it('keeps every message of a quorum queue', () => {
    const q = queue({ kind: 'quorum', type: 'quorum', messages: 4, persistent: 4 });
    expect(survives(chain({ queue: q }), name).restart).toMatchObject({ holds: true, lost: 0 });
  });
  it('does not hold when a transient exchange carries the route, though the messages stay', () => {
    const v = survives(
      chain({
        exchanges: [exchange({ name: 'in', durable: false })],
        queue: queue({ messages: 3, persistent: 3 }),
      }),
      name,
    ).restart;
    expect(v).toMatchObject({ holds: false, lost: 0 });
    expect(v.why).toContain('"in" is transient');
  });
  it('holds through a transient exchange on 4.3, which keeps it and its bindings at a restart (not on 4.0)', () => {
    const through = (version: BrokerVersion, object: Chain['object'] = { name: 'q', kind: 'queue' }) =>
      survives(
        chain({
          version,
          object,
          exchanges: [exchange({ name: 'in', durable: false })],
          queue: object.kind === 'queue' ? queue({ messages: 3, persistent: 3 }) : null,
        }),
        name,
      ).restart;
    expect(through(V43)).toMatchObject({ holds: true, lost: 0 });
    expect(through(V43).why).toContain('"in" is transient, and this version keeps it at a restart');
    expect(through(V4)).toMatchObject({ holds: false, lost: 0 });
    expect(through(V43, { name: 'in', kind: 'exchange' })).toMatchObject({ holds: true, lost: 0 });
    expect(through(V4, { name: 'in', kind: 'exchange' })).toMatchObject({ holds: false, lost: 0 });
  });
  it('says unknown, not 0, when the broker reports no persistent count', () => {
    expect(
      survives(chain({ queue: queue({ messages: null, persistent: null }) }), name).restart,
    ).toMatchObject({
      holds: null,
      lost: null,
    });
  });
});

describe('the loss of a node', () => {
  const qq = (members: number, online: number) =>
    chain({ queue: queue({ kind: 'quorum', type: 'quorum', members, online }) });
  it('holds with three replicas online, not with two or one', () => {
    expect(survives(qq(3, 3), name)['node-loss'].holds).toBe(true);
    expect(survives(qq(2, 2), name)['node-loss'].holds).toBe(false);
    expect(survives(qq(3, 2), name)['node-loss'].holds).toBe(false);
    expect(survives(qq(5, 4), name)['node-loss'].holds).toBe(true);
  });
});

describe('a consumer crash', () => {
  it('loses what an automatic-acknowledgement consumer holds, a count the broker does not give', () => {
    const v = survives(chain({ consumers: { consumers: 2, autoAck: 1, unlimitedPrefetch: 0 } }), name)[
      'consumer-crash'
    ];
    expect(v).toMatchObject({ holds: false, lost: null });
  });
  it('with a delivery limit of 0, loses what a manual consumer held: its one return is past the limit', () => {
    // Measured: test/integration/path-differential.test.ts (a crash's return counts on every version).
    const manual = { consumers: 1, autoAck: 0, unlimitedPrefetch: 0 };
    const crash = (values: Record<string, unknown>, dl: DeadLetterFacts, version = V4) =>
      survives(
        chain({
          version,
          queue: queue({ kind: 'quorum', type: 'quorum', values }),
          deadLetter: dl,
          consumers: manual,
        }),
        name,
      )['consumer-crash'];
    const v = crash({ 'delivery-limit': 0 }, NO_DL);
    expect(v).toMatchObject({ holds: false, lost: null });
    expect(v.why).toContain('a delivery limit of 0');
    // Below 0 is the same before 4.0; from 4.0 it is no limit.
    expect(crash({ 'delivery-limit': -1 }, NO_DL, V3).holds).toBe(false);
    expect(crash({ 'delivery-limit': -1 }, NO_DL, V4).holds).toBe(true);
    const dl = { exchange: 'dlx', exists: true, routes: true };
    expect(crash({ 'delivery-limit': 0, 'dead-letter-exchange': 'dlx' }, dl)).toMatchObject({
      holds: true,
      lost: 0,
    });
    expect(crash({ 'delivery-limit': 0 }, { ...dl, routes: null }).holds).toBeNull();
    expect(crash({ 'delivery-limit': 1 }, NO_DL)).toMatchObject({ holds: true, lost: 0 });
    // Beside an automatic consumer, both are said.
    const both = survives(
      chain({
        queue: queue({ kind: 'quorum', type: 'quorum', values: { 'delivery-limit': 0 } }),
        consumers: { consumers: 2, autoAck: 1, unlimitedPrefetch: 0 },
      }),
      name,
    )['consumer-crash'];
    expect(both.holds).toBe(false);
    expect(both.why).toContain('acknowledges automatically');
    expect(both.why).toContain('a delivery limit of 0');
  });
  it('is unknown when the consumers are not reported', () => {
    const v = survives(
      chain({ consumers: { consumers: null, autoAck: null, unlimitedPrefetch: null } }),
      name,
    )['consumer-crash'];
    expect(v.holds).toBeNull();
  });
});

describe('an unroutable publish', () => {
  it('is dropped without an alternate exchange, kept with one that exists', () => {
    expect(
      survives(chain({ exchanges: [exchange({ name: 'in', unrouted: 2 })] }), name).unroutable.holds,
    ).toBe(false);
    const ae = exchange({
      name: 'in',
      alternateExchange: 'ae',
      alternateExists: true,
      alternateRoutes: true,
    });
    expect(survives(chain({ exchanges: [ae] }), name).unroutable.holds).toBe(true);
    const missing = exchange({ name: 'in', alternateExchange: 'ae', alternateExists: false });
    expect(survives(chain({ exchanges: [missing] }), name).unroutable.holds).toBe(false);
  });
  it('is dropped by an alternate exchange that routes nowhere, unknown by one that routes by key', () => {
    // Measured: test/integration/path-differential.test.ts (an alternate exchange without a binding that matches).
    const nowhere = exchange({
      name: 'in',
      alternateExchange: 'ae',
      alternateExists: true,
      alternateRoutes: false,
    });
    const v = survives(chain({ exchanges: [nowhere] }), name).unroutable;
    expect(v).toMatchObject({ holds: false, lost: null });
    expect(v.why).toContain('no alternate exchange that routes anywhere');
    const byKey = exchange({
      name: 'in',
      alternateExchange: 'ae',
      alternateExists: true,
      alternateRoutes: null,
    });
    const u = survives(chain({ exchanges: [byKey] }), name).unroutable;
    expect(u).toMatchObject({ holds: null, lost: null });
    expect(u.why).toContain('by key');
  });
});

describe('routing by bindings', () => {
  it.each([
    ['fanout', ['x'], null, true],
    ['topic', ['a.*', '#'], null, true],
    ['topic', ['a.*'], null, null],
    ['topic', ['a.*'], 'a.b', true],
    ['topic', ['a.*'], 'a.b.c', false],
    ['topic', ['a.#'], 'a', true],
    ['direct', ['a'], null, null],
    ['direct', ['a'], 'a', true],
    ['direct', ['a'], 'b', false],
    ['direct', [], null, false],
    ['headers', ['x'], 'a', null],
  ] as const)('a %s exchange bound with %j routes a message keyed %s: %s', (type, keys, key, routes) => {
    expect(bindingsRoute(type, keys, key)).toBe(routes);
  });
  it('reads topic patterns as the broker does', () => {
    expect(topicMatches('#', '')).toBe(true);
    expect(topicMatches('a.#.b', 'a.b')).toBe(true);
    expect(topicMatches('a.#.b', 'a.x.y.b')).toBe(true);
    expect(topicMatches('*.b', 'b')).toBe(false);
  });
});

describe('a poison message', () => {
  const qq = (values: Record<string, unknown>, dl: DeadLetterFacts, version = V4) =>
    chain({ version, queue: queue({ kind: 'quorum', type: 'quorum', values }), deadLetter: dl });
  it('from 4.0 is dropped at 20 without a dead-letter target, dead-lettered with one', () => {
    expect(survives(qq({}, NO_DL), name).poison).toMatchObject({ holds: false });
    expect(survives(qq({}, NO_DL), name).poison.why).toContain('returned 20 times');
    const dl = { exchange: 'dlx', exists: true, routes: true };
    expect(survives(qq({ 'dead-letter-exchange': 'dlx' }, dl), name).poison.holds).toBe(true);
  });
  it("is unknown where the dead-letter target routes by the message's key", () => {
    // Measured: test/integration/path-differential.test.ts (a direct target whose binding missed the key: dropped).
    const dl = { exchange: 'dlx', exists: true, routes: null };
    expect(poisonOf(queue({ kind: 'quorum' }), dl, V4)).toBe('unknown');
    const v = survives(qq({ 'dead-letter-exchange': 'dlx' }, dl), name).poison;
    expect(v).toMatchObject({ holds: null, lost: null });
    expect(v.why).toContain('routes by the message');
  });
  it('on 3.x is redelivered for ever unless a limit is set', () => {
    expect(poisonOf(queue({ kind: 'quorum' }), NO_DL, V3)).toBe('redelivered');
    expect(poisonOf(queue({ kind: 'quorum', values: { 'delivery-limit': 3 } }), NO_DL, V3)).toBe('dropped');
  });
  it('reads the broker-reported limit first, and a negative one from 4.0 as none', () => {
    expect(
      deliveryLimitOf(
        queue({ kind: 'quorum', reportedDeliveryLimit: 5, values: { 'delivery-limit': 9 } }),
        V4,
      ),
    ).toBe(5);
    expect(deliveryLimitOf(queue({ kind: 'quorum', values: { 'delivery-limit': -1 } }), V4)).toBeNull();
    expect(deliveryLimitOf(queue({ kind: 'classic' }), V4)).toBeNull();
  });
});

// ---- properties ---------------------------------------------------------------------------

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
const count = fc.nat(1000);
const arbQueue: fc.Arbitrary<QueueFacts> = fc
  .record({
    kind: fc.constantFrom('classic', 'quorum', 'stream', null),
    durable: fc.boolean(),
    exclusive: fc.boolean(),
    messages: maybe(count),
    persistentShare: fc.double({ min: 0, max: 1, noNaN: true }),
    persistentKnown: fc.boolean(),
    members: maybe(fc.integer({ min: 1, max: 5 })),
    onlineShare: fc.nat(5),
    nodeDown: fc.boolean(),
    dlx: fc.option(fc.constantFrom('dlx', 'gone'), { nil: undefined }),
    limit: fc.option(fc.integer({ min: -1, max: 30 }), { nil: undefined }),
    reported: maybe(fc.integer({ min: 1, max: 30 })),
  })
  .map((r) => ({
    name: 'q',
    type: r.kind ?? 'x-delayed',
    kind: r.kind,
    durable: r.durable,
    exclusive: r.exclusive,
    messages: r.messages,
    persistent: r.messages === null || !r.persistentKnown ? null : Math.floor(r.messages * r.persistentShare),
    members: r.members,
    online: r.members === null ? null : Math.min(r.members, r.onlineShare),
    nodeDown: r.nodeDown,
    values: {
      ...(r.dlx ? { 'dead-letter-exchange': r.dlx } : {}),
      ...(r.limit === undefined ? {} : { 'delivery-limit': r.limit }),
    },
    reportedDeliveryLimit: r.kind === 'quorum' ? r.reported : null,
  }));
const arbExchange: fc.Arbitrary<ExchangeFacts> = fc.record({
  name: fc.constantFrom('', 'in', 'top', 'other'),
  durable: maybe(fc.boolean()),
  alternateExchange: maybe(fc.constantFrom('ae', 'gone')),
  alternateExists: maybe(fc.boolean()),
  alternateRoutes: maybe(fc.boolean()),
  routesEvery: fc.boolean(),
  unrouted: maybe(count),
});
const arbConsumers: fc.Arbitrary<ConsumerFacts> = fc.oneof(
  fc.constant({ consumers: null, autoAck: null, unlimitedPrefetch: null }),
  fc
    .tuple(fc.nat(5), fc.nat(5), fc.nat(5))
    .map(([a, b, c]) => ({ consumers: a + b, autoAck: b, unlimitedPrefetch: Math.min(a, c) })),
);
const arbChain: fc.Arbitrary<Chain> = fc.record({
  version: fc.constantFrom(V3, V4),
  object: fc.constant({ name: 'q', kind: 'queue' as const }),
  exchanges: fc.array(arbExchange, { maxLength: 4 }),
  publishers: fc.record({ channels: maybe(fc.nat(9)), confirming: maybe(fc.nat(9)) }),
  queue: arbQueue,
  deadLetter: fc.record({
    exchange: maybe(fc.constantFrom('dlx')),
    exists: maybe(fc.boolean()),
    routes: maybe(fc.boolean()),
  }),
  consumers: arbConsumers,
  nodes: maybe(fc.integer({ min: 1, max: 3 })),
});

describe('properties', () => {
  it('a verdict that holds loses nothing; a number lost is never more than the queue holds', () => {
    fc.assert(
      fc.property(arbChain, (c) => {
        const s = survives(c, name);
        for (const f of FAILURES) {
          const v = s[f];
          if (v.holds === true) expect(v.lost).toBe(0);
          if (v.holds === null) expect(v.lost).toBeNull();
          if (v.lost !== null && c.queue?.messages !== null && c.queue !== null)
            expect(v.lost).toBeLessThanOrEqual(c.queue.messages as number);
          expect(v.why.length).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('a count the broker did not report is never read as 0', () => {
    fc.assert(
      fc.property(arbChain, (c) => {
        const s = survives(c, name);
        if (c.queue?.messages === null) expect(s.restart.lost).toBeNull();
        if (c.consumers.autoAck === null) expect(s['consumer-crash'].holds).toBeNull();
        if (
          c.queue &&
          transientOf(c.queue) === null &&
          c.queue.durable &&
          !c.queue.exclusive &&
          c.exchanges.every((x) => x.durable !== false)
        )
          expect(s.restart.holds).toBeNull();
      }),
    );
  });

  it('lists the failures that do not hold first', () => {
    fc.assert(
      fc.property(arbChain, (c) => {
        const s = survives(c, name);
        const order = failuresFirst(s).map((f) => s[f].holds);
        const rank = (h: boolean | null) => (h === false ? 0 : h === null ? 1 : 2);
        for (let i = 1; i < order.length; i++)
          expect(rank(order[i - 1] ?? null)).toBeLessThanOrEqual(rank(order[i] ?? null));
      }),
    );
  });

  it('lint and path agree: transient messages, poison dropped, auto-ack beside a dead-letter target', () => {
    fc.assert(
      fc.property(arbQueue, arbConsumers, fc.constantFrom(V3, V4), (q, consumers, version) => {
        const exchanges = new Set(['dlx']);
        const l = new DurabilityLint(version);
        l.addQueue({ ...q, consumerFacts: consumers });
        const kinds = new Set(l.findings(exchanges).map((f) => f.kind));
        const dlx =
          typeof q.values['dead-letter-exchange'] === 'string'
            ? (q.values['dead-letter-exchange'] as string)
            : null;
        const dl: DeadLetterFacts = {
          exchange: dlx,
          exists: dlx === null ? null : exchanges.has(dlx),
          routes: null,
        };
        const s = survives(
          { ...chain({ version }), queue: q, deadLetter: dl, consumers, exchanges: [] },
          name,
        );
        const lostTransient = q.durable && !q.exclusive && (transientOf(q) ?? 0) > 0;
        expect(kinds.has('transient-messages')).toBe(lostTransient);
        if (lostTransient) expect(s.restart.lost).toBe(transientOf(q));
        expect(kinds.has('poison-dropped')).toBe(
          q.kind === 'quorum' && poisonOf(q, dl, version) === 'dropped',
        );
        expect(kinds.has('auto-ack-dead-letter')).toBe(dlx !== null && (consumers.autoAck ?? 0) > 0);
      }),
    );
  });

  it('on 4.3 a transient exchange is kept at a restart: only a transient queue is a weak end', () => {
    const l = new DurabilityLint(V43);
    l.addQueue({ ...queue({ name: 'q1' }), consumerFacts: NO_CONSUMERS });
    l.addQueue({ ...queue({ name: 'q2', durable: false }), consumerFacts: NO_CONSUMERS });
    l.addExchange(exchange({ name: 'd' }));
    l.addExchange(exchange({ name: 't', durable: false }));
    l.addBinding({ source: 't', destination: 'q1', destinationType: 'queue' });
    l.addBinding({ source: 't', destination: 'd', destinationType: 'exchange' });
    l.addBinding({ source: 'd', destination: 'q2', destinationType: 'queue' });
    const f = l.findings(null).find((x) => x.kind === 'transient-route');
    expect(f).toMatchObject({ objects: ['q2'], objectCount: 1 });
  });

  it('finds a transient end of a durable route once, whichever end it is', () => {
    const l = new DurabilityLint(V4);
    l.addQueue({ ...queue({ name: 'q1' }), consumerFacts: NO_CONSUMERS });
    l.addQueue({ ...queue({ name: 'q2', durable: false }), consumerFacts: NO_CONSUMERS });
    l.addExchange(exchange({ name: 'd' }));
    l.addExchange(exchange({ name: 't', durable: false }));
    l.addBinding({ source: 't', destination: 'q1', destinationType: 'queue' });
    l.addBinding({ source: 't', destination: 'd', destinationType: 'exchange' });
    l.addBinding({ source: 'd', destination: 'q2', destinationType: 'queue' });
    l.addBinding({ source: '', destination: 'q2', destinationType: 'queue' });
    const f = l.findings(null).find((x) => x.kind === 'transient-route');
    expect(f).toMatchObject({ objects: ['q2', 't'], objectCount: 2, policy: '', severity: 'warning' });
  });

  it('judges an alternate exchange and a dead-letter target by their bindings: one that routes nothing drops as surely as none', () => {
    const l = new DurabilityLint(V4);
    const quorum = (name: string, values: Record<string, unknown>) => ({
      ...queue({ name, kind: 'quorum', type: 'quorum', values: { 'delivery-limit': 3, ...values } }),
      consumerFacts: NO_CONSUMERS,
    });
    l.addQueue(quorum('to.hollow', { 'dead-letter-exchange': 'hollow' }));
    l.addQueue(quorum('to.keyed.hit', { 'dead-letter-exchange': 'keyed', 'dead-letter-routing-key': 'k' }));
    l.addQueue(quorum('to.keyed.miss', { 'dead-letter-exchange': 'keyed', 'dead-letter-routing-key': 'x' }));
    l.addQueue(quorum('to.keyed.own', { 'dead-letter-exchange': 'keyed' }));
    const ae = (name: string, alternate: string) =>
      exchange({ name, alternateExchange: alternate, alternateExists: true, unrouted: 2 });
    l.addExchange(exchange({ name: 'hollow' }), 'fanout');
    l.addExchange(exchange({ name: 'fan' }), 'fanout');
    l.addExchange(exchange({ name: 'keyed' }), 'direct');
    l.addExchange(exchange({ name: 'all', alternateExchange: 'fan', alternateExists: true }), 'topic');
    l.addExchange(ae('to.hollow.x', 'hollow'), 'direct');
    l.addExchange(ae('to.fan.x', 'fan'), 'direct');
    l.addExchange(ae('to.keyed.x', 'keyed'), 'direct');
    l.addExchange(ae('to.all.x', 'all'), 'direct');
    l.addBinding({ source: 'fan', destination: 'q', destinationType: 'queue', routingKey: '' });
    l.addBinding({ source: 'keyed', destination: 'q', destinationType: 'queue', routingKey: 'k' });
    const findings = l.findings(new Set(['hollow', 'fan', 'keyed', 'all']));
    const of = (kind: string) => findings.find((f) => f.kind === kind)?.objects;
    // 'all' has no binding, and its own alternate routes every message: it routes them all.
    expect(of('unroutable-dropped')).toEqual(['to.hollow.x']);
    // By key: the target's binding takes 'k', not 'x'; each message's own key: not known, not found.
    expect(of('poison-dropped')).toEqual(['to.hollow', 'to.keyed.miss']);
  });
});
