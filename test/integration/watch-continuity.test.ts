/**
 * The watch's continuity, on the machine's broker and Redis: the first watch seals one snapshot;
 * a second replica of a watch that holds seals nothing; every replica down for longer than the
 * gap's threshold, then two started at once: exactly one gap (from the last beat, before the stop,
 * to the comparison's reading) and one snapshot, the change made meanwhile found as made between
 * them; comparisons while the watch holds seal nothing more (the trail stays bounded). The broker
 * unreachable (a relay to it cut) past the threshold: the same gap and snapshot. No event feed, the
 * comparisons reading the broker: no gap, and a change found carries the span since the last
 * reading, the state unknown inside it. A record appended between a reading and its snapshot (put
 * there by a hook on the broker's listings, every time): the first snapshot, a gap's and a
 * checkpoint are each sealed of a reading after it, and `which --at` after it answers the change.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateAt } from '../../src/audit/replay.ts';
import { AuditTrail } from '../../src/audit/trail.ts';
import { whichAt } from '../../src/commands/at/whichAt.ts';
import { parseInstant } from '../../src/core/instant.ts';
import type { Policy } from '../../src/policy/index.ts';
import { LabClient } from '../../src/rabbit/lab.ts';
import { outsideEntry } from '../../src/watch/outside.ts';
import { sealEntry, sealInto } from '../../src/watch/seal.ts';
import type { Seal, WatchBroker } from '../../src/watch/watcher.ts';
import { brokerCredentials, waitFor, withVhost } from '../support/broker.ts';
import { BROKERS, clientFor } from '../support/brokers.ts';
import { type WatchFixture, watchFixture } from '../support/watch.ts';

const broker = BROKERS[0];
if (!broker) throw new Error('no broker');
const policy = (vhost: string, ttl: number) => ({
  vhost,
  name: 'cap',
  pattern: '^orders\\.',
  applyTo: 'queues',
  priority: 1,
  definition: { 'message-ttl': ttl },
});

/**
 * The trail of the watched vhost's environment, and a watcher's `seal` appending to it as the bot's
 * does (`seals`: each sealed; `refused`: each snapshot refused because the trail grew since its reading).
 */
function sealedInto(fixture: WatchFixture, vhost: string) {
  const trail = new AuditTrail(fixture.redis, fixture.keyPrefix);
  const env = `test-${vhost}`;
  const seals: Seal[] = [];
  const refused: Seal[] = [];
  const seal = async (s: Seal) => {
    const outcome = await sealInto(trail, s);
    (outcome === 'sealed' ? seals : refused).push(s);
    return outcome;
  };
  return {
    trail,
    env,
    seals,
    refused,
    seal,
    sinceSnapshot: () => trail.appendedSinceSnapshot(env),
    trailMark: () => trail.markOf(env),
  };
}

/**
 * The client as the watcher's broker, with a hook: once armed, it runs after the next reading's
 * two listings are answered and before the watcher has them, so whatever it appends to the trail
 * lands between the reading and the snapshot's append, every time, without a timer.
 */
function hooked(client: LabClient): { broker: WatchBroker; arm(between: () => Promise<void>): void } {
  let armed: (() => Promise<void>) | undefined;
  let listings: Promise<Policy[]>[] = [];
  const broker: WatchBroker = {
    getQueue: (vhost, name) => client.getQueue(vhost, name),
    overview: () => client.overview(),
    async listAllPolicies(layer) {
      const listing = client.listAllPolicies(layer);
      if (!armed) return listing;
      listings.push(listing);
      // The watcher reads both layers at once, and waits for both: the second holds it.
      if (listings.length < 2) return listing;
      const between = armed;
      const both = listings;
      armed = undefined;
      listings = [];
      await Promise.all(both);
      await between();
      return listing;
    },
  };
  return {
    broker,
    arm: (between) => {
      armed = between;
    },
  };
}

/** `which orders.q --at` now, replayed from the vhost's last snapshot, answers the edit to 2000. */
async function expectTheEditNow(trail: AuditTrail, env: string, vhost: string): Promise<void> {
  const at = parseInstant(new Date().toISOString(), new Date(), '--at');
  expect(
    await whichAt({ name: 'orders.q', kind: 'classic', vhost, at }, env, undefined, trail),
  ).toMatchObject({
    known: true,
    inForce: { name: 'cap', definition: { 'message-ttl': 2000 } },
  });
}

