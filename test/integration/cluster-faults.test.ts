/**
 * The terminal and the bot on a real three-node cluster (`scripts/cluster`, RabbitMQ 4.3) with
 * nodes stopped under them: node 1 (the first URL) stopped, the answers come through node 2; the
 * bot applies once and audits once; a change made through node 3 while the event follower's AMQP
 * connection was on node 1 is caught; a node stopped in the middle of an apply leaves it applied
 * once or not at all; a node started again is back in /readyz without a restart. Every node
 * stopped here is started again in `afterAll`.
 *
 * Skipped, loudly, when the cluster is not up, unless CLUSTER_REQUIRED=1 (.ci/run sets it once
 * `scripts/cluster` succeeded).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { createHealthMonitor } from '../../src/bot/health.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { LabClient } from '../../src/rabbit/lab.ts';
import type { FileInput } from '../../src/workflow/types.ts';
import { brokerCredentials, uniqueName, vhostOnEveryNode, waitFor } from '../support/broker.ts';
import { CLUSTER, reachable } from '../support/brokers.ts';
import { runRmq } from '../support/cli.ts';
import { CLUSTER_WAIT_MS, lockCluster } from '../support/clusterLock.ts';
import { startFakeBroker } from '../support/fakeBroker.ts';
import { policyIn } from '../support/policies.ts';
import { type TestWatcher, watchFixture } from '../support/watch.ts';
import { APPROVER, REQUESTER, settled, type WorkflowFixture, workflowFixture } from '../support/workflow.ts';

const run = promisify(execFile);
const up = (await reachable(CLUSTER)) || CLUSTER.required;
if (!up) {
  console.warn(`\n*** SKIPPED: the cluster at ${CLUSTER.url} is not running (run ${CLUSTER.script}). ***\n`);
}

const urls = CLUSTER.urls as readonly string[];
const [node1, node2] = urls as [string, string, string];
const stopped = new Set<number>();

async function stopNode(n: number): Promise<void> {
  stopped.add(n);
  await run('scripts/cluster', ['stop', String(n)], { timeout: 90_000 });
}

async function startNode(n: number): Promise<void> {
  await run('scripts/cluster', ['start', String(n)], { timeout: 240_000 });
  stopped.delete(n);
}

const cliEnv = { RMQ_URL: urls.join(','), ...brokerCredentials() };
const json = async (argv: string[]) => {
  const r = await runRmq({ RMQ_USER: cliEnv.user, RMQ_PASSWORD: cliEnv.password, RMQ_URL: cliEnv.RMQ_URL }, [
    ...argv,
    '--json',
  ]);
  return { code: r.code, body: JSON.parse(r.out) as Record<string, unknown> };
};

/** A client of every node that pushes the node of each policy write a node answered to `into`. */
const writesAnswered = (into: string[]) =>
  new ManagementClient({
    url: urls,
    ...brokerCredentials(),
    onCall: (c) => {
      if (c.method === 'PUT' && c.path.includes('/policies/') && c.status !== null) into.push(c.node);
    },
  });

const input = (vhost: string, over: Partial<FileInput> = {}): FileInput => ({
  vhost,
  layer: 'user',
  action: 'create',
  policy: 'limits',
  fields: { pattern: '^orders', definition: { 'max-length': 1000 } },
  requester: { user: REQUESTER, reason: 'incident 42' },
  origin: { channel: 'C0INCIDENT' },
  ...over,
});

