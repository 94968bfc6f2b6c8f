/**
 * src/watch/effect.ts: the numbers a burst's impact reads are those of every queue a change
 * reaches, however the inventory lists them: with the records in one listing (a burst of user
 * changes, where it keeps only the reached queues' numbers), or beside them in a listing of
 * their own (a source without the combined listing, or an operator change), where they may
 * arrive before the records that say which queues are reached.
 */
import { describe, expect, it } from 'vitest';
import type { Transition } from '../../src/policy/compare.ts';
import type { Policy } from '../../src/policy/types.ts';
import type { InventorySource } from '../../src/rabbit/inventory.ts';
import type { QueueListing } from '../../src/rabbit/responses.ts';
import { effectsOfChanges } from '../../src/watch/effect.ts';
import { listing, liveQueue } from '../support/live.ts';

const policy = (name: string, definition: Policy['definition']): Policy => ({
  vhost: 'v',
  name,
  pattern: '^a\\.',
  applyTo: 'queues',
  priority: 0,
  definition,
});

const NAMES = ['a.1', 'b.1', 'a.2', 'b.2', 'a.3'];
const numberOf = (n: string) => 20 + Number(n.slice(2)) * 2 + (n.startsWith('b.') ? 1 : 0);
const numbers = new Map(NAMES.map((n) => [n, numberOf(n)]));

/** The vhost after the change: `p` (user) caps a.* at 5 messages (was 50), `o` (operator) at 50 bytes (was 5,000). */
function source(combined: boolean, names: readonly string[] = NAMES): InventorySource {
  const queue = (name: string, policy: string | null | undefined): QueueListing => ({
    name,
    vhost: 'v',
    kind: 'classic',
    type: 'classic',
    arguments: {},
    policy,
  });
  const reported = (name: string) => (name.startsWith('a.') ? 'p' : null);
  return {
    overview: async () => ({ version: { major: 3, minor: 10, patch: 8 } }),
    listPolicies: async () => [policy('p', { 'max-length': 5 })],
    listOperatorPolicies: async () => [policy('o', { 'max-length-bytes': 50 })],
    streamQueues: () => listing(names.map((n) => queue(n, reported(n)))),
    streamExchanges: () => listing([]),
    streamQueueStats: () => listing(names.map((name) => ({ name, live: liveQueue(numberOf(name)) }))),
    ...(combined
      ? {
          streamQueuesLive: () =>
            listing(names.map((n) => ({ queue: queue(n, undefined), live: liveQueue(numberOf(n)) }))),
        }
      : {}),
    federation: async () => ({ upstreams: new Set(), upstreamSets: new Set(), links: null }),
  };
}

const change = (layer: 'user' | 'operator'): Transition =>
  layer === 'user'
    ? {
        layer,
        vhost: 'v',
        name: 'p',
        before: policy('p', { 'max-length': 50 }),
        after: policy('p', { 'max-length': 5 }),
      }
    : {
        layer,
        vhost: 'v',
        name: 'o',
        before: policy('o', { 'max-length-bytes': 5000 }),
        after: policy('o', { 'max-length-bytes': 50 }),
      };

describe('effectsOfChanges: the reached queues have their numbers', () => {
  it.each<[string, boolean, 'user' | 'operator']>([
    ['a user change, records and numbers in one listing', true, 'user'],
    ['a user change, the numbers in a listing of their own', false, 'user'],
    ['an operator change (always two listings)', true, 'operator'],
  ])('%s', async (_, combined, layer) => {
    const [effect] = await effectsOfChanges(source(combined), [change(layer)]);
    expect(effect?.objects.map((o) => [o.name, o.now?.messages])).toEqual([
      ['a.1', numbers.get('a.1')],
      ['a.2', numbers.get('a.2')],
      ['a.3', numbers.get('a.3')],
    ]);
    expect(effect?.impact.unknown).toBe(0);
  });

  it('in one listing of thousands: every reached queue has its numbers, across the batches they are kept in', async () => {
    // The inventory asks which numbers to keep for up to 1,024 queues at once (inventory.ts).
    const many = Array.from({ length: 1500 }, (_, i) => [`a.${i}`, `b.${i}`]).flat();
    const [effect] = await effectsOfChanges(source(true, many), [change('user')]);
    expect(effect?.objects).toHaveLength(1500);
    for (const o of effect?.objects ?? []) expect(o.now?.messages, o.name).toBe(numberOf(o.name));
    expect(effect?.impact.unknown).toBe(0);
  });
});
