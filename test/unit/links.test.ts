import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linksOfObject } from '../../src/commands/which/whichLinks.ts';
import {
  advisoriesFor,
  classify,
  expectedLinks,
  type LinkSources,
  type LinksWorld,
  linkKey,
  linksChanged,
  linksDocument,
  maskReason,
  type Parameter,
  type ReportedFederationLink,
  STUCK_AFTER_MS,
  shovelRisks,
  timestampMs,
  upstreamRisks,
} from '../../src/links/index.ts';
import type { Policy } from '../../src/policy/index.ts';

const policy = (name: string, definition: Record<string, unknown>, vhost = 'v'): Policy => ({
  vhost,
  name,
  pattern: '.*',
  applyTo: 'all',
  priority: 0,
  definition,
});
const up = (name: string, value: unknown = { uri: 'amqps://u:p@a,b' }, vhost = 'v'): Parameter => ({
  vhost,
  name,
  value,
});

function sources(over: Partial<LinkSources> = {}): LinkSources {
  return { objects: [], policies: [], upstreams: [], upstreamSets: [], shovels: [], ...over };
}

const NOW = Date.UTC(2026, 11, 5, 1, 0, 0);
const stamp = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')} ${d.getUTCHours()}:${String(d.getUTCMinutes()).padStart(2, '0')}:${String(d.getUTCSeconds()).padStart(2, '0')}`;
};

describe('expectedLinks', () => {
  it('names one link per (object, upstream), exchange and queue apart, and one per shovel parameter', () => {
    const got = expectedLinks(
      sources({
        objects: [
          { vhost: 'v', name: 'x1', kind: 'exchange', policy: 'all' },
          { vhost: 'v', name: 'q1', kind: 'queue', policy: 'one' },
          { vhost: 'v', name: 'x2', kind: 'exchange', policy: 'pat' },
          { vhost: 'v', name: 'x3', kind: 'exchange', policy: 'set' },
          { vhost: 'v', name: 'x4', kind: 'exchange', policy: null },
        ],
        policies: [
          policy('all', { 'federation-upstream-set': 'all' }),
          policy('one', { 'federation-upstream': 'b' }),
          policy('pat', { 'federation-upstream-pattern': '^a' }),
          policy('set', { 'federation-upstream-set': 's' }),
        ],
        upstreams: [up('a'), up('b'), up('a2')],
        upstreamSets: [
          { vhost: 'v', name: 's', value: [{ upstream: 'b' }, { upstream: 'ghost', exchange: 'e' }] },
        ],
        shovels: [{ vhost: 'v', name: 'sh', value: {} }],
      }),
    );
    expect(got.map((l) => [l.kind, l.object, l.upstream, l.policy, l.absent?.name ?? null])).toEqual([
      ['exchange', 'x1', 'a', 'all', null],
      ['exchange', 'x1', 'b', 'all', null],
      ['exchange', 'x1', 'a2', 'all', null],
      ['queue', 'q1', 'b', 'one', null],
      ['exchange', 'x2', 'a', 'pat', null],
      ['exchange', 'x2', 'a2', 'pat', null],
      ['exchange', 'x3', 'b', 'set', null],
      ['exchange', 'x3', 'ghost', 'set', 'ghost'],
      ['shovel', 'sh', null, null, null],
    ]);
  });

  it('keeps a link whose upstream or set does not exist, with what is absent', () => {
    const got = expectedLinks(
      sources({
        objects: [
          { vhost: 'v', name: 'x', kind: 'exchange', policy: 'p' },
          { vhost: 'v', name: 'y', kind: 'exchange', policy: 'q' },
        ],
        policies: [
          policy('p', { 'federation-upstream': 'nope' }),
          policy('q', { 'federation-upstream-set': 'noset' }),
        ],
      }),
    );
    expect(got.map((l) => l.absent)).toEqual([
      { what: 'upstream', name: 'nope' },
      { what: 'upstream-set', name: 'noset' },
    ]);
  });

  it('never federates the default exchange nor an internal one, whatever policy they report', () => {
    const got = expectedLinks(
      sources({
        objects: [
          { vhost: 'v', name: '', kind: 'exchange', policy: 'p' },
          { vhost: 'v', name: 'amq.rabbitmq.trace', kind: 'exchange', policy: 'p', internal: true },
        ],
        policies: [policy('p', { 'federation-upstream-set': 'all' })],
        upstreams: [up('a')],
      }),
    );
    expect(got).toEqual([]);
  });

  it('reads only the vhost of the object: an upstream of another vhost is not there', () => {
    const got = expectedLinks(
      sources({
        objects: [{ vhost: 'v', name: 'x', kind: 'exchange', policy: 'p' }],
        policies: [policy('p', { 'federation-upstream-set': 'all' })],
        upstreams: [up('a', {}, 'w')],
      }),
    );
    expect(got).toEqual([]);
  });
});

