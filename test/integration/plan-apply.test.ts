/**
 * `plan` on each real broker, applied as the plan says: a world set up (queues, messages,
 * policies), a definitions file planned against it, then the plan's steps written one by one
 * with plain management PUT/DELETE, and after each step the broker watched: the objects the next
 * steps depend on report the policy the plan's state says, and the queues hold the messages the
 * plan said they would (none lost where it said none would be; the loss it announced, where it
 * announced one). The issue's cases are rows here.
 */
import { describe, expect, it } from 'vitest';
import { readDefinitions } from '../../src/definitions/read.ts';
import { type Plan, type PolicyStep, planFile } from '../../src/plan/plan.ts';
import type { Policy } from '../../src/policy/types.ts';
import { brokerCredentials, uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, CLUSTER, clientFor, type TestBroker } from '../support/brokers.ts';
import { aloneOnCluster } from '../support/clusterHooks.ts';
import { management, messages } from '../support/messages.ts';
import { capNow, exportOf, ROWS, type Row } from '../support/planRows.ts';

// The cluster too (scripts/cluster): the plan's order holds on three nodes as on one.
const { up } = await brokersUp({ cluster: true });

type Api = ReturnType<typeof management>;

const ON_CLUSTER = ['a rename', 'two policies trading', 'a loss on the way'];

function writer(broker: TestBroker, vhost: string) {
  const { user, password } = brokerCredentials();
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const e = encodeURIComponent;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(new URL(path, broker.url), {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      signal: AbortSignal.timeout(30_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const base = (operator: boolean) => (operator ? 'operator-policies' : 'policies');
  return {
    put: (x: Policy, operator: boolean) =>
      call('PUT', `/api/${base(operator)}/${e(vhost)}/${e(x.name)}`, {
        pattern: x.pattern,
        'apply-to': x.applyTo,
        priority: x.priority,
        definition: x.definition,
      }),
    /** The plan's step, as a plain PUT or DELETE. */
    write: (s: PolicyStep) =>
      s.after
        ? call('PUT', `/api/${base(s.layer === 'operator')}/${e(vhost)}/${e(s.name)}`, {
            pattern: s.after.pattern,
            'apply-to': s.after.applyTo,
            priority: s.after.priority,
            definition: s.after.definition,
          })
        : call('DELETE', `/api/${base(s.layer === 'operator')}/${e(vhost)}/${e(s.name)}`),
    reported: async (queue: string) => {
      const q = await call('GET', `/api/queues/${e(vhost)}/${e(queue)}`);
      return {
        policy: (q.policy as string | null | undefined) || null,
        operatorPolicy: (q.operator_policy as string | null | undefined) || null,
      };
    },
  };
}

async function holds(api: Api, queue: string, n: number): Promise<void> {
  await api.settled(queue, n);
  expect(await api.peek(queue)).toBe(n);
}

describe.each(up.map((b) => [b.label, b] as [string, TestBroker]))(
  'plan, applied step by step, on %s',
  (_label, broker) => {
    aloneOnCluster(broker === CLUSTER);
    // On the cluster, three rows (each waits out the statistics' lag, ~10 s: CI's time): a state on
    // the way that the order avoids, two policies trading priorities, a loss no order avoids.
    const rows = broker === CLUSTER ? ROWS.filter((r) => ON_CLUSTER.some((w) => r.what.startsWith(w))) : ROWS;
    it.each(rows.map((r) => [r.what, r] as [string, Row]))('%s', async (_what, row) => {
      const client = clientFor(broker);
      const vhost = uniqueName('plan');
      await client.putVhost(vhost);
      const amqp = await messages(broker, vhost);
      try {
        const api = management(broker, vhost);
        const w = writer(broker, vhost);
        for (const x of row.live) await w.put({ ...x, vhost }, x.operator === true);
        for (const [q, n] of Object.entries(row.queues)) {
          await api.queue(q, 'classic');
          await amqp.publish(q, n);
        }
        for (const [q, n] of Object.entries(row.queues))
          await api.settled(q, Math.min(n, capNow(row.live, q)));
        const read = readDefinitions(exportOf(vhost, row.file));
        if (!read.ok) throw new Error(read.problem);
        // The statistics lag: planned once they show what is there.
        const plan = await waitFor(
          async () => {
            const r = await planFile(read.file, client, { prune: row.prune ?? false });
            if (r.status !== 'planned') throw new Error(JSON.stringify(r));
            const now = r.plan.vhosts[0]?.objects.every((o) => o.now !== null);
            return now ? r.plan : undefined;
          },
          { what: 'a plan with the statistics in' },
        );
        expect(plan.changes.map((s) => s.name)).toEqual(row.order);
        expect(plan.impact.messagesLost + plan.impact.messagesDeadLettered).toBe(row.lost);
        expect(
          plan.transitional.map((t) => ({
            name: t.name,
            step: t.step,
            messages: t.impact.reduce((n, x) => n + (x.effect === 'drop' ? x.messages : 0), 0),
          })),
        ).toEqual(row.transitional);
        await applyAndWatch(plan, w, api, row);
      } finally {
        await amqp.close();
        await client.deleteVhost(vhost);
        await client.close();
      }
    });
  },
);

/** Writes each step and, before the next, waits for the broker to report what the plan's state says. */
async function applyAndWatch(plan: Plan, w: ReturnType<typeof writer>, api: Api, row: Row): Promise<void> {
  const announced = new Map(plan.transitional.map((t) => [t.name, t]));
  for (const [i, step] of (plan.changes as PolicyStep[]).entries()) {
    await w.write(step);
    for (const o of step.verify) {
      await waitFor(
        async () => {
          const r = await w.reported(o.name);
          return r.policy === o.policy && r.operatorPolicy === o.operatorPolicy;
        },
        { what: `${o.name} reported under ${o.policy}/${o.operatorPolicy} after step ${i + 1}` },
      );
    }
    // Where the plan said nothing is lost on the way, nothing is: every queue still holds all it
    // held, or what the end state keeps (checked once the end is written).
    if (i < plan.changes.length - 1) {
      for (const [q, n] of Object.entries(row.queues)) {
        const said = announced.get(q);
        if (said && said.step <= i) continue;
        if ((row.after[q] ?? n) < n) continue;
        expect(await api.peek(q)).toBe(n);
      }
    }
  }
  for (const o of plan.vhosts[0]?.objects ?? []) {
    if (o.after.candidates) continue;
    await waitFor(
      async () => {
        const r = await w.reported(o.name);
        return r.policy === o.after.policy && r.operatorPolicy === o.after.operatorPolicy;
      },
      { what: `${o.name} reported under the end state's policies` },
    );
  }
  for (const [q, n] of Object.entries(row.after)) await holds(api, q, n);
}