describe.skipIf(!up)('a cluster with nodes stopped under the terminal and the bot', () => {
  let admin: LabClient;
  let fx: WorkflowFixture;
  let watch: ReturnType<typeof watchFixture>;
  let watcher: TestWatcher;
  let watchClient: ManagementClient;
  const vhost = uniqueName('cluster');

  let release: (() => void) | undefined;

  beforeAll(async () => {
    // The cluster to this suite alone: the differentials on it wait (test/support/clusterLock.ts).
    release = await lockCluster();
    admin = new LabClient({ url: urls, ...brokerCredentials() });
    await admin.putVhost(vhost);
    await vhostOnEveryNode(urls, vhost);
    await admin.putQueue(vhost, 'orders', { kind: 'quorum' });
    await admin.putPolicy('user', policyIn(vhost)('base', '.*', 0, { 'max-length': 5000 }, 'queues'));
    fx = workflowFixture(admin);
    // The follower connects to node 1 (the first AMQP URL) before node 1 stops.
    watch = watchFixture(CLUSTER);
    watchClient = new ManagementClient({ url: urls, ...brokerCredentials() });
    watcher = await watch.start({ vhost, client: watchClient });
    await waitFor(() => watcher.watcher.health().mode === 'events', { deadlineMs: 20_000, what: 'events' });
    await stopNode(1);
  }, CLUSTER_WAIT_MS + 180_000);

  afterAll(async () => {
    for (const n of [...stopped]) await startNode(n);
    await watch?.close();
    await fx?.close();
    await watchClient?.close();
    await admin?.deleteVhost(vhost);
    await admin?.close();
    release?.();
  }, 600_000);

  it('node 1 stopped: which, policies, preview and lint answer through node 2, and say so', async () => {
    const which = await json(['which', 'orders', '--vhost', vhost]);
    expect(which.code).toBe(0);
    expect(which.body).toMatchObject({ node: node2, inForce: { name: 'base' }, nothingGoverns: false });
    const policies = await json(['policies', '--vhost', vhost]);
    expect(policies.code).toBe(0);
    expect(policies.body.node).toBe(node2);
    const preview = await json([
      'preview',
      'edit',
      'base',
      '--vhost',
      vhost,
      '--definition',
      '{"max-length":4000}',
    ]);
    expect(preview.code).toBe(0);
    expect(preview.body.node).toBe(node2);
    const lint = await json(['lint', '--vhost', vhost]);
    expect(lint.code).toBe(0);
    expect(lint.body.node).toBe(node2);
  });

  it('node 1 stopped: the bot files, approves and applies a change once, and audits it once', async () => {
    const puts: string[] = [];
    const client = writesAnswered(puts);
    // Its own worker, closed with its client: a worker left running would take the next test's jobs.
    const worker = await fx.worker(client);
    try {
      const wf = fx.workflow({ client });
      const { request } = await wf.file(input(vhost));
      await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
      const done = await settled(wf, request.id);
      expect(done.state, JSON.stringify(done)).toBe('applied');
      expect(puts).toEqual([node2]);
      expect(await new AuditTrail(fx.redis, fx.keyPrefix).list({ vhost })).toHaveLength(1);
    } finally {
      await worker.close();
      await client.close();
    }
  });

  it("a change made through node 3's API while the follower was on node 1 (stopped) is caught as an event", async () => {
    // The follower left node 1 for another node: events again, not the interval's comparison.
    await waitFor(() => watcher.watcher.health().mode === 'events', { deadlineMs: 30_000, what: 'events' });
    const before = watcher.changes.length;
    const node3 = new LabClient({ url: urls[2] as string, ...brokerCredentials() });
    try {
      await node3.putPolicy('user', policyIn(vhost)('outside', '^nothing', 3, { 'max-length': 7 }, 'queues'));
    } finally {
      await node3.close();
    }
    const caught = await waitFor(() => watcher.changes.slice(before).find((c) => c.name === 'outside'), {
      deadlineMs: 30_000,
      what: 'the change through node 3',
    });
    expect(caught.after?.definition).toEqual({ 'max-length': 7 });
    expect(caught.source).toBe('events');
  });

  it('node 1 started again: /readyz reports it answering, a change through it is caught as an event, without a restart of anything', async () => {
    const monitor = createHealthMonitor({
      brokers: new Map([['cluster', watchClient]]),
      redis: { ping: async () => 'PONG' },
      timeoutMs: 2_000,
    });
    await monitor.checkNow();
    expect(monitor.readiness().brokers.cluster).toMatchObject({
      state: 'ok',
      nodes: { [node1]: { state: 'failing' }, [node2]: { state: 'ok' } },
    });
    await startNode(1);
    await monitor.checkNow();
    expect(monitor.readiness().brokers.cluster?.nodes?.[node1]).toMatchObject({ state: 'ok' });
    monitor.stop();
    // The follower is still following (on another node) or back on one: events, not the interval.
    await waitFor(() => watcher.watcher.health().mode === 'events', { deadlineMs: 20_000, what: 'events' });
    // A change made through node 1, back: caught as an event, by the same watcher.
    const before = watcher.changes.length;
    const on1 = new LabClient({ url: node1, ...brokerCredentials() });
    try {
      await on1.putPolicy(
        'user',
        policyIn(vhost)('after-restart', '^none', 4, { 'max-length': 8 }, 'queues'),
      );
    } finally {
      await on1.close();
    }
    const caught = await waitFor(
      () => watcher.changes.slice(before).find((c) => c.name === 'after-restart'),
      { deadlineMs: 30_000, what: 'the change through node 1' },
    );
    expect(caught.source).toBe('events');
    // And the terminal asks it again like any node.
    const which = await runRmq({ RMQ_USER: cliEnv.user, RMQ_PASSWORD: cliEnv.password, RMQ_URL: node1 }, [
      'which',
      'orders',
      '--vhost',
      vhost,
      '--json',
    ]);
    expect(which.code, which.err).toBe(0);
  }, 240_000);

  it('a node stopped in the middle of an apply, its write done and unanswered: read back through another node, applied once, never twice, audited once', async () => {
    // A proxy in front of each node: the first policy write goes through to its node, the node is
    // stopped before the answer comes back, and the answer never does (the client times out).
    const proxies = await Promise.all(
      urls.map((target) => startFakeBroker({ fallback: { kind: 'proxy', target } })),
    );
    let stopping: Promise<void> | undefined;
    let routed = false;
    for (const [i, proxy] of proxies.entries()) {
      proxy.setRoute(
        (url, method) => {
          if (routed || method !== 'PUT' || !url.includes('/api/policies/')) return false;
          routed = true;
          return true;
        },
        {
          kind: 'proxy-hang',
          target: urls[i] as string,
          onAnswered: () => {
            stopping = stopNode(i + 1);
          },
        },
      );
    }
    const client = new ManagementClient({
      url: proxies.map((p) => p.url),
      ...brokerCredentials(),
      timeouts: { headersMs: 3_000 },
    });
    const writes = () => proxies.flatMap((p) => p.requests.filter((q) => q.method === 'PUT'));
    const worker = await fx.worker(client);
    try {
      const wf = fx.workflow({ client });
      const { request } = await wf.file(
        input(vhost, { policy: 'mid', fields: { pattern: '^mid', definition: { 'max-length': 9 } } }),
      );
      await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
      const done = await settled(wf, request.id);
      await stopping;
      const seen = JSON.stringify({
        done,
        requests: proxies.map((p) => p.requests.map((q) => `${q.method} ${q.url}`)),
      });
      expect(stopping, seen).toBeDefined();
      expect(done.state, seen).toBe('applied');
      expect(writes()).toHaveLength(1);
      // The node that took the write is down; the policy is there, through the others.
      expect((await admin.getPolicy('user', vhost, 'mid'))?.definition).toEqual({ 'max-length': 9 });
      const records = (await new AuditTrail(fx.redis, fx.keyPrefix).list({ vhost })).filter(
        (r) => 'requestId' in r && r.requestId === request.id,
      );
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ action: 'create', policy: 'mid' });
    } finally {
      await worker.close();
      await client.close(0);
      await Promise.all(proxies.map((p) => p.close()));
    }
  }, 180_000);
});