describe('classify', () => {
  const expected = expectedLinks(
    sources({
      objects: [{ vhost: 'v', name: 'x', kind: 'exchange', policy: 'p' }],
      policies: [policy('p', { 'federation-upstream': 'a' })],
      upstreams: [up('a')],
    }),
  );
  const link = (over: Partial<ReportedFederationLink>): ReportedFederationLink => ({
    vhost: 'v',
    kind: 'exchange',
    object: 'x',
    upstream: 'a',
    node: 'rabbit@n1',
    status: 'running',
    error: null,
    timestamp: stamp(NOW - 1000),
    ...over,
  });
  const plugins = { federation: true, shovel: true };
  const one = (l: ReportedFederationLink | null, p = plugins) =>
    classify(expected, { federation: l ? [l] : [], shovels: [] }, p, NOW)[0];

  it.each([
    ['running', NOW - 1000, 'running'],
    ['starting', NOW - 1000, 'starting'],
    ['starting', NOW - STUCK_AFTER_MS - 2000, 'stuck'],
    ['error', NOW - 1000, 'stopped'],
    ['shutdown', NOW - 1000, 'stopped'],
    ['something new', NOW - 1000, 'unknown'],
  ])('status %s since %d is %s', (status, at, state) => {
    expect(one(link({ status, timestamp: stamp(at) }))?.state).toBe(state);
  });

  it("keeps the broker's error and node", () => {
    expect(one(link({ status: 'error', error: 'econnrefused' }))).toMatchObject({
      state: 'stopped',
      reason: 'econnrefused',
      node: 'rabbit@n1',
      expected: true,
    });
  });

  it('says why a link is missing when it can, and that nothing says so otherwise', () => {
    expect(one(null)?.reason).toBe('missing, no reason reported');
    expect(one(null, { federation: false, shovel: true })?.reason).toBe(
      'the federation plugin is not enabled',
    );
    // Without the plugin its listing is not served either: the link is missing for that reason,
    // not unknown; with the plugin on and the listing not served (its management part off), unknown.
    const unserved = (federation: boolean | undefined) =>
      classify(expected, { federation: null, shovels: [] }, { federation, shovel: true }, NOW)[0];
    expect(unserved(false)).toMatchObject({
      state: 'missing',
      reason: 'the federation plugin is not enabled',
      next: 'Enable rabbitmq_federation and rabbitmq_federation_management on every node.',
    });
    expect(unserved(true)?.state).toBe('unknown');
    expect(unserved(undefined)?.state).toBe('unknown');
    expect(one(null)?.next).toBe(
      'Re-create policy "p" (`recreate "p" --vhost "v"`, a change request like any other: put again unchanged, it restarts nothing): after a node restart, the fix its users report.',
    );
  });

  it('marks a reported link nothing asks for as unexpected, and every link unknown when none could be read', () => {
    const rows = classify([], { federation: [link({ object: 'other' })], shovels: [] }, plugins, NOW);
    expect(rows.map((r) => [r.state, r.expected])).toEqual([['unexpected', false]]);
    const unread = classify(
      expected,
      { federation: null, federationWhy: 'forbidden', shovels: [] },
      plugins,
      NOW,
    );
    expect(unread.map((r) => [r.state, r.reason])).toEqual([['unknown', 'forbidden']]);
  });
});

describe('timestampMs', () => {
  it("reads the broker's timestamp as UTC", () => {
    expect(timestampMs('2026-12-05 0:20:26')).toBe(Date.UTC(2026, 11, 5, 0, 20, 26));
    expect(timestampMs('yesterday')).toBeNaN();
    expect(timestampMs(null)).toBeNaN();
  });
});

