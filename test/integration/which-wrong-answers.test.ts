/**
 * Two wrong answers `which` gave, kept fixed, on every broker under test:
 * 1. a reported policy the bot cannot read made it contradict the broker ("lo should win over
 *    look; the statistics lag") and leave the readable match out of `alsoMatched`;
 * 2. a queue of a type the bot does not know was called a classic queue, with a classic queue's
 *    vetoes invented for it.
 */
import { describe, expect, it } from 'vitest';
import { type WhichBroker, type WhichResult, which } from '../../src/commands/which/which.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn } from '../support/brokers.ts';

const { up } = await brokersUp();

/** A user policy on the real broker. */
function put(
  client: LabClient,
  vhost: string,
  name: string,
  pattern: string,
  priority: number,
  definition: Record<string, unknown>,
  applyTo = 'queues',
) {
  return client.putPolicy('user', { vhost, name, pattern, applyTo, priority, definition });
}

/** The broker's statistics lag: ask until it reports the queue's policy (`expected`). */
function reported(broker: WhichBroker, vhost: string, name: string, expected: string): Promise<WhichResult> {
  return waitFor(
    async () => {
      const r = await which({ name, vhost }, broker);
      return r.answer === 'reported' && r.inForce?.name === expected ? r : undefined;
    },
    { deadlineMs: 30_000, intervalMs: 500, what: `the broker to report ${expected} for ${name}` },
  );
}

describe.each(up.map((b) => [b.label, b] as const))('on %s', (_label, broker) => {
  // `^(?=look)l` is the repro (a lookahead, which the bot reads now); `^(?>look)` is an
  // atomic group, which it never reads: the answer must be the same for both.
  it.each([
    ['^(?=look)l', 'a lookahead'],
    ['^(?>look)', 'an atomic group the bot cannot read'],
  ])(
    'a reported policy with pattern %s (%s) above a readable match: no disagreement, the match lower-priority',
    async (pattern) => {
      await inVhostOn(broker, 'wrong', async (vhost, client) => {
        await put(client, vhost, 'look', pattern, 3, { 'max-length': 3 });
        await put(client, vhost, 'lo', '^lo', 1, { 'max-length': 4 }, 'all');
        await client.putQueue(vhost, 'lookq', { kind: 'classic' });
        const r = await reported(client, vhost, 'lookq', 'look');
        expect(r.alsoMatched).toEqual([
          { name: 'lo', priority: 1, reason: 'lower-priority', unanchored: false },
        ]);
        expect(r.disagreements).toEqual([]);
        expect(r.ambiguous).toBe(false);
      });
    },
  );

  it('a reported unreadable policy tied with a readable one: a tie, not a disagreement', async () => {
    await inVhostOn(broker, 'wrong', async (vhost, client) => {
      await put(client, vhost, 'look', '^(?>look)', 2, { 'max-length': 3 });
      await put(client, vhost, 'lo', '^lo', 2, { 'max-length': 4 });
      await client.putQueue(vhost, 'lookq', { kind: 'classic' });
      // The broker picks one of the two; the bot says which it reports and that the other ties.
      const r = await waitFor(
        async () => {
          const a = await which({ name: 'lookq', vhost }, client);
          return a.answer === 'reported' && a.inForce ? a : undefined;
        },
        { deadlineMs: 30_000, intervalMs: 500, what: 'the broker to report lookq' },
      );
      expect(r.disagreements).toEqual([]);
      if (r.inForce?.name === 'look') {
        expect(r.alsoMatched).toEqual([
          { name: 'lo', priority: 2, reason: 'same-priority', unanchored: false },
        ]);
        expect(r.ambiguous).toBe(true);
        expect([...(r.candidates ?? [])].sort()).toEqual(['lo', 'look']);
      } else {
        // `lo` reported: whether `look` matches, the bot cannot read; it says so, and claims no tie.
        expect(r.unreadable.map((u) => u.name)).toEqual(['look']);
      }
    });
  });

  it('a readable policy above the reported unreadable one is still a disagreement', async () => {
    await inVhostOn(broker, 'wrong', async (vhost, client) => {
      await put(client, vhost, 'look', '^(?>look)', 3, { 'max-length': 3 });
      await client.putQueue(vhost, 'lookq', { kind: 'classic' });
      await reported(client, vhost, 'lookq', 'look');
      // Made higher a moment ago: until the report catches up, the bot's reading and the report differ.
      await put(client, vhost, 'lo', '^lo', 5, { 'max-length': 4 });
      // The broker moves to `lo` at once (the record is current); a report that still says `look`
      // would be the contradiction. Asked with the report pinned to `look`, the bot says so.
      const pinned: WhichBroker = {
        ...bound(client),
        getQueue: async (v, n) => {
          const q = await client.getQueue(v, n);
          return q && { ...q, policy: 'look' };
        },
        queuePolicyFromRecord: async () => 'look',
      };
      const r = await which({ name: 'lookq', vhost }, pinned);
      expect(r.disagreements.join(' ')).toMatch(/lo \(priority 5\) should win over look/);
    });
  });

  it('a queue of a type the bot does not know: its type as the broker says, no classic vetoes invented', async () => {
    await inVhostOn(broker, 'wrong', async (vhost, client) => {
      // `hi` sets delivery-limit, which classic queues refuse; nobody knows what a new type refuses.
      await put(client, vhost, 'hi', '^mq', 5, { 'delivery-limit': 5 });
      await put(client, vhost, 'lo', '^mq', 1, { 'max-length': 4 });
      await client.putQueue(vhost, 'mq.x', { kind: 'classic' });
      await reported(client, vhost, 'mq.x', 'lo');
      // Neither broker under test has the MQTT plugin (which adds rabbit_mqtt_qos0_queue), and the
      // brokers are not ours to reconfigure: the real broker's answer, with its type word replaced.
      const newType: WhichBroker = {
        ...bound(client),
        getQueue: async (v, n) => {
          const q = await client.getQueue(v, n);
          return q && { ...q, type: 'rabbit_mqtt_qos0_queue' };
        },
      };
      const r = await which({ name: 'mq.x', vhost }, newType);
      expect(r.object).toMatchObject({ kind: 'rabbit_mqtt_qos0_queue', exists: true, kindAssumed: false });
      expect(r.object.keyRulesKnown).toBe(false);
      expect(r.inForce?.name).toBe('lo');
      expect(r.alsoMatched).toEqual([
        { name: 'hi', priority: 5, reason: 'key-rules-unknown', unanchored: false },
      ]);
      expect(r.alsoMatched.some((m) => m.reason === 'refused-key')).toBe(false);
      expect(r.disagreements).toEqual([]);
    });
  });
});

/** The client's methods `which` uses, bound, so a test can replace one of them. */
function bound(client: LabClient): WhichBroker {
  return {
    overview: () => client.overview(),
    getQueue: (v, n) => client.getQueue(v, n),
    getExchange: (v, n) => client.getExchange(v, n),
    queuePolicyFromRecord: (v, n) => client.queuePolicyFromRecord(v, n),
    listPolicies: (v) => client.listPolicies(v),
    listOperatorPolicies: (v) => client.listOperatorPolicies(v),
    federation: (v) => client.federation(v),
  };
}
