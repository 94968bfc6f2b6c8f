/**
 * The differential of `links`: random federation upstreams, upstream sets and policies over random
 * exchanges and queues, on 4.0.5, 4.3.6 and the three-node 4.3.6 cluster. Once the broker has
 * settled, the links the bot expects (src/links/ `expectedLinks`, from the policies in force as the
 * broker reports them) are exactly the links the broker reports, by kind, object and upstream.
 * Every upstream points at a vhost of its own on the same broker, where the objects exist too: two
 * upstreams of one URI federating one exchange declare the same internal exchange upstream at the
 * same moment, which 4.3.6 does not survive (docs/broker-facts.md).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { links } from '../../src/commands/links/index.ts';
import { linkKey } from '../../src/links/index.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { uniqueName, vhostOnEveryNode, waitFor } from '../support/broker.ts';
import { brokersUp, CLUSTER, clientFor, type TestBroker } from '../support/brokers.ts';
import { aloneOnCluster } from '../support/clusterHooks.ts';
import { amqpUrl } from '../support/messages.ts';

const { up } = await brokersUp({ cluster: true });

/** The brokers with the federation plugin (its exchange type is registered). */
const federating: TestBroker[] = [];
for (const b of up) {
  const client = clientFor(b);
  try {
    if ((await client.overview()).exchangeTypes?.includes('x-federation-upstream') && b.label !== 'machine')
      federating.push(b);
  } finally {
    await client.close();
  }
}

const NAMES = ['a.1', 'a.2', 'b.1', 'b.2', 'c.1'] as const;
const UPSTREAMS = ['u1', 'u2', 'u3'] as const;

const key = fc.oneof(
  fc.constantFrom(...UPSTREAMS, 'ghost').map((u) => ({ 'federation-upstream': u })),
  fc.constantFrom('all', 's1', 's2', 'nosuchset').map((s) => ({ 'federation-upstream-set': s })),
  fc.constantFrom('^u[12]$', 'u', '^x').map((p) => ({ 'federation-upstream-pattern': p })),
);
const topology = fc.record({
  upstreams: fc.uniqueArray(fc.constantFrom(...UPSTREAMS), { minLength: 1, maxLength: 3 }),
  sets: fc.array(
    fc.tuple(
      fc.constantFrom('s1', 's2'),
      fc.uniqueArray(fc.constantFrom(...UPSTREAMS, 'ghost'), { minLength: 1, maxLength: 3 }),
    ),
    { maxLength: 2 },
  ),
  policies: fc.array(
    fc.record({
      pattern: fc.constantFrom('^a\\.', '^b\\.', '\\.1$', '^c', '.*'),
      applyTo: fc.constantFrom('exchanges', 'queues', 'all'),
      priority: fc.integer({ min: 0, max: 3 }),
      definition: key,
    }),
    { minLength: 1, maxLength: 4 },
  ),
  exchanges: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }),
  queues: fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 3 }),
  quorum: fc.boolean(),
});

type Topology = typeof topology extends fc.Arbitrary<infer T> ? T : never;

async function build(
  broker: TestBroker,
  client: LabClient,
  down: string,
  upVhosts: ReadonlyMap<string, string>,
  t: Topology,
) {
  for (const [u, upVhost] of upVhosts) {
    for (const x of t.exchanges) await client.putExchange(upVhost, x, 'fanout');
    for (const q of t.queues) await client.putQueue(upVhost, q, { kind: 'classic' });
    await client.putParameter({
      component: 'federation-upstream',
      vhost: down,
      name: u,
      value: { uri: amqpUrl(broker, upVhost) },
    });
  }
  for (const [name, members] of t.sets)
    await client.putParameter({
      component: 'federation-upstream-set',
      vhost: down,
      name: name,
      value: members.map((upstream) => ({ upstream })),
    });
  for (const [i, p] of t.policies.entries())
    await client.putPolicy('user', { vhost: down, name: `p${i}`, ...p });
  for (const x of t.exchanges) await client.putExchange(down, x, 'fanout');
  for (const q of t.queues) await client.putQueue(down, q, { kind: t.quorum ? 'quorum' : 'classic' });
}

describe.each(federating.map((b) => [b.label, b] as const))('links differential on %s', (_label, broker) => {
  aloneOnCluster(broker.label === CLUSTER.label);
  it('the links the bot expects are the links the broker reports, once settled', async () => {
    await fc.assert(
      fc.asyncProperty(topology, async (t) => {
        const client = clientFor(broker);
        const down = uniqueName('links-diff');
        const upVhosts = new Map(t.upstreams.map((u) => [u, uniqueName(`links-diff-${u}`)]));
        try {
          for (const v of [down, ...upVhosts.values()]) {
            await client.putVhost(v);
            if (broker.label.startsWith('cluster'))
              await vhostOnEveryNode(
                ['http://127.0.0.1:15691', 'http://127.0.0.1:15692', 'http://127.0.0.1:15693'],
                v,
              );
          }
          await build(broker, client, down, upVhosts, t);
          let last = '';
          let agreed = 0;
          await waitFor(
            async () => {
              const r = await links({ vhost: down }, client, { env: 'test' });
              const expected = r.links
                .filter((l) => l.expected && l.state !== 'missing')
                .map(linkKey)
                .sort();
              const reported = r.links
                .filter((l) => l.state !== 'missing')
                .map(linkKey)
                .sort();
              const missing = r.links.filter((l) => l.state === 'missing');
              // Settled: the same answer twice in a row, with nothing unexpected and nothing missing
              // that the broker could run (a missing link is one whose upstream or set is absent).
              const now = JSON.stringify({ expected, reported, m: missing.map(linkKey) });
              agreed = now === last ? agreed + 1 : 0;
              last = now;
              expect(r.counts.unexpected, 'a link no policy asks for').toBe(0);
              for (const l of missing) expect(l.reason, `${linkKey(l)} missing`).toMatch(/does not exist/);
              expect(reported).toEqual(expected);
              return agreed >= 1;
            },
            { deadlineMs: 60_000, intervalMs: 1000, what: `the links of ${JSON.stringify(t)} to settle` },
          );
        } finally {
          for (const v of [down, ...upVhosts.values()]) await client.deleteVhost(v);
          await client.close();
        }
      }),
      { numRuns: 5, endOnFailure: true },
    );
  }, 600_000);
});