describe('risks', () => {
  it('names each risky setting of an exchange-federation upstream, URIs masked', () => {
    const risks = upstreamRisks(
      up('a', { uri: 'amqp://bob:hunter2@far.example/v', 'ack-mode': 'no-ack', 'max-hops': 2 }),
      true,
    );
    expect(risks.map((r) => r.key)).toEqual([
      'ack-mode',
      'queue-type',
      'resource-cleanup-mode',
      'expires',
      'max-hops',
      'uri',
      'uri',
    ]);
    expect(JSON.stringify(risks)).not.toContain('hunter2');
    expect(risks.find((r) => r.key === 'expires')?.why).toMatch(/a choice/);
  });

  it('finds nothing in a safe upstream, and no exchange-only risk for queue federation', () => {
    const safe = {
      uri: ['amqps://u:p@a/v', 'amqps://u:p@b/v'],
      'queue-type': 'quorum',
      'resource-cleanup-mode': 'never',
      'message-ttl': 60000,
    };
    expect(upstreamRisks(up('a', safe), true)).toEqual([]);
    expect(upstreamRisks(up('a', { uri: ['amqp://', 'amqp://localhost'] }), false)).toEqual([]);
  });

  it("reads a shovel's ack-mode and both ends' URIs", () => {
    const r = shovelRisks({
      vhost: 'v',
      name: 's',
      value: { 'src-uri': 'amqp://', 'dest-uri': 'amqp://x:y@remote', 'ack-mode': 'on-publish' },
    });
    expect(r.map((x) => [x.key, x.value])).toEqual([
      ['ack-mode', 'on-publish'],
      ['dest-uri', 'amqp://x:***@remote'],
      ['dest-uri', 'amqp://x:***@remote'],
    ]);
  });
});

describe('advisories', () => {
  const v = (major: number, minor: number, patch: number) => ({ major, minor, patch });
  it.each([
    [v(4, 0, 5), 'GHSA-6gmw-wxch-cvvc', true],
    [v(4, 0, 24), 'GHSA-6gmw-wxch-cvvc', false],
    [v(4, 3, 6), 'GHSA-6gmw-wxch-cvvc', false],
    [v(4, 3, 4), 'GHSA-6gmw-wxch-cvvc', true],
    [v(3, 10, 8), 'GHSA-6gmw-wxch-cvvc', true],
    [v(4, 4, 0), 'GHSA-6gmw-wxch-cvvc', false],
    [v(4, 2, 9), 'GHSA-g5v3-w5xg-62q2', true],
    [v(4, 3, 0), 'GHSA-g5v3-w5xg-62q2', false],
    // No fixed release known: every version.
    [v(4, 3, 6), 'GHSA-9wm4-9m6g-w38x', true],
    [v(9, 0, 0), 'GHSA-q44f-9vc5-grh7', true],
  ])('%o and %s: affected %s', (version, id, affected) => {
    expect(advisoriesFor(version).find((a) => a.id === id)?.affected).toBe(affected);
  });
});

// --- properties --------------------------------------------------------------------------------

const name = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const definitionArb = fc.oneof(
  fc.constant({}),
  name.map((n) => ({ 'federation-upstream': n })),
  fc.constantFrom('all', 's1', 's2').map((s) => ({ 'federation-upstream-set': s })),
  fc.constantFrom('^a', '[bc]', 'z').map((p) => ({ 'federation-upstream-pattern': p })),
);
const worldArb = fc.record({
  upstreams: fc.uniqueArray(name, { maxLength: 5 }),
  sets: fc.array(fc.tuple(fc.constantFrom('s1', 's2'), fc.array(name, { maxLength: 3 })), { maxLength: 2 }),
  policies: fc.array(definitionArb, { minLength: 1, maxLength: 4 }),
  objects: fc.array(
    fc.tuple(
      fc.constantFrom('exchange', 'queue') as fc.Arbitrary<'exchange' | 'queue'>,
      fc.nat(6),
      fc.nat(4),
    ),
    {
      maxLength: 8,
    },
  ),
  shovels: fc.uniqueArray(name, { maxLength: 3 }),
});

type World = typeof worldArb extends fc.Arbitrary<infer T> ? T : never;

function sourcesOf(w: World): LinkSources {
  const seen = new Set<string>();
  return {
    upstreams: w.upstreams.map((n) => up(n)),
    upstreamSets: w.sets.map(([n, members]) => ({
      vhost: 'v',
      name: n,
      value: members.map((m) => ({ upstream: m })),
    })),
    policies: w.policies.map((d, i) => policy(`p${i}`, d)),
    objects: w.objects
      .filter(([kind, n]) => !seen.has(`${kind}${n}`) && seen.add(`${kind}${n}`))
      .map(([kind, n, p]) => ({
        vhost: 'v',
        name: `o${n}`,
        kind,
        policy: p < w.policies.length ? `p${p}` : null,
      })),
    shovels: w.shovels.map((n) => ({ vhost: 'v', name: n, value: {} })),
  };
}

