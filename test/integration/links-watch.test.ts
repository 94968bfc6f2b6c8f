/**
 * The links watch (src/watch/links.ts) on a real broker and Redis, two replicas sharing one
 * recorded state, reading through the bot's own reader (src/bot/botLinks.ts, the `links`
 * command's reading): a policy naming an upstream that does not exist is a missing link, told
 * down once across both replicas with the runbook's step; the upstream created, the link runs and
 * is told back once; while it runs, nothing is told. A node change read from `nodes` makes a
 * reading at once. An upstream that accepts the connection and never answers the handshake: the
 * broker reports its link `starting` again at each try (a new timestamp each time, a moment of
 * `error` between), so no one reading shows it starting for a minute; the watch, reading after
 * reading, says it stuck once it has not run for a minute, and tells it down once. The nodes
 * reading of ManagementClient against the cluster.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { linksSources } from '../../src/bot/botLinks.ts';
import { links } from '../../src/commands/links/index.ts';
import type { LinkCounts } from '../../src/links/index.ts';
import { createLogger } from '../../src/log/log.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { LinksWatch, type LinksWent, linksEntries, type NodeRunning } from '../../src/watch/links.ts';
import { LinksStore } from '../../src/watch/linksStore.ts';
import { admin, brokerCredentials, waitFor } from '../support/broker.ts';
import { brokersUp, CLUSTER, inVhostOn, reachable } from '../support/brokers.ts';
import { startSilentUpstream } from '../support/silentUpstream.ts';
import { testEnvironment } from '../support/watch.ts';

const { up } = await brokersUp();
const broker = up.find((b) => b.label === 'rabbitmq-4');
const chroot = up.filter((b) => b.label === 'rabbitmq-4' || b.label === 'rabbitmq-4.3');
const enc = encodeURIComponent;

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const prefix = `test-links-watch-${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

/** Policy `fed`: exchange fed.x federated from `upstream`. */
const federated = (lab: LabClient, vhost: string, upstream: string) =>
  lab.putPolicy('user', {
    vhost,
    name: 'fed',
    pattern: '^fed\\.x$',
    applyTo: 'exchanges',
    priority: 0,
    definition: { 'federation-upstream': upstream },
  });

describe.skipIf(!broker)('the links watch on 4.0.5, two replicas', () => {
  it('a missing link is told down once, back once when its upstream is created, nothing while it runs', async () => {
    if (!broker) return;
    await inVhostOn(broker, 'links-watch', async (vhost, lab) => {
      await lab.putExchange(vhost, 'fed.x', 'fanout');
      await federated(lab, vhost, 'up');
      const env = { ...testEnvironment(broker), vhosts: [vhost] };
      const { user, password } = brokerCredentials();
      const client = new ManagementClient({ url: broker.url, user, password });
      const sources = linksSources(new Map([[env.name, client]]));
      const bursts: LinksWent[] = [];
      const counts: LinkCounts[] = [];
      let nodes: NodeRunning[] = [{ name: 'rabbit@a', running: true }];
      const replica = () =>
        new LinksWatch({
          env,
          read: () => sources.readLinks(env),
          nodes: async () => nodes,
          store: new LinksStore(redis, prefix, env.name),
          logger: createLogger('silent'),
          intervalMs: 3_600_000,
          nodesEveryMs: 50,
          settleMs: 200,
          counted: (c) => counts.push(c),
          went: async (b) => void bursts.push(b),
        });
      const [one, two] = [replica(), replica()];
      try {
        await Promise.all([one.read('interval'), two.read('interval')]);
        expect(bursts.map((b) => [b.went, b.source, b.links.length, b.stillDown])).toEqual([
          ['down', 'interval', 1, 1],
        ]);
        const [down] = bursts[0]?.links ?? [];
        expect(down).toMatchObject({
          kind: 'exchange',
          vhost,
          object: 'fed.x',
          upstream: 'up',
          state: 'missing',
        });
        expect(down?.reason).toMatch(/upstream "up" does not exist/);
        expect(down?.next).toMatch(/^Create the upstream "up"/);
        expect(counts.at(-1)).toMatchObject({ expected: 1, missing: 1, running: 0 });

        // Still missing: read again by both, nothing new told.
        await Promise.all([one.read('interval'), two.read('interval')]);
        expect(bursts).toHaveLength(1);

        const amqp = new URL(broker.amqpUrl);
        await admin(
          'PUT',
          `/api/parameters/federation-upstream/${enc(vhost)}/up`,
          { value: { uri: `amqp://${enc(user)}:${enc(password)}@localhost:${amqp.port}/${enc(vhost)}` } },
          broker.url,
        );
        await waitFor(
          async () => {
            await Promise.all([one.read('interval'), two.read('interval')]);
            return bursts.length > 1;
          },
          { deadlineMs: 30_000, what: 'the link told back' },
        );
        expect(
          bursts.slice(1).map((b) => [b.went, b.links.map((l) => [l.object, l.state]), b.stillDown]),
        ).toEqual([['back', [['fed.x', 'running']], 0]]);

        // Running: nothing told, whatever each replica reads; a node change makes a reading at once.
        await Promise.all([one.start(), two.start()]);
        nodes = [{ name: 'rabbit@a', running: false }];
        const readings = counts.length;
        await waitFor(() => counts.length > readings + 1, {
          deadlineMs: 10_000,
          what: 'a reading after the node change',
        });
        expect(bursts).toHaveLength(2);

        // Recorded as the bot records them: sealed in the trail, found by the object's name.
        const trail = new AuditTrail(redis, prefix);
        for (const b of bursts) for (const e of linksEntries(b)) await trail.append(e);
        const found = await trail.list({ name: 'fed.x' });
        expect(found.map((r) => (r.action === 'links' ? r.went : r.action))).toEqual(['back', 'down']);
        expect((await trail.verify()).ok).toBe(true);
      } finally {
        await Promise.all([one.stop(), two.stop()]);
        await client.close();
      }
    });
  }, 60_000);
});