/** Each seal's kind, and a snapshot's why. */
const kinds = (seals: readonly Seal[]) =>
  seals.map((x) => (x.kind === 'snapshot' ? `snapshot ${x.why}` : x.kind));

/**
 * A TCP relay to the broker's management port, on a port of its own: `cut()` refuses every
 * connection (those open are reset), as an unreachable broker does; `mend()` relays again.
 */
async function relayTo(
  target: string,
): Promise<{ url: string; cut(): Promise<void>; mend(): Promise<void>; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let listening: Server | undefined;
  let at = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const server = createServer((inbound) => {
        const outbound = connect(Number(port), hostname);
        open.add(inbound).add(outbound);
        inbound.pipe(outbound).pipe(inbound);
        for (const s of [inbound, outbound]) {
          s.on('error', () => undefined);
          s.on('close', () => {
            open.delete(s);
            inbound.destroy();
            outbound.destroy();
          });
        }
      });
      server.once('error', reject);
      server.listen(at, '127.0.0.1', () => {
        const address = server.address();
        if (address && typeof address === 'object') at = address.port;
        listening = server;
        resolve();
      });
    });
  const cut = async () => {
    const server = listening;
    listening = undefined;
    for (const s of open) s.resetAndDestroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  };
  await listen();
  return { url: `http://127.0.0.1:${at}`, cut, mend: listen, close: cut };
}

