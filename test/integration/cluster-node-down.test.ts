/**
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
import { NODE_DOWN } from '../../src/policy/impactWords.ts';
import { LabClient } from '../../src/rabbit/lab.ts';
import { brokerCredentials, uniqueName, waitFor } from '../support/broker.ts';
import { CLUSTER, reachable } from '../support/brokers.ts';
import { runRmq } from '../support/cli.ts';
import { lockCluster } from '../support/clusterLock.ts';
import { policyIn } from '../support/policies.ts';
import { APPROVER, REQUESTER, settled, workflowFixture } from '../support/workflow.ts';

const run = promisify(execFile);
const up = (await reachable(CLUSTER)) || CLUSTER.required;
if (!up)
  console.warn(`\n*** SKIPPED: the cluster at ${CLUSTER.url} is not running (run ${CLUSTER.script}). ***\n`);

const urls = CLUSTER.urls as readonly string[];
const [node1, , node3] = urls as [string, string, string];

describe.skipIf(!up)('a classic queue on a stopped cluster node, previewed through node 1', () => {
  const vhost = uniqueName('nodedown');
  let admin: LabClient;
  let release: (() => void) | undefined;
  let stopped = false;
  const env = { ...brokerCredentials() };
  const rmq = (argv: string[]) =>
    runRmq({ RMQ_USER: env.user, RMQ_PASSWORD: env.password, RMQ_URL: node1 }, argv);

  beforeAll(async () => {
    release = await lockCluster();
    admin = new LabClient({ url: urls, ...brokerCredentials() });
    await admin.putVhost(vhost);
    const on3 = new LabClient({ url: node3, ...brokerCredentials() });
    try {
      await on3.putQueue(vhost, 'orders.eu', { kind: 'classic' });
    } finally {
      await on3.close();
    }
    await admin.putPolicy('user', policyIn(vhost)('limits', '^orders', 0, { 'max-length': 1000 }, 'queues'));
    stopped = true;
    await run('scripts/cluster', ['stop', '3'], { timeout: 90_000 });
    // The listing through node 1 says the queue's node is down (src/rabbit/README.md).
    const http = new LabClient({ url: node1, ...brokerCredentials() });
    try {
      await waitFor(
        async () => {
          const r = await fetch(`${node1}/api/queues/${encodeURIComponent(vhost)}?columns=name,state`, {
            headers: {
              authorization: `Basic ${Buffer.from(`${env.user}:${env.password}`).toString('base64')}`,
            },
          });
          const qs = (await r.json()) as { name: string; state?: string }[];
          return qs.some((q) => q.name === 'orders.eu' && q.state === 'down');
        },
        { deadlineMs: 30_000, what: 'the queue listed as down' },
      );
    } finally {
      await http.close();
    }
  }, 300_000);

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
