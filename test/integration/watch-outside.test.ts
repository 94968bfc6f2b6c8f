/**
 * Changes made outside the bot, caught on both brokers: through the event exchange within 5 s
 * with the acting user; by comparing on an interval when the exchange cannot be had (no such
 * exchange where the bot looks, or the AMQP port closed); at start for what changed while the bot
 * was down; never for the bot's own applies; once across two replicas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { amqpEndpoint } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import { addressKey, canonical } from '../../src/policy/compare.ts';
import { preview } from '../../src/preview/preview.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { effectOfChange } from '../../src/watch/effect.ts';
import { brokerCredentials, waitFor, withUser, withVhost } from '../support/broker.ts';
import { brokersUp, clientFor } from '../support/brokers.ts';
import { startTcpProxy } from '../support/fakeBroker.ts';
import { testEnvironment, type WatchFixture, watchFixture } from '../support/watch.ts';

const { up } = await brokersUp();

const policy = (vhost: string, name: string, definition: Record<string, unknown>, priority = 1) => ({
  vhost,
  name,
  pattern: '^orders\\.',
  applyTo: 'queues',
  priority,
  definition,
});

/** Puts a policy as another broker user, the way someone at the management UI would. */
async function asUser(
  url: string,
  user: { user: string; password: string },
  fn: (c: LabClient) => Promise<unknown>,
) {
  const { LabClient } = await import('../../src/rabbit/lab.ts');
  const c = new LabClient({ url, user: user.user, password: user.password });
  try {
    await fn(c);
  } finally {
    await c.close();
  }
}