describe('the watch keeps its continuity', () => {
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

  /** The policy edited outside the bot (1000 -> 2000), and another replica's record of the edit appended. */
  async function editedAndRecorded(trail: AuditTrail, env: string, vhost: string): Promise<void> {
    await client.putPolicy('user', policy(vhost, 2000));
    const change = {
      env,
      layer: 'user' as const,
      vhost,
      name: 'cap',
      before: policy(vhost, 1000),
      after: policy(vhost, 2000),
      actor: 'guest',
      source: 'events' as const,
      at: new Date(),
    };
    await trail.append(outsideEntry(change, undefined, new Date()));
  }

  it('seals the first snapshot once, a gap and its snapshot once, and nothing while the watch holds', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 1000));
        const seals: Seal[] = [];
        const seal = async (s: Seal) => {
          seals.push(s);
          return 'sealed' as const;
        };
        const tuning = { vhost, client, seal, heartbeatMs: 100, gapAfterMs: 800, events: false } as const;
        const a = await fixture.start(tuning);
        expect(seals.map((s) => (s.kind === 'snapshot' ? `snapshot ${s.why}` : s.kind))).toEqual([
          'snapshot first',
        ]);
        const first = seals[0];
        expect(first?.kind === 'snapshot' && first.user.map((p) => p.name)).toEqual(['cap']);
        const b = await fixture.start(tuning);
        await a.watcher.compare('interval');
        await b.watcher.compare('interval');
        expect(seals).toHaveLength(1);

        await Promise.all([a.stop(), b.stop()]);
        const stopped = Date.now();
        await client.putPolicy('user', policy(vhost, 2000));
        await waitFor(() => Date.now() - stopped > 1_000, { deadlineMs: 5_000, intervalMs: 50 });
        const [c, d] = await Promise.all([fixture.start(tuning), fixture.start(tuning)]);
        const kinds = seals.slice(1).map((s) => (s.kind === 'snapshot' ? `snapshot ${s.why}` : s.kind));
        expect(kinds).toEqual(['gap', 'snapshot gap']);
        const gap = seals[1];
        if (gap?.kind !== 'gap') throw new Error('no gap');
        expect(gap.from.getTime()).toBeLessThanOrEqual(stopped);
        expect(gap.to.getTime()).toBeGreaterThan(stopped);
        const found = [...c.changes, ...d.changes];
        expect(found).toHaveLength(1);
        // Found by either replica: made between the gap's start and that replica's reading.
        expect(found[0]?.between?.from).toEqual(gap.from);
        expect(Math.abs((found[0]?.between?.to.getTime() ?? 0) - gap.to.getTime())).toBeLessThan(5_000);
        const snapshot = seals[2];
        expect(snapshot?.kind === 'snapshot' && snapshot.at.getTime()).toBe(gap.to.getTime());

        await c.watcher.compare('interval');
        await d.watcher.compare('interval');
        expect(seals).toHaveLength(3);
      },
      { client, prefix: 'continuity' },
    );
  });

  it('the broker unreachable for longer than the threshold: one gap, from the last beat to the reading after it, its snapshot, the change made meanwhile found as made between them', async () => {
    const relay = await relayTo(broker.url);
    const through = new LabClient({ url: relay.url, ...brokerCredentials(), getRetries: 0 });
    try {
      await withVhost(
        async (vhost) => {
          await client.putPolicy('user', policy(vhost, 1000));
          const { trail, env, seals, seal } = sealedInto(fixture, vhost);
          const w = await fixture.start({
            vhost,
            client: through,
            seal,
            heartbeatMs: 100,
            gapAfterMs: 800,
            events: false,
          });
          expect(seals.map((x) => (x.kind === 'snapshot' ? x.why : x.kind))).toEqual(['first']);
          await relay.cut();
          const cut = Date.now();
          // The comparison cannot read the broker: the watch no longer holds, the beats stop.
          await w.watcher.compare('interval');
          expect(w.watcher.health().lastCompare?.ok).toBe(false);
          await client.putPolicy('user', policy(vhost, 2000));
          await waitFor(() => Date.now() - cut > 1_500, { deadlineMs: 5_000, intervalMs: 50 });
          await relay.mend();
          await w.watcher.compare('interval');
          expect(seals.map((x) => (x.kind === 'snapshot' ? x.why : x.kind))).toEqual(['first', 'gap', 'gap']);
          const gap = seals[1];
          if (gap?.kind !== 'gap') throw new Error('no gap');
          expect(gap.from.getTime()).toBeLessThanOrEqual(cut);
          expect(gap.to.getTime()).toBeGreaterThan(cut + 1_500);
          expect(w.changes.map((c) => [c.after?.definition, c.between?.from, c.between?.to])).toEqual([
            [{ 'message-ttl': 2000 }, gap.from, gap.to],
          ]);
          const inside = await stateAt(trail, env, vhost, cut + 500);
          expect(inside).toMatchObject({
            known: false,
            why: 'gap',
            gap: { from: gap.from.toISOString(), to: gap.to.toISOString() },
          });
          // The snapshot after the gap holds what the broker held.
          const after = await stateAt(trail, env, vhost, gap.to.getTime());
          expect(after.known && after.state.user.map((p) => p.definition)).toEqual([{ 'message-ttl': 2000 }]);
        },
        { client, prefix: 'continuity-unreachable' },
      );
    } finally {
      await through.close();
      await relay.close();
    }
  });

  it('no event feed (lost, or off), the comparisons reading the broker: no gap and no snapshot, a change found carries the span since the last reading, unknown inside it', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 1000));
        const { trail, env, seals, seal } = sealedInto(fixture, vhost);
        const w = await fixture.start({
          vhost,
          client,
          seal,
          heartbeatMs: 100,
          gapAfterMs: 800,
          events: false,
        });
        // A comparison after the first snapshot's: the span of what the next one finds starts at it.
        await waitFor(() => Date.now() > Date.parse(w.watcher.health().lastCompare?.at ?? '') + 5, {
          deadlineMs: 1_000,
          intervalMs: 5,
        });
        await w.watcher.compare('interval');
        const read = w.watcher.health().lastCompare?.at ?? '';
        await client.putPolicy('user', policy(vhost, 2000));
        await w.watcher.compare('interval');
        expect(seals.map((x) => (x.kind === 'snapshot' ? x.why : x.kind))).toEqual(['first']);
        const [change] = w.changes;
        if (!change?.between) throw new Error('no span on the change found');
        expect(change.between.from.toISOString()).toBe(read);
        expect(change.between.to.toISOString()).toBe(w.watcher.health().lastCompare?.at);
        await trail.append(outsideEntry(change, undefined, new Date()));
        const { from, to } = change.between;
        const mid = (from.getTime() + to.getTime()) / 2;
        expect(await stateAt(trail, env, vhost, mid)).toMatchObject({
          known: false,
          why: 'gap',
          gap: { from: from.toISOString(), to: to.toISOString() },
        });
        const at = async (ms: number) => {
          const s = await stateAt(trail, env, vhost, ms);
          return s.known ? s.state.user.map((p) => p.definition) : s;
        };
        expect(await at(from.getTime() - 1)).toEqual([{ 'message-ttl': 1000 }]);
        expect(await at(to.getTime())).toEqual([{ 'message-ttl': 2000 }]);
      },
      { client, prefix: 'continuity-nofeed' },
    );
  });

  it('seals a checkpoint once enough records follow the last snapshot, and the replay starts there', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 1000));
        const { trail, env, seals, seal, sinceSnapshot } = sealedInto(fixture, vhost);
        const w = await fixture.start({
          vhost,
          client,
          seal,
          sinceSnapshot,
          checkpointEvery: 5,
          events: false,
        });
        expect(seals.map((x) => (x.kind === 'snapshot' ? x.why : x.kind))).toEqual(['first']);
        expect(await trail.appendedSinceSnapshot(env)).toBe(0);
        // Records of another environment between: the replay of this one reads past them too.
        for (let i = 0; i < 4; i++)
          await trail.append(
            sealEntry({
              kind: 'gap',
              env: 'elsewhere',
              from: new Date(1_000 * i),
              to: new Date(1_000 * i + 500),
            }),
          );
        expect(await trail.appendedSinceSnapshot(env)).toBe(4);
        await w.watcher.compare('interval');
        expect(seals).toHaveLength(1);
        await trail.append(
          sealEntry({ kind: 'gap', env: 'elsewhere', from: new Date(9_000), to: new Date(9_500) }),
        );
        await w.watcher.compare('interval');
        expect(seals.map((x) => (x.kind === 'snapshot' ? x.why : x.kind))).toEqual(['first', 'checkpoint']);
        expect(await trail.appendedSinceSnapshot(env)).toBe(0);
        const checkpoint = seals[1];
        if (checkpoint?.kind !== 'snapshot') throw new Error('no checkpoint');
        expect(checkpoint.user.map((p) => p.definition)).toEqual([{ 'message-ttl': 1000 }]);
        const near = await trail.snapshotNear(env, Date.now(), 'before');
        expect(near?.record.why).toBe('checkpoint');
        // Nothing more while few records follow it.
        await w.watcher.compare('interval');
        expect(seals).toHaveLength(2);
        expect((await trail.verify()).ok).toBe(true);
      },
      { client, prefix: 'checkpoint' },
    );
  });

  it('a checkpoint follows in the chain only what its reading holds: records appended while its comparison waits for the events come after it', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 1000));
        const { trail, env, seals, seal, sinceSnapshot } = sealedInto(fixture, vhost);
        const w = await fixture.start({
          vhost,
          client,
          seal,
          sinceSnapshot,
          checkpointEvery: 2,
          graceMs: 1500,
        });
        await waitFor(() => w.watcher.health().mode === 'events', { deadlineMs: 10_000, what: 'events' });
        await w.watcher.compare('reconnect');
        // The events behind the broker (the state still before 1000): the next comparison reads
        // 1000, finds a difference, and waits for its event.
        await w.store.transition({ layer: 'user', vhost, name: 'cap', after: policy(vhost, 1) });
        const comparing = w.watcher.compare('interval');
        // Meanwhile the policy is edited again, and the edit recorded (as a burst is, when it ends),
        // with another record: enough for a checkpoint.
        await client.putPolicy('user', policy(vhost, 2000));
        const edit = await waitFor(() => w.changes[0], { deadlineMs: 1200, what: 'the edit, as an event' });
        await trail.append(outsideEntry(edit, undefined, new Date()));
        await trail.append(sealEntry({ kind: 'gap', env: 'elsewhere', from: new Date(0), to: new Date(1) }));
        await comparing;
        const asOf = async () => {
          const s = await stateAt(trail, env, vhost, Date.now());
          return s.known ? s.state.user.map((p) => p.definition) : s;
        };
        expect(await asOf()).toEqual([{ 'message-ttl': 2000 }]);
        // The checkpoint, once due, at the next comparison: the broker's policies as they are.
        await w.watcher.compare('interval');
        expect(seals.map((x) => (x.kind === 'snapshot' ? x.why : x.kind))).toEqual(['first', 'checkpoint']);
        expect(seals[1]?.kind === 'snapshot' && seals[1].user.map((p) => p.definition)).toEqual([
          { 'message-ttl': 2000 },
        ]);
        expect(await asOf()).toEqual([{ 'message-ttl': 2000 }]);
        expect((await trail.verify()).ok).toBe(true);
      },
      { client, prefix: 'checkpoint-wait' },
    );
  });

  it('a snapshot is never chained after a change its reading did not hold: a record appended between the first reading and its snapshot, and which --at after it answers the change', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 1000));
        const { trail, env, seals, refused, seal, trailMark } = sealedInto(fixture, vhost);
        const { broker: through, arm } = hooked(client);
        let recorded = 0;
        // Between the first reading and its snapshot: the policy edited outside the bot, and another
        // replica's record of that edit appended (the state read no longer holds).
        arm(async () => {
          await editedAndRecorded(trail, env, vhost);
          recorded = Date.now();
        });
        await fixture.start({ vhost, client, broker: through, seal, trailMark, events: false });
        expect(recorded).toBeGreaterThan(0);
        // Replayed from the snapshot: the edit is in it, or after it in the chain.
        await expectTheEditNow(trail, env, vhost);
        // The reading the edit went past was refused; the next one sealed.
        expect(kinds(refused)).toEqual(['snapshot first']);
        expect(kinds(seals)).toEqual(['snapshot first']);
        const chain = (await trail.list({ env })).reverse().map((r) => r.action);
        expect(chain).toEqual(['outside', 'snapshot']);
        expect((await trail.verify()).ok).toBe(true);
      },
      { client, prefix: 'snapshot-window' },
    );
  });

  it("nor a gap's: the watch resumes after a gap, a record appended between the reading and the gap's snapshot, and which --at after it answers the change", async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 1000));
        const { trail, env, seals, refused, seal, trailMark } = sealedInto(fixture, vhost);
        const tuning = {
          vhost,
          client,
          seal,
          trailMark,
          heartbeatMs: 100,
          gapAfterMs: 800,
          events: false,
        } as const;
        const a = await fixture.start(tuning);
        await a.stop();
        const stopped = Date.now();
        await waitFor(() => Date.now() - stopped > 1_000, { deadlineMs: 5_000, intervalMs: 50 });
        const { broker: through, arm } = hooked(client);
        arm(() => editedAndRecorded(trail, env, vhost));
        await fixture.start({ ...tuning, broker: through });
        await expectTheEditNow(trail, env, vhost);
        expect(kinds(refused)).toEqual(['snapshot gap']);
        expect(kinds(seals)).toEqual(['snapshot first', 'gap', 'snapshot gap']);
        const chain = (await trail.list({ env })).reverse().map((r) => r.action);
        expect(chain).toEqual(['snapshot', 'outside', 'gap', 'snapshot']);
        expect((await trail.verify()).ok).toBe(true);
      },
      { client, prefix: 'gap-window' },
    );
  });

  it('nor a checkpoint: another replica records an event between its reading and its append, and which --at after it answers the change', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 1000));
        const { trail, env, seals, refused, seal, sinceSnapshot, trailMark } = sealedInto(fixture, vhost);
        const { broker: through, arm } = hooked(client);
        const a = await fixture.start({
          vhost,
          client,
          broker: through,
          seal,
          sinceSnapshot,
          trailMark,
          checkpointEvery: 2,
          events: false,
        });
        // The second replica follows the events (and seals nothing: the first replica's trail).
        const b = await fixture.start({ vhost, client });
        await waitFor(() => b.watcher.health().mode === 'events', { deadlineMs: 10_000, what: 'events' });
        for (const i of [0, 1])
          await trail.append(
            sealEntry({ kind: 'gap', env: 'elsewhere', from: new Date(i), to: new Date(i + 1) }),
          );
        arm(async () => {
          await client.putPolicy('user', policy(vhost, 2000));
          const edit = await waitFor(
            () => b.changes.find((c) => c.after?.definition['message-ttl'] === 2000),
            {
              deadlineMs: 10_000,
              what: 'the edit, as an event, on the other replica',
            },
          );
          await trail.append(outsideEntry(edit, undefined, new Date()));
        });
        await a.watcher.compare('interval');
        await expectTheEditNow(trail, env, vhost);
        expect(kinds(refused)).toEqual(['snapshot checkpoint']);
        expect(kinds(seals)).toEqual(['snapshot first', 'snapshot checkpoint']);
        const checkpoint = seals[1];
        expect(checkpoint?.kind === 'snapshot' && checkpoint.user.map((p) => p.definition)).toEqual([
          { 'message-ttl': 2000 },
        ]);
        const chain = (await trail.list({ env })).reverse().map((r) => r.action);
        expect(chain).toEqual(['snapshot', 'outside', 'snapshot']);
        expect((await trail.verify()).ok).toBe(true);
      },
      { client, prefix: 'checkpoint-window' },
    );
  });
});