describe.skipIf(chroot.length === 0).each(chroot)(
  'the links watch on $label, an upstream that never answers',
  (b) => {
    it('the link starting again and again is stuck after a minute not running, told down once', async () => {
      const silent = await startSilentUpstream();
      const { port } = silent;
      /** The upstream's password: in no burst, record or answer. */
      const secret = 'Never-answers-secret';
      const { user, password } = brokerCredentials();
      const client = new ManagementClient({ url: b.url, user, password });
      try {
        await inVhostOn(b, 'links-stuck', async (vhost, lab) => {
          await lab.putParameter({
            component: 'federation-upstream',
            vhost,
            name: 'silent',
            value: { uri: `amqp://u:${secret}@127.0.0.1:${port}/x` },
          });
          await federated(lab, vhost, 'silent');
          await lab.putExchange(vhost, 'fed.x', 'fanout');
          const env = { ...testEnvironment(b), vhosts: [vhost] };
          const sources = linksSources(new Map([[env.name, client]]));
          const bursts: LinksWent[] = [];
          const counts: LinkCounts[] = [];
          const statuses = new Set<string>();
          const watch = new LinksWatch({
            env,
            read: () => sources.readLinks(env),
            nodes: async () => [],
            store: new LinksStore(redis, `${prefix}:stuck-${b.label}`, env.name),
            logger: createLogger('silent'),
            intervalMs: 3_600_000,
            settleMs: 200,
            counted: (c) => counts.push(c),
            went: async (burst) => void bursts.push(burst),
          });
          try {
            await waitFor(
              async () => {
                await watch.read('interval');
                const listed = await client.federationLinkList(vhost);
                if (Array.isArray(listed)) for (const l of listed) statuses.add(l.status);
                return (counts.at(-1)?.stuck ?? 0) > 0;
              },
              { deadlineMs: 150_000, intervalMs: 2_000, what: 'the watch to say the link stuck' },
            );
            // What the broker said meanwhile: starting, and never running.
            expect(statuses).toContain('starting');
            expect(statuses).not.toContain('running');
            expect(bursts.map((x) => [x.went, x.links.map((l) => [l.object, l.upstream])])).toEqual([
              ['down', [['fed.x', 'silent']]],
            ]);
            expect(['stuck', 'stopped']).toContain(bursts[0]?.links[0]?.state);
            const answer = await links({ vhost }, client, { env: 'test' });
            expect(answer.risks).toContainEqual(
              expect.objectContaining({
                name: 'silent',
                key: 'uri',
                value: `amqp://u:***@127.0.0.1:${port}/x`,
              }),
            );
            for (const shown of [bursts, bursts.flatMap(linksEntries), answer])
              expect(JSON.stringify(shown)).not.toContain(secret);
            // Still not running: read again, nothing new told.
            await watch.read('interval');
            expect(bursts).toHaveLength(1);
          } finally {
            await watch.stop();
          }
        });
      } finally {
        await client.close();
        await silent.close();
      }
    }, 180_000);
  },
);

describe.skipIf(!(await reachable(CLUSTER)))('ManagementClient.nodesRunning on the cluster', () => {
  it('lists the three nodes, each running', async () => {
    const { user, password } = brokerCredentials();
    const client = new ManagementClient({ url: CLUSTER.urls ?? CLUSTER.url, user, password });
    try {
      const nodes = await client.nodesRunning();
      expect(nodes.map((n) => n.name).sort()).toEqual([
        'rmqc1@localhost',
        'rmqc2@localhost',
        'rmqc3@localhost',
      ]);
      // A node a fault suite stopped meanwhile is listed, not running: only the names are asserted whole.
      expect(nodes.every((n) => typeof n.running === 'boolean')).toBe(true);
    } finally {
      await client.close();
    }
  });
});
