/**
 * Reading in two steps answers as reading whole, on each real broker and the cluster: random
 * worlds (queues of several services, names with characters a filter must escape, some with
 * messages, some with `x-expires`; user policies with caps and expiries) and, on each, random
 * previews, plans of random files and the lint, each asked twice: through the client as it is
 * (the records without statistics; the statistics of what the answer reaches alone: the name
 * filter's pages, changed patterns asked together, statistics.ts for names) and through the same
 * client made to read every listing whole (no name filter at all). The two answers are equal but
 * for when they were read. The statistics settle first (polled, never slept on).
 *
 * Seed: TWO_STEP_SEED=<n> replays a run (printed); TWO_STEP_WORLDS=<n> worlds per broker (default 2).
 */
import { describe, expect, it } from 'vitest';
import { lint } from '../../src/commands/lint/lint.ts';
import { readDefinitions } from '../../src/definitions/read.ts';
import { planFile } from '../../src/plan/plan.ts';
import type { Transition } from '../../src/policy/index.ts';
import { type PreviewInput, preview } from '../../src/preview/preview.ts';
import type { ManagementClient } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { statisticsPlan } from '../../src/rabbit/statistics.ts';
import { effectsOfChanges } from '../../src/watch/effect.ts';
import { waitFor } from '../support/broker.ts';
import { brokersUp, inVhostOn } from '../support/brokers.ts';
import { lengthHistoryHolds, messages } from '../support/messages.ts';
import { type Rng, rng } from '../support/rng.ts';

const { up } = await brokersUp({ cluster: true });
const SEED = Number(process.env.TWO_STEP_SEED ?? Date.now() % 1_000_000);
const WORLDS = Number(process.env.TWO_STEP_WORLDS ?? 2);

const SERVICES = ['orders', 'billing', 'Orders', 'ship-ment', 'a.b', 'plus+1', 'été', 'x[1]'];

/** The same client, every listing read whole: no name filter, no statistics by name. */
function whole(client: ManagementClient): ManagementClient {
  const view = Object.create(client) as ManagementClient;
  for (const m of ['findQueues', 'findQueueStats', 'queueStatsOf'] as const)
    Object.defineProperty(view, m, { value: undefined });
  return view;
}

