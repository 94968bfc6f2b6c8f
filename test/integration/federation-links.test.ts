/**
 * Federation links on the running chroot brokers (scripts/broker-4 and broker-4.3 enable the
 * federation plugin and its management plugin): which tags may restart a link and which may list
 * the links, by version, and what the bot says when its identity may not list them.
 *
 * 4.3's release notes: a link restart takes `policymaker`. On 4.3.6 the restart takes
 * `policymaker` (or `administrator`) and refuses `monitoring`; 4.0.5 took a monitor
 * (`monitoring` or `administrator`) and refused `policymaker`. Listing the links takes a monitor
 * on both. `management` alone may do neither. The bot never restarts a link; it lists them in
 * every preview (src/rabbit/client.ts, FEDERATION_LINKS_TAGS). A broker without the plugin
 * (scripts/broker-plain) answers the links endpoint with 400, 404 or 406, which the client reads
 * as no links.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { FEDERATION_LINKS_TAGS } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { admin, brokerCredentials, type TestUser, waitFor, withUser } from '../support/broker.ts';
import { brokersUp, inVhostOn, PLAIN, type TestBroker } from '../support/brokers.ts';
import { built, repoRoot } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';

const { up } = await brokersUp({ plain: true });
const chrootBrokers = up.filter((b) => b.label !== 'machine' && b !== PLAIN);

const enc = encodeURIComponent;

/** A management call as this user; the status and the body as text. */
async function as(broker: TestBroker, who: TestUser, method: 'GET' | 'DELETE', path: string) {
  const res = await request(new URL(`/api${path}`, broker.url), {
    method,
    headers: { authorization: `Basic ${Buffer.from(`${who.user}:${who.password}`).toString('base64')}` },
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  return { status: res.statusCode, body: await res.body.text() };
}

const guest = (): TestUser => {
  const { user, password } = brokerCredentials();
  return { user, password };
};

interface Link {
  id: string;
  node: string;
  status: string;
  exchange?: string;
}

/**
 * An exchange in `downstream` federated from the same broker's `upstream` vhost: the upstream,
 * the policy that names it, the exchange; resolves once its link runs.
 */
async function federate(broker: TestBroker, client: LabClient, downstream: string, upstream: string) {
  const amqp = new URL(broker.amqpUrl);
  const { user, password } = brokerCredentials();
  const uri = `amqp://${enc(user)}:${enc(password)}@localhost:${amqp.port}/${enc(upstream)}`;
  await client.putExchange(upstream, 'fed.x', 'fanout');
  await admin(
    'PUT',
    `/api/parameters/federation-upstream/${enc(downstream)}/up`,
    { value: { uri } },
    broker.url,
  );
  await client.putPolicy('user', {
    vhost: downstream,
    name: 'fed',
    pattern: '^fed\\.x$',
    applyTo: 'exchanges',
    priority: 0,
    definition: { 'federation-upstream': 'up' },
  });
  await client.putExchange(downstream, 'fed.x', 'fanout');
  return linkRunning(broker, downstream);
}

/** Waits until the downstream's link for fed.x runs (after its start, or a restart), and returns it. */
function linkRunning(broker: TestBroker, downstream: string) {
  return waitFor(
    async () => {
      const { status, body } = await as(broker, guest(), 'GET', `/federation-links/${enc(downstream)}`);
      if (status !== 200) throw new Error(`GET federation-links: ${status} ${body}`);
      return (JSON.parse(body) as Link[]).find((l) => l.exchange === 'fed.x' && l.status === 'running');
    },
    { deadlineMs: 30_000, intervalMs: 500, what: 'the federation link to run' },
  );
}

const plain = up.find((b) => b === PLAIN);

describe.skipIf(!plain)('federation on a broker without the plugin (scripts/broker-plain)', () => {
  it('reads no links, for / and for any other vhost, instead of failing on what it answers', async () => {
    await inVhostOn(plain!, 'nofed', async (vhost, client) => {
      expect(await client.federation(vhost)).toEqual({
        upstreams: new Set(),
        upstreamSets: new Set(),
        links: null,
      });
      expect((await client.federation('/')).links).toBeNull();
    });
  });
});

const TAGS = ['management', 'monitoring', 'policymaker'] as const;

describe.skipIf(chrootBrokers.length === 0).each(chrootBrokers)('federation links on $label', (broker) => {
  it('restarts a link for the tags this version allows, lists them for a monitor only, and the bot names the tag it lacks', async () => {
    await inVhostOn(broker, 'fedup', async (upstream, client) => {
      await inVhostOn(broker, 'feddown', async (downstream) => {
        const { version } = await client.overview();
        const link = await federate(broker, client, downstream, upstream);
        const restart = `/federation-links/vhost/${enc(downstream)}/${enc(link.id)}/${enc(link.node)}/restart`;
        const list = `/federation-links/${enc(downstream)}`;

        const seen: Record<string, { restart: number; list: number }> = {};
        for (const tag of TAGS) {
          await withUser({ tags: [tag], vhost: downstream, url: broker.url }, async (who) => {
            seen[tag] = {
              restart: (await as(broker, who, 'DELETE', restart)).status,
              list: (await as(broker, who, 'GET', list)).status,
            };
          });
        }
        // 204: restarted; 401 with not_authorised: logged in, not allowed.
        const restarts = version.minor >= 3 ? 'policymaker' : 'monitoring';
        expect(seen).toEqual(
          Object.fromEntries(
            TAGS.map((tag) => [
              tag,
              {
                restart: tag === restarts ? 204 : 401,
                list: (FEDERATION_LINKS_TAGS as readonly string[]).includes(tag) ? 200 : 401,
              },
            ]),
          ),
        );

        // The bot's identity with policymaker alone (what it needs to write user policies): its
        // preview says the links could not be read, and which tag lists them; the upstreams are
        // still read (`which` checks the one the exchange names without a word of doubt).
        await withUser({ tags: ['policymaker'], vhost: downstream, url: broker.url }, async (who) => {
          const { bin } = await built();
          const env = { RMQ_URL: broker.url, RMQ_USER: who.user, RMQ_PASSWORD: who.password };
          const run = await runBuiltRmq(
            bin,
            ['preview', 'delete', 'fed', '--vhost', downstream],
            env,
            repoRoot,
          );
          expect(run.code).toBe(0);
          expect(run.out).toContain(
            'The federation links could not be read (forbidden: listing federation links takes the monitoring or administrator tag (the broker: Not monitor user)): which links would stop is not known.',
          );
          const asked = await runBuiltRmq(
            bin,
            ['which', 'fed.x', '--vhost', downstream, '--json'],
            env,
            repoRoot,
          );
          expect(asked.code).toBe(0);
          expect(JSON.parse(asked.out)).toMatchObject({ inForce: { name: 'fed' }, hazards: [] });
          expect(JSON.parse(asked.out)).not.toHaveProperty('hazardsNotRead');
        });
        // With a monitor's tag the same preview reads the running link: the policy's delete stops it.
        // The link was restarted above: a preview read while it starts again sees no running link.
        await linkRunning(broker, downstream);
        const { bin } = await built();
        const run = await runBuiltRmq(
          bin,
          ['preview', 'delete', 'fed', '--vhost', downstream, '--json'],
          { RMQ_URL: broker.url, RMQ_USER: guest().user, RMQ_PASSWORD: guest().password },
          repoRoot,
        );
        expect(run.code).toBe(0);
        const json = JSON.parse(run.out) as { objects: { name: string; impact?: { effect: string }[] }[] };
        expect(json.objects.find((o) => o.name === 'fed.x')?.impact?.map((i) => i.effect)).toContain(
          'link-stops',
        );
      });
    });
  }, 90_000);
});

describe.skipIf(chrootBrokers.length === 0).each(chrootBrokers)(
  'federation-upstream-pattern on $label',
  (broker) => {
    it('starts a link to each upstream it matches, and the preview of its delete says the link stops (issue 28)', async () => {
      await inVhostOn(broker, 'fedpup', async (upstream, client) => {
        await inVhostOn(broker, 'fedpdown', async (downstream) => {
          const amqp = new URL(broker.amqpUrl);
          const { user, password } = brokerCredentials();
          const uri = `amqp://${enc(user)}:${enc(password)}@localhost:${amqp.port}/${enc(upstream)}`;
          await client.putExchange(upstream, 'fed.x', 'fanout');
          await admin(
            'PUT',
            `/api/parameters/federation-upstream/${enc(downstream)}/up-1`,
            { value: { uri } },
            broker.url,
          );
          await client.putPolicy('user', {
            vhost: downstream,
            name: 'fedp',
            pattern: '^fed\\.x$',
            applyTo: 'exchanges',
            priority: 0,
            definition: { 'federation-upstream-pattern': '^up-' },
          });
          await client.putExchange(downstream, 'fed.x', 'fanout');
          // The broker's own answer: the pattern starts the link, as federation-upstream does.
          const link = await linkRunning(broker, downstream);
          expect(link).toMatchObject({ exchange: 'fed.x', status: 'running' });

          const { bin } = await built();
          const env = { RMQ_URL: broker.url, RMQ_USER: user, RMQ_PASSWORD: password };
          const run = await runBuiltRmq(
            bin,
            ['preview', 'delete', 'fedp', '--vhost', downstream, '--json'],
            env,
            repoRoot,
          );
          expect(run.code, run.err).toBe(0);
          const json = JSON.parse(run.out) as { objects: { name: string; impact?: unknown[] }[] };
          expect(json.objects.find((o) => o.name === 'fed.x')?.impact).toContainEqual({
            effect: 'link-stops',
            key: 'federation-upstream-pattern',
            upstream: '^up-',
          });
          const text = await runBuiltRmq(
            bin,
            ['preview', 'delete', 'fedp', '--vhost', downstream],
            env,
            repoRoot,
          );
          expect(text.code, text.err).toBe(0);
          expect(text.out).toContain(
            'loses federation-upstream-pattern "^up-" while its federation link runs: the link stops',
          );
        });
      });
    }, 90_000);
  },
);