describe('properties', () => {
  it('every expected link is listed once; when all of them run, nothing is missing or unexpected', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const s = sourcesOf(w);
        const expected = expectedLinks(s);
        const keys = expected.map(linkKey);
        expect(new Set(keys).size).toBe(keys.length);
        const running = expected.filter((l) => !l.absent);
        const world: LinksWorld = {
          ...s,
          reported: {
            federation: running
              .filter((l) => l.kind !== 'shovel')
              .map((l) => ({
                vhost: l.vhost,
                kind: l.kind as 'exchange' | 'queue',
                object: l.object,
                upstream: l.upstream as string,
                node: 'n',
                status: 'running',
                error: null,
                timestamp: null,
              })),
            shovels: running
              .filter((l) => l.kind === 'shovel')
              .map((l) => ({
                vhost: 'v',
                name: l.object,
                node: 'n',
                type: 'dynamic',
                state: 'running',
                reason: null,
                timestamp: null,
              })),
          },
          plugins: { federation: true, shovel: true },
          version: null,
          now: NOW,
        };
        const doc = linksDocument(world);
        expect(doc.counts.unexpected).toBe(0);
        expect(doc.counts.running).toBe(running.length);
        expect(doc.counts.missing).toBe(expected.length - running.length);
        expect(doc.counts.expected).toBe(expected.length);
        for (const r of doc.links) if (r.state === 'missing') expect(r.reason).toMatch(/does not exist/);
      }),
    );
  });

  it('nothing reported: every expected link is missing, each with a reason and a next step', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const s = sourcesOf(w);
        const doc = linksDocument({
          ...s,
          reported: { federation: [], shovels: [] },
          plugins: { federation: true, shovel: true },
          version: null,
          now: NOW,
        });
        for (const r of doc.links) {
          expect(r.state).toBe('missing');
          expect(r.reason).not.toBeNull();
          expect(r.next).not.toBeNull();
        }
        expect(doc.counts.missing).toBe(expectedLinks(s).length);
      }),
    );
  });

  it('linksChanged: before plus what starts, less what stops, is after (runnable links)', () => {
    fc.assert(
      fc.property(worldArb, worldArb, (a, b) => {
        const before = expectedLinks(sourcesOf(a));
        const after = expectedLinks(sourcesOf(b));
        const { start, stop } = linksChanged(before, after);
        const runnable = (ls: typeof before) => new Set(ls.filter((l) => !l.absent).map(linkKey));
        const got = new Set(runnable(before));
        for (const l of stop) got.delete(linkKey(l));
        for (const l of start) got.add(linkKey(l));
        expect([...got].sort()).toEqual([...runnable(after)].sort());
      }),
    );
  });

  it('no URI password reaches a risk, whatever the URI', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((p) => !/[@]/.test(p)),
        fc.string({ minLength: 4 }).map((s) => `S3cr${s.replace(/[:@/?#]/g, '')}t`),
        (host, pw) => {
          const risks = upstreamRisks(
            up('a', { uri: `amqp://user:${pw}@${host.replace(/[/@?#:]/g, '')}x/v` }),
            true,
          );
          expect(JSON.stringify(risks)).not.toContain(pw);
        },
      ),
    );
  });
});

describe('maskReason', () => {
  it.each([
    ['{badmatch, "amqp://bob:hunter2@far/v"}', '{badmatch, "amqp://bob:***@far/v"}'],
    [
      '#amqp_params_network{username = <<"bob">>, password = <<"hunter2">>, host = "far"}',
      '#amqp_params_network{username = <<"bob">>, password = ***, host = "far"}',
    ],
    ['{password, "hunter2"}', '{password, ***}'],
    ['econnrefused', 'econnrefused'],
  ])('%s', (text, shown) => {
    expect(maskReason(text)).toBe(shown);
  });
});

describe("which's links where the links listing is not served", () => {
  // The broker's answers as the client gives them: the listing not served (null), the plugins read.
  const broker = (plugins: ReadonlySet<string> | undefined) => ({
    parameters: async (component: string) => (component === 'federation-upstream' ? [up('a')] : []),
    federationLinkList: async () => null,
    plugins: async () => plugins,
  });
  const object = { vhost: 'v', name: 'x', kind: 'exchange' as const };
  const fed = policy('p', { 'federation-upstream': 'a' });

  it('says the link missing when the broker says the plugin is off, unknown when it is on or not known', async () => {
    const off = await linksOfObject(broker(new Set()), object, fed, NOW);
    expect(off?.links.map((l) => [l.state, l.reason])).toEqual([
      ['missing', 'the federation plugin is not enabled'],
    ]);
    for (const plugins of [new Set(['federation']), undefined]) {
      const on = await linksOfObject(broker(plugins), object, fed, NOW);
      expect(on?.links.map((l) => l.state)).toEqual(['unknown']);
    }
  });
});