/** An answer without when it was read and how long it took (times in its sentences too). */
function timeless(x: unknown): unknown {
  const TIMED = new Set(['sampledAt', 'ms', 'asOf', 'at', 'by']);
  return JSON.parse(
    JSON.stringify(x, (k, v) =>
      TIMED.has(k) ? undefined : typeof v === 'string' ? v.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>') : v,
    ),
  );
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function policyOf(r: Rng, i: number) {
  const service = r.pick(SERVICES);
  const pattern = r.pick([
    `^${escapeRe(service)}\\.`,
    `\\.q${r.int(3)}`,
    `^(${escapeRe(service)}|${escapeRe(r.pick(SERVICES))})\\.q1`,
    `q${r.int(10)}$`,
  ]);
  const definition: Record<string, unknown> = r.chance(0.6)
    ? { 'max-length': r.int(6) }
    : { expires: 3_600_000 + r.int(10) * 1000 }; // never reached while the test runs
  return { name: `p${i}`, pattern, priority: r.int(4), definition };
}

interface World {
  readonly queues: { name: string; messages: number; expires: boolean }[];
  readonly policies: ReturnType<typeof policyOf>[];
}

function worldOf(r: Rng): World {
  // A few queues an outside change reaches with messages, whatever else is drawn.
  const queues: World['queues'] = [0, 1, 2].map((i) => ({
    name: `orders.x${i}`,
    messages: 3 + i,
    expires: false,
  }));
  const seen = new Set<string>(queues.map((q) => q.name));
  for (let i = 0; i < 60; i++) {
    const name = `${r.pick(SERVICES)}.q${r.int(40)}`;
    if (seen.has(name)) continue;
    seen.add(name);
    queues.push({ name, messages: r.chance(0.4) ? 1 + r.int(8) : 0, expires: r.chance(0.2) });
  }
  return { queues, policies: Array.from({ length: 5 }, (_, i) => policyOf(r, i)) };
}

describe.each(up)('two steps answer as one listing, on $label', (broker) => {
  it(`random worlds (seed ${SEED})`, async () => {
    for (let w = 0; w < WORLDS; w++) {
      const r = rng(SEED + w);
      const world = worldOf(r);
      await inVhostOn(broker, 'two-step', async (vhost, client: LabClient) => {
        for (const q of world.queues)
          await client.putQueue(vhost, q.name, {
            kind: 'classic',
            ...(q.expires ? { arguments: { 'x-expires': 3_600_000 } } : {}),
          });
        const amqp = await messages(broker, vhost);
        try {
          for (const q of world.queues) if (q.messages) await amqp.publish(q.name, q.messages);
        } finally {
          await amqp.close();
        }
        for (const p of world.policies)
          await client.putPolicy('user', {
            vhost,
            name: p.name,
            pattern: p.pattern,
            priority: p.priority,
            applyTo: 'queues',
            definition: p.definition,
          });
        // The statistics settled: every queue's reported, and the same twice in a row.
        let last = '';
        await waitFor(
          async () => {
            const seen: string[] = [];
            for await (const q of client.streamQueueStats(vhost))
              seen.push(`${q.name}=${q.live?.ready ?? '?'}/${q.live?.bytes ?? '?'}`);
            // Every queue reported, its bytes those of its messages (the caps may have cut them).
            const ok =
              seen.length === world.queues.length &&
              seen.every((x) => {
                const [ready, bytes] = (x.split('=')[1] as string).split('/');
                return ready !== '?' && Number(bytes) === Number(ready) * 10;
              });
            const same = seen.sort().join() === last;
            last = seen.sort().join();
            return ok && same;
          },
          { what: 'the statistics to settle', deadlineMs: 60_000, intervalMs: 300 },
        );
        const label = `seed ${SEED + w} on ${broker.label}`;

        // The statistics of some queues by name: exactly those (case, escapes, UTF-8), as listed whole.
        const all = new Map<string, unknown>();
        for await (const q of client.streamQueueStats(vhost)) all.set(q.name, q.live);
        for (let k = 0; k < 3; k++) {
          const some = world.queues.filter(() => r.chance(0.3)).map((q) => q.name);
          const got = new Map<string, unknown>();
          for await (const q of client.queueStatsOf(vhost, some, world.queues.length))
            got.set(q.name, q.live);
          expect([...got.keys()].sort(), label).toEqual([...some].sort());
          for (const [name, live] of got)
            expect(timeless(live), `${label}: ${name}`).toEqual(timeless(all.get(name)));
        }

        // Preview: a random change, each action.
        for (const action of ['create', 'edit', 'delete'] as const) {
          const target = action === 'create' ? policyOf(r, 9) : r.pick(world.policies);
          const input: PreviewInput = {
            action,
            name: target.name,
            layer: 'user',
            vhost,
            fields:
              action === 'delete'
                ? {}
                : {
                    pattern: policyOf(r, 9).pattern,
                    applyTo: 'queues',
                    priority: r.int(4),
                    definition: { 'max-length': r.int(4) },
                  },
          };
          const [a, b] = [await preview(input, client), await preview(input, whole(client))];
          expect(timeless(a), `${label}: preview ${JSON.stringify(input)}`).toEqual(timeless(b));
        }

        // Plan: a file changing every cap and adding two policies.
        const file = JSON.stringify({
          policies: [...world.policies, policyOf(r, 7), policyOf(r, 8)].map((p) => ({
            vhost,
            name: p.name,
            pattern: r.chance(0.5) ? p.pattern : policyOf(r, 0).pattern,
            'apply-to': 'queues',
            priority: p.priority,
            definition: 'max-length' in p.definition ? { 'max-length': r.int(3) } : p.definition,
          })),
          queues: [],
        });
        const read = readDefinitions(file);
        if (!read.ok) throw new Error(read.problem);
        const [pa, pb] = [await planFile(read.file, client), await planFile(read.file, whole(client))];
        expect(pa.status, label).toBe('planned');
        expect(timeless(pa), `${label}: plan`).toEqual(timeless(pb));

        // Lint: expires-idle reads the queues with an expiry alone.
        const [la, lb] = [
          await lint({ vhost }, client, { env: 'test' }),
          await lint({ vhost }, whole(client), { env: 'test' }),
        ];
        expect(la.answer, label).not.toBe('not-asked');
        expect(timeless(la), `${label}: lint`).toEqual(timeless(lb));

        // A change made outside the bot: its effect from the numbers sampled just before it.
        const readyOf = (name: string) => (all.get(name) as { ready?: number } | null)?.ready ?? 0;
        const held = world.queues.find((q) => q.name.startsWith('orders.') && readyOf(q.name) > 0);
        if (held) {
          await lengthHistoryHolds(client, vhost, held.name, readyOf(held.name));
          const outside = {
            vhost,
            name: 'outside',
            pattern: '^orders\\.',
            applyTo: 'queues',
            priority: 9,
            definition: { 'max-length': 0 },
          };
          const at = new Date();
          await client.putPolicy('user', outside);
          const change: Transition = { layer: 'user', vhost, name: 'outside', before: null, after: outside };
          const [ea, eb] = [
            await effectsOfChanges(client, [change], { asOf: at }),
            await effectsOfChanges(whole(client), [change], { asOf: at }),
          ];
          expect(ea[0]?.impact.totals.messagesLost, label).toBeGreaterThan(0);
          expect(timeless(ea), `${label}: outside change`).toEqual(timeless(eb));
        }
      });
    }
  }, 300_000);
});

describe('the names asked for in pages', () => {
  it('a few of many: pages; most, or too many pages: the whole listing', () => {
    const names = Array.from({ length: 3000 }, (_, i) => `svc${i % 200}.q${Math.floor(i / 200)}`);
    expect(statisticsPlan(names.slice(0, 400), 30_000)).toMatchObject({ whole: false });
    expect(statisticsPlan(names.slice(0, 2000), 3000)).toEqual({ whole: true });
    expect(statisticsPlan([], 10)).toEqual({ whole: false, filters: [] });
  });
});
