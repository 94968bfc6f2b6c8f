/**
 * A quorum queue whose leader's node stops: `which` and `preview` through node 1, sampled through
 * the leader's move (its statistics pause, src/rabbit/README.md), always name the policy that
 * governs it, and its numbers are the real ones or unknown, never a partial view's.
 * A classic queue whose cluster node is stopped: `which`, the preview (terminal text and `--json`)
 * and the audit's observed numbers of an apply say its node is down — never "nothing governs it",
 * never a prediction from the nodes that answer. The queue is declared
 * through node 3 (a classic queue lives on the node that declared it), node 3 is stopped, and
 * `rmq preview` asks node 1. Inside the cluster lock; node 3 is started again in `afterAll`.
 * Skipped, loudly, when the cluster is not up, unless CLUSTER_REQUIRED=1.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observedQueueWords } from '../../src/audit/observedWords.ts';
import { AuditTrail } from '../../src/audit/trail.ts';
import { type WhichResult, which } from '../../src/commands/which/which.ts';
import { sleep } from '../../src/core/retry.ts';
import { NODE_DOWN } from '../../src/policy/impact/impactWords.ts';
import type { PreviewObject } from '../../src/preview/impact.ts';
import { preview } from '../../src/preview/preview.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, uniqueName, vhostOnEveryNode, waitFor } from '../support/broker.ts';
import { CLUSTER, reachable } from '../support/brokers.ts';
import { runRmq } from '../support/cli.ts';
import { CLUSTER_WAIT_MS, lockCluster } from '../support/clusterLock.ts';
import { messages } from '../support/messages.ts';
import { policyIn } from '../support/policies.ts';
import { APPROVER, REQUESTER, settled, workflowFixture } from '../support/workflow.ts';

const run = promisify(execFile);
const up = (await reachable(CLUSTER)) || CLUSTER.required;
if (!up)
  console.warn(`\n*** SKIPPED: the cluster at ${CLUSTER.url} is not running (run ${CLUSTER.script}). ***\n`);

const urls = CLUSTER.urls as readonly string[];
const [node1, , node3] = urls as [string, string, string];

describe.skipIf(!up)('queues on a stopped cluster node, asked about through node 1', () => {
  const vhost = uniqueName('nodedown');
  let admin: LabClient;
  let release: (() => void) | undefined;
  let stopped = false;
  const env = { ...brokerCredentials() };
  const authorization = `Basic ${Buffer.from(`${env.user}:${env.password}`).toString('base64')}`;
  /** which and preview of the quorum queue, sampled while its leader's node stopped. */
  const duringMove: { which: WhichResult; preview: Pick<PreviewObject, 'now' | 'impact'> | string }[] = [];
  const rmq = (argv: string[]) =>
    runRmq({ RMQ_USER: env.user, RMQ_PASSWORD: env.password, RMQ_URL: node1 }, argv);

  beforeAll(async () => {
    release = await lockCluster();
    admin = new LabClient({ url: urls, ...brokerCredentials() });
    await admin.putVhost(vhost);
    await vhostOnEveryNode(urls, vhost);
    const on3 = new LabClient({ url: node3, ...brokerCredentials() });
    try {
      await on3.putQueue(vhost, 'orders.eu', { kind: 'classic' });
    } finally {
      await on3.close();
    }
    await admin.putPolicy('user', policyIn(vhost)('limits', '^orders', 0, { 'max-length': 1000 }, 'queues'));
    // A quorum queue led by node 3 (declared through it), 5 messages, known to node 1's statistics.
    const on3q = new LabClient({ url: node3, ...brokerCredentials() });
    try {
      await on3q.putQueue(vhost, 'orders.q', { kind: 'quorum' });
    } finally {
      await on3q.close();
    }
    const amqp = await messages(CLUSTER, vhost);
    await amqp.publish('orders.q', 5);
    await amqp.close();
    const quorum = async () =>
      (await (
        await fetch(`${node1}/api/queues/${encodeURIComponent(vhost)}/orders.q`, {
          headers: { authorization },
        })
      ).json()) as { leader?: string; messages?: number };
    const led = await waitFor(async () => ((await quorum()).messages === 5 ? quorum() : undefined), {
      deadlineMs: 30_000,
      what: 'orders.q with its 5 messages in the statistics',
    });
    expect(led.leader).toBe('rmqc3@localhost');
    // which and preview through node 1, again and again while node 3 stops and its leader moves.
    const client = new ManagementClient({ url: node1, ...brokerCredentials() });
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [w, p] = await Promise.all([
          which({ name: 'orders.q', vhost }, client),
          preview(
            {
              action: 'edit',
              name: 'limits',
              layer: 'user',
              vhost,
              fields: { definition: { 'max-length': 2 } },
            },
            client,
          ),
        ]);
        const o = p.status === 'answered' ? p.objects.find((x) => x.name === 'orders.q') : undefined;
        duringMove.push({ which: w, preview: o ? { now: o.now, impact: o.impact } : p.status });
        await sleep(100); // a pace, not a wait: the machine's two cores are shared
      }
    })();
    stopped = true;
    try {
      await run('scripts/cluster', ['stop', '3'], { timeout: 90_000 });
      // One statistics interval and more after the stop: the leader's move and what follows it.
      await sleep(8_000);
    } finally {
      sampling = false;
      await sampler;
      await client.close();
    }
    // The listing through node 1 says the queue's node is down (src/rabbit/README.md).
    const http = new LabClient({ url: node1, ...brokerCredentials() });
    try {
      await waitFor(
        async () => {
          const r = await fetch(`${node1}/api/queues/${encodeURIComponent(vhost)}?columns=name,state`, {
            headers: { authorization },
          });
          const qs = (await r.json()) as { name: string; state?: string }[];
          return qs.some((q) => q.name === 'orders.eu' && q.state === 'down');
        },
        { deadlineMs: 30_000, what: 'the queue listed as down' },
      );
    } finally {
      await http.close();
    }
  }, CLUSTER_WAIT_MS + 180_000);

  afterAll(async () => {
    try {
      if (stopped) await run('scripts/cluster', ['start', '3'], { timeout: 240_000 });
      await admin?.deleteVhost(vhost);
      await admin?.close();
    } finally {
      release?.();
    }
  }, 300_000);

  it('preview delete: --json says nodeDown with now null, the text says its node is down', async () => {
    const j = await rmq(['preview', 'delete', 'limits', '--vhost', vhost, '--json']);
    expect(j.code, j.err).toBe(0);
    const body = JSON.parse(j.out) as {
      objects: { name: string; now: unknown; nodeDown?: boolean }[];
      impact?: { nodeDown?: number; unknown: number };
    };
    const q = body.objects.find((o) => o.name === 'orders.eu');
    expect(q).toMatchObject({ now: null, nodeDown: true });
    const t = await rmq(['preview', 'delete', 'limits', '--vhost', vhost]);
    expect(t.code, t.err).toBe(0);
    expect(t.out).toContain('on a cluster node that is down');
  });

  it('preview edit lowering a limit: says its node is down instead of predicting a loss', async () => {
    const t = await rmq(['preview', 'edit', 'limits', '--vhost', vhost, '--definition', '{"max-length":10}']);
    expect(t.code, t.err).toBe(0);
    expect(t.out).toContain(`${NODE_DOWN}; the ready messages above max-length 10`);
    expect(t.out).not.toContain('its statistics are not known');
    const j = await rmq([
      'preview',
      'edit',
      'limits',
      '--vhost',
      vhost,
      '--definition',
      '{"max-length":10}',
      '--json',
    ]);
    const body = JSON.parse(j.out) as {
      objects: { name: string; now: unknown; nodeDown?: boolean; impact: unknown[] }[];
    };
    const q = body.objects.find((o) => o.name === 'orders.eu');
    expect(q).toMatchObject({ now: null, nodeDown: true, impact: [{ effect: 'may-drop', nodeDown: true }] });
  });

  it("a quorum queue whose leader's node stopped: which and preview never say nothing governs it, nor predict from a partial view", () => {
    expect(duringMove.length).toBeGreaterThan(2);
    for (const { which: w, preview: p } of duringMove) {
      expect(w).toMatchObject({ answer: 'reported', inForce: { name: 'limits' }, nothingGoverns: false });
      // Its numbers are the 5 messages, or unknown: never what a node's partial view would say.
      if (w.now) expect(w.now.messages).toBe(5);
      if (typeof p === 'string') throw new Error(`preview ${p}`);
      if (p.now) {
        expect(p.now.messages).toBe(5);
        expect(p.impact).toEqual([expect.objectContaining({ effect: 'drop', messages: 3 })]);
      } else {
        expect(p.impact.every((x) => x.effect !== 'drop')).toBe(true);
      }
    }
    console.log(
      `quorum leader move: ${duringMove.length} samples, ${duringMove.filter((x) => x.which.now === null).length} with its numbers unknown`,
    );
  });

  it('which: the policy that governs it (from its record), its numbers unknown because its node is down', async () => {
    const j = await rmq(['which', 'orders.eu', '--vhost', vhost, '--json']);
    expect(j.code, j.err).toBe(0);
    expect(JSON.parse(j.out)).toMatchObject({
      object: { name: 'orders.eu', exists: true },
      inForce: { name: 'limits' },
      nothingGoverns: false,
      now: null,
      nodeDown: true,
    });
    const t = await rmq(['which', 'orders.eu', '--vhost', vhost]);
    expect(t.code, t.err).toBe(0);
    expect(t.out).toContain(`Now: unknown — ${NODE_DOWN}`);
    expect(t.out).not.toContain('Nothing governs');
  });

  // Last: it edits the policy the previews above read.
  it("an apply while the queue's node is down: the audit's observed numbers say its node is down, nothing predicted", async () => {
    const fx = workflowFixture(admin);
    try {
      // Its node down, the queue reports nothing after the write either: short deadlines.
      await fx.worker(admin, { verifyDeadlineMs: 3_000, observe: { deadlineMs: 8_000 } });
      const wf = fx.workflow();
      const { request } = await wf.file({
        vhost,
        layer: 'user',
        action: 'edit',
        policy: 'limits',
        fields: { definition: { 'max-length': 10 } },
        requester: { user: REQUESTER, reason: 'lower the cap' },
        origin: { channel: 'C0CLUSTER' },
      });
      await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
      expect((await settled(wf, request.id)).state).toBe('applied');
      const [record] = await new AuditTrail(fx.redis, fx.keyPrefix).list({ vhost });
      const observed = record && 'observed' in record ? record.observed : undefined;
      if (!observed) throw new Error(`no observed numbers in ${JSON.stringify(record)}`);
      const q = observed.queues.find((x) => x.name === 'orders.eu');
      expect(q).toMatchObject({ messagesBefore: null, nodeDown: true });
      expect(q?.predictedRemoved).toBeUndefined();
      expect(observedQueueWords(q as NonNullable<typeof q>, observed, (n) => n)).toContain(NODE_DOWN);
    } finally {
      await fx.close();
    }
  }, 120_000);
});
