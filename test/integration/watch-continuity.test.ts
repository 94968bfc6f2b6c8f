/**
 * The watch's continuity, on the machine's broker and Redis: the first watch seals one snapshot;
 * a second replica of a watch that holds seals nothing; every replica down for longer than the
 * gap's threshold, then two started at once: exactly one gap (from the last beat, before the stop,
 * to the comparison's reading) and one snapshot, the change made meanwhile found as made between
 * them; comparisons while the watch holds seal nothing more (the trail stays bounded).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateAt } from '../../src/audit/replay.ts';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { outsideEntry } from '../../src/watch/outside.ts';
import { sealEntry } from '../../src/watch/seal.ts';
import type { Seal } from '../../src/watch/watcher.ts';
import { waitFor, withVhost } from '../support/broker.ts';
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

/** The trail of the watched vhost's environment, and a watcher's `seal` appending to it (`seals`: each). */
function sealedInto(fixture: WatchFixture, vhost: string) {
  const trail = new AuditTrail(fixture.redis, fixture.keyPrefix);
  const env = `test-${vhost}`;
  const seals: Seal[] = [];
  const seal = async (s: Seal) => {
    seals.push(s);
    await trail.append(sealEntry(s));
  };
  return { trail, env, seals, seal, sinceSnapshot: () => trail.appendedSinceSnapshot(env) };
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

  it('seals the first snapshot once, a gap and its snapshot once, and nothing while the watch holds', async () => {
    await withVhost(
      async (vhost) => {
        await client.putPolicy('user', policy(vhost, 1000));
        const seals: Seal[] = [];
        const seal = async (s: Seal) => {
          seals.push(s);
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
});