describe.each(up)('changes outside the bot on $label', (broker) => {
  let fixture: WatchFixture;
  let client: LabClient;
  beforeAll(() => {
    fixture = watchFixture(broker);
    client = clientFor(broker);
  });
  afterAll(async () => {
    await fixture.close();
    await client.close();
  });
  /** A watcher of `vhost` once it follows the event exchange. */
  const following = async (vhost: string) => {
    const w = await fixture.start({ vhost, client });
    await waitFor(() => w.watcher.health().mode === 'events', { deadlineMs: 10_000, what: 'events' });
    return w;
  };

  it('set, edited and cleared through the management API: caught within 5 s, with the acting user', async () => {
    await withVhost(
      async (vhost) => {
        const w = await following(vhost);
        await withUser({ tags: ['policymaker'], vhost, url: broker.url }, async (someone) => {
          await asUser(broker.url, someone, async (c) => {
            await c.putPolicy('user', policy(vhost, 'limits', { 'max-length': 10 }));
            await waitFor(() => w.changes.length >= 1, { deadlineMs: 5000, what: 'the set' });
            await c.putPolicy('user', policy(vhost, 'limits', { 'max-length': 20 }, 2));
            await waitFor(() => w.changes.length >= 2, { deadlineMs: 5000, what: 'the edit' });
            await c.deletePolicy('user', vhost, 'limits');
            await waitFor(() => w.changes.length >= 3, { deadlineMs: 5000, what: 'the clear' });
          });
          expect(w.changes.map((c) => [c.name, c.layer, c.actor, c.source])).toEqual([
            ['limits', 'user', someone.user, 'events'],
            ['limits', 'user', someone.user, 'events'],
            ['limits', 'user', someone.user, 'events'],
          ]);
          const [set, edit, clear] = w.changes;
          expect(set?.before).toBeNull();
          expect(set?.after?.definition).toEqual({ 'max-length': 10 });
          expect(edit?.before?.definition).toEqual({ 'max-length': 10 });
          expect(edit?.after).toMatchObject({ priority: 2, definition: { 'max-length': 20 } });
          expect(clear?.before?.definition).toEqual({ 'max-length': 20 });
          expect(clear?.after).toBeNull();
        });
      },
      { client, prefix: 'watch-ev' },
    );
  });

  it('operator policies: set and cleared, caught as operator policies (not as the user policy the broker also announces)', async () => {
    await withVhost(
      async (vhost) => {
        const w = await following(vhost);
        await client.putPolicy('operator', policy(vhost, 'ceiling', { 'max-length': 100 }));
        await waitFor(() => w.changes.length >= 1, { deadlineMs: 5000, what: 'the operator set' });
        await client.deletePolicy('operator', vhost, 'ceiling');
        await waitFor(() => w.changes.length >= 2, { deadlineMs: 5000, what: 'the operator clear' });
        expect(w.changes.map((c) => [c.layer, c.before === null, c.after === null, c.source])).toEqual([
          ['operator', true, false, 'events'],
          ['operator', false, true, 'events'],
        ]);
        expect(await w.store.state()).toEqual(new Map());
      },
      { client, prefix: 'watch-op' },
    );
  });

  it('a comparison the events overtook while it waited for them records nothing: the policy is not turned back to what it read', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 'limits', { 'max-length': 1 }));
        const w = await fixture.start({ vhost, client, graceMs: 3000 });
        await waitFor(() => w.watcher.health().mode === 'events', { deadlineMs: 10_000, what: 'events' });
        // The comparison that following starts, done: the next one is this test's.
        await w.watcher.compare('reconnect');
        const address = { layer: 'user', vhost, name: 'limits' } as const;
        // The events behind the broker: the state still before the edit to 1 (as when its event
        // has not been handled yet), so the comparison finds a difference and waits for it.
        await w.store.transition({ ...address, after: policy(vhost, 'limits', { 'max-length': 0 }) });
        const comparing = w.watcher.compare('interval');
        // Meanwhile the policy is edited again, and its event moves the state past the reading.
        await client.putPolicy('user', policy(vhost, 'limits', { 'max-length': 2 }));
        await waitFor(() => w.changes.length >= 1, { deadlineMs: 2500, what: 'the edit to 2, as an event' });
        await comparing;
        expect(w.changes.map((c) => [c.source, c.after?.definition])).toEqual([
          ['events', { 'max-length': 2 }],
        ]);
        expect((await w.store.state()).get(addressKey(address))).toBe(
          canonical(policy(vhost, 'limits', { 'max-length': 2 })),
        );
      },
      { client, prefix: 'watch-grace' },
    );
  });

  it('a comparison the events overtook while it read the broker records nothing: the policy is not turned back to what it read', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 'limits', { 'max-length': 1 }));
        // The policy list, held once read while `hold` is set: a slow answer.
        let hold: { read: boolean; release: () => void; released: Promise<void> } | undefined;
        const w = await fixture.start({
          vhost,
          client,
          graceMs: 3000,
          broker: {
            getQueue: (v, q) => client.getQueue(v, q),
            async listAllPolicies(layer) {
              const read = await client.listAllPolicies(layer);
              if (hold) {
                hold.read = true;
                await hold.released;
              }
              return read;
            },
          },
        });
        await waitFor(() => w.watcher.health().mode === 'events', { deadlineMs: 10_000, what: 'events' });
        await w.watcher.compare('reconnect');
        let release = () => {};
        const released = new Promise<void>((r) => {
          release = r;
        });
        hold = { read: false, release, released };
        const comparing = w.watcher.compare('interval');
        await waitFor(() => hold?.read, { deadlineMs: 5000, what: 'the policies read' });
        // Edited after the reading, its event handled before the reading is answered.
        await client.putPolicy('user', policy(vhost, 'limits', { 'max-length': 2 }));
        await waitFor(() => w.changes.length >= 1, { deadlineMs: 2500, what: 'the edit to 2, as an event' });
        hold.release();
        hold = undefined;
        await comparing;
        expect(w.changes.map((c) => [c.source, c.after?.definition])).toEqual([
          ['events', { 'max-length': 2 }],
        ]);
        expect((await w.store.state()).get(addressKey({ layer: 'user', vhost, name: 'limits' }))).toBe(
          canonical(policy(vhost, 'limits', { 'max-length': 2 })),
        );
      },
      { client, prefix: 'watch-read' },
    );
  });

  it("nothing for the bot's own applies; the next change outside is still caught", async () => {
    await withVhost(
      async (vhost) => {
        const w = await following(vhost);
        const mine = policy(vhost, 'mine', { 'max-length': 5 });
        // What the apply job does: announce, then write as the bot's broker identity.
        await w.store.expectOwnWrite({ layer: 'user', vhost, name: 'mine' }, mine, 'req-1');
        await client.putPolicy('user', mine);
        await w.store.expectOwnWrite({ layer: 'user', vhost, name: 'mine' }, null, 'req-2');
        await client.deletePolicy('user', vhost, 'mine');
        const handled = w.watcher.eventsHandled;
        await client.putPolicy('user', policy(vhost, 'theirs', { 'max-length': 6 }));
        await waitFor(() => w.changes.length >= 1, { deadlineMs: 5000, what: 'the outside change' });
        expect(w.watcher.eventsHandled).toBeGreaterThanOrEqual(handled + 1);
        expect(w.changes.map((c) => c.name)).toEqual(['theirs']);
      },
      { client, prefix: 'watch-own' },
    );
  });

  it('an environment limited to some vhosts (RMQ_VHOSTS) watches only those: a change in another vhost is neither recorded nor posted, by the events or the comparison', async () => {
    await withVhost(
      (ours) =>
        withVhost(
          async (theirs) => {
            // The test's own filter lets both through: the environment's list alone leaves theirs out.
            const w = await fixture.start({
              vhost: ours,
              client,
              env: { ...testEnvironment(broker), vhosts: [ours] },
              vhosts: (v) => v === ours || v === theirs,
            });
            await waitFor(() => w.watcher.health().mode === 'events', { deadlineMs: 10_000, what: 'events' });
            await client.putPolicy('user', policy(theirs, 'their-cap', { 'max-length': 1 }));
            await client.putPolicy('user', policy(ours, 'our-cap', { 'max-length': 2 }));
            await waitFor(() => w.changes.length >= 1, { deadlineMs: 5000, what: 'our change' });
            await w.watcher.compare('interval');
            expect(w.changes.map((c) => [c.vhost, c.name])).toEqual([[ours, 'our-cap']]);
          },
          { client, prefix: 'watch-theirs' },
        ),
      { client, prefix: 'watch-ours' },
    );
  });

  it('two replicas post a change once', async () => {
    await withVhost(
      async (vhost) => {
        const [a, b] = await Promise.all([following(vhost), following(vhost)]);
        const before = [a.watcher.eventsHandled, b.watcher.eventsHandled];
        await client.putPolicy('user', policy(vhost, 'shared', { 'max-length': 1 }));
        await client.putPolicy('user', policy(vhost, 'shared', { 'max-length': 2 }));
        await client.deletePolicy('user', vhost, 'shared');
        await waitFor(
          () =>
            a.watcher.eventsHandled >= (before[0] ?? 0) + 3 &&
            b.watcher.eventsHandled >= (before[1] ?? 0) + 3,
          { deadlineMs: 10_000, what: 'both replicas handled the three events' },
        );
        const all = [...a.changes, ...b.changes].sort((x, y) => x.at.getTime() - y.at.getTime());
        expect(all.map((c) => [c.before?.definition ?? null, c.after?.definition ?? null])).toEqual([
          [null, { 'max-length': 1 }],
          [{ 'max-length': 1 }, { 'max-length': 2 }],
          [{ 'max-length': 2 }, null],
        ]);
      },
      { client, prefix: 'watch-two' },
    );
  });

  it('with no event exchange where the bot looks (as with the plugin off): caught by the interval, no actor, and said so', async () => {
    await withVhost(
      async (vhost) => {
        // The event exchange lives in vhost "/" only: followed from another vhost, the broker
        // answers exactly as with the plugin off (no amq.rabbitmq.event).
        const amqp = `${testEnvironment(broker).amqp.url}/${encodeURIComponent(vhost)}`;
        const w = await fixture.start({
          vhost,
          client,
          env: testEnvironment(broker, amqp),
          intervalMs: 1000,
        });
        await waitFor(() => w.watcher.health().why?.includes('plugin is off'), {
          deadlineMs: 10_000,
          what: 'health says the plugin is off',
        });
        expect(w.watcher.health().mode).toBe('interval');
        await client.putPolicy('user', policy(vhost, 'quiet', { 'max-length': 3 }));
        await waitFor(() => w.changes.length >= 1, { deadlineMs: 5000, what: 'caught by the interval' });
        expect(w.changes[0]).toMatchObject({ name: 'quiet', actor: null, source: 'interval' });
      },
      { client, prefix: 'watch-off' },
    );
  });

  it('with the AMQP port unreachable: caught by the interval, and said so', async () => {
    await withVhost(
      async (vhost) => {
        const env = testEnvironment(broker, 'amqp://127.0.0.1:1');
        const w = await fixture.start({ vhost, client, env, intervalMs: 1000 });
        await waitFor(() => w.watcher.health().why?.includes('unreachable'), {
          deadlineMs: 10_000,
          what: 'health says unreachable',
        });
        await client.putPolicy('user', policy(vhost, 'quiet', { 'max-length': 3 }));
        await waitFor(() => w.changes.length >= 1, { deadlineMs: 5000, what: 'caught by the interval' });
        expect(w.changes[0]).toMatchObject({ name: 'quiet', actor: null, source: 'interval' });
      },
      { client, prefix: 'watch-down' },
    );
  });

  it('two AMQP nodes, the first stops: the follower moves to the second, and the next change comes as an event', async () => {
    await withVhost(
      async (vhost) => {
        // Node 1 a proxy to the broker's AMQP port, node 2 the port itself: one broker, two ways in.
        const amqp = new URL(broker.amqpUrl);
        const node1 = await startTcpProxy({ host: amqp.hostname, port: Number(amqp.port || 5672) });
        const { user, password } = brokerCredentials();
        const env = {
          ...testEnvironment(broker),
          amqp: amqpEndpoint([`amqp://127.0.0.1:${node1.port}`, broker.amqpUrl], broker.url, user, password),
        };
        // Each connection's queue is confirmed once, in the log: the count of connections followed.
        const followed: string[] = [];
        const logger = createLogger('info', {
          write: (line: string) => {
            const { msg, queue } = JSON.parse(line) as { msg: string; queue?: string };
            if (msg.includes('following the event exchange') && queue) followed.push(queue);
          },
        });
        try {
          const w = await fixture.start({ vhost, client, env, logger });
          await waitFor(() => followed.length === 1, {
            deadlineMs: 10_000,
            what: 'following through node 1',
          });
          expect(node1.connections()).toBe(1);
          await node1.close();
          await waitFor(() => followed.length === 2, {
            deadlineMs: 20_000,
            what: 'following through node 2',
          });
          expect(followed[1]).not.toBe(followed[0]);
          expect(w.watcher.health().mode).toBe('events');
          await client.putPolicy('user', policy(vhost, 'after-failover', { 'max-length': 4 }));
          await waitFor(() => w.changes.length >= 1, {
            deadlineMs: 5000,
            what: 'the change after the failover',
          });
          expect(w.changes.map((c) => [c.name, c.source])).toEqual([['after-failover', 'events']]);
          // Node 1 still refuses: nothing went back to it.
          expect(node1.connections()).toBe(1);
        } finally {
          await node1.close();
        }
      },
      { client, prefix: 'watch-failover' },
    );
  });

  it('a change made while the bot was down is caught at start', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 'old', { 'max-length': 1 }));
        const first = await fixture.start({ vhost, client, events: false });
        expect(first.changes).toEqual([]); // the first start records, reports nothing
        await first.stop();
        await client.putPolicy('user', policy(vhost, 'old', { 'max-length': 2 }));
        await client.putPolicy('operator', policy(vhost, 'new-ceiling', { 'max-length': 9 }));
        const second = await fixture.start({ vhost, client });
        expect(second.changes.map((c) => [c.layer, c.name, c.source, c.actor])).toEqual([
          ['operator', 'new-ceiling', 'start', null],
          ['user', 'old', 'start', null],
        ]);
        await client.deletePolicy('operator', vhost, 'new-ceiling');
      },
      { client, prefix: 'watch-start' },
    );
  });

  it.each([
    ['create', null, { 'max-length': 10 }],
    ['edit', { 'max-length': 10 }, { 'message-ttl': 5 }],
    ['delete', { 'max-length': 10 }, null],
  ] as const)(
    'what the objects gained and lost by a %s made outside: the preview of the same change, run on the state before',
    async (action, before, after) => {
      await withVhost(
        async (vhost) => {
          await client.putPolicy('user', policy(vhost, 'base', { 'message-ttl': 1000, 'max-length': 3 }));
          await client.putQueue(vhost, 'orders.a', { kind: 'classic' });
          await client.putQueue(vhost, 'orders.b', { kind: 'quorum' });
          await client.putQueue(vhost, 'other', { kind: 'classic' });
          const tight = (d: Record<string, unknown>) => ({
            ...policy(vhost, 'tight', d, 5),
            pattern: '^orders\\.a',
          });
          if (before) await client.putPolicy('user', tight(before));
          const fields = after
            ? { pattern: '^orders\\.a', applyTo: 'queues', priority: 5, definition: after }
            : {};
          const predicted = await preview(
            {
              action,
              name: 'tight',
              layer: 'user',
              vhost,
              fields: action === 'edit' ? { definition: after ?? {} } : fields,
            },
            client,
          );
          if (after) await client.putPolicy('user', tight(after));
          else await client.deletePolicy('user', vhost, 'tight');
          const made = await effectOfChange(client, {
            layer: 'user',
            vhost,
            name: 'tight',
            before: before && tight(before),
            after: after && tight(after),
          });
          expect(predicted.status).toBe('answered');
          if (predicted.status !== 'answered') return;
          const view = (objects: typeof made.objects) =>
            objects.map((o) => [o.name, o.before.policy, o.after.policy, o.lost, o.gained, o.changed]);
          expect(view(made.objects)).toEqual(view(predicted.objects));
          expect(made.objects.map((o) => o.name)).toEqual(['orders.a']);
          expect(made.unpredictable).toEqual([]);
        },
        { client, prefix: 'watch-fx' },
      );
    },
  );
});
