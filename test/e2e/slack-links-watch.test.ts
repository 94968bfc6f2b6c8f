/**
 * Links watched, end to end, on real brokers: the compiled bot (`dist/main.js`, its own Redis, the
 * fake Slack Web API) watches environment `lab`, the three-node 4.3.6 cluster, downstream of the
 * 4.0.5 broker by exchange federation (upstream `up`, policy `fed`), and a dynamic shovel from a
 * classic queue of the cluster (declared by the shovel on the node it runs on) to 4.0.5. While
 * every link runs, the bot posts nothing; the node that runs the shovel stopped (the exchange
 * links move to another node and run; the shovel, its source down, cannot), what the broker then
 * reports not running is posted once within two intervals, with the runbook's next step, and
 * recorded (`action: "links"`); `/readyz` stays ready; the node started again, one post says the
 * links are back. Two replicas of the bot share the Redis: each burst is still one post, one record. `rmq_links{state}` follows. What the broker did to each link is printed for
 * docs/broker-facts.md.
 *
 * One stop and one start of a cluster node, the node always started again; the cluster is this
 * file's alone meanwhile (clusterLock.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { type BotProcess, labBotEnv, spawnBot } from '../support/botProcess.ts';
import { admin, brokerCredentials, uniqueName, vhostOnEveryNode, waitFor } from '../support/broker.ts';
import { CLUSTER, reachable } from '../support/brokers.ts';
import { built, repoRoot } from '../support/built.ts';
import { CLUSTER_WAIT_MS, lockCluster } from '../support/clusterLock.ts';
import { type FakeSlack, renderedText, startFakeSlack } from '../support/fakeSlack.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const UPSTREAM = { url: process.env.RMQ4_URL ?? 'http://127.0.0.1:15673', amqpPort: 5673 };
const NODES = CLUSTER.urls ?? [CLUSTER.url];
const INTERVAL_MS = 4_000;
/** Two intervals, the second reading's wait (half an interval), and the post's own way to Slack. */
const TWO_INTERVALS_MS = 2 * INTERVAL_MS + INTERVAL_MS / 2 + 2_000;
const enc = encodeURIComponent;
const ready = (await reachable(CLUSTER)) && (await reachable({ ...CLUSTER, url: UPSTREAM.url }));

const cwd = mkdtempSync(join(tmpdir(), 'rmq-links-watch-'));
const vhost = uniqueName('links-watch');
let release: (() => void) | undefined;
let slack: FakeSlack;
let redis: RedisServer;
let bot: BotProcess;
/** A second replica on the same Redis: a burst is still posted once. */
let replica: BotProcess;
let url: string;

/** A GET of the management API of `base`, as JSON. */
async function get<T>(base: string, path: string): Promise<T> {
  const { user, password } = brokerCredentials();
  const res = await request(`${base}/api${path}`, {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${await res.body.text()}`);
  return (await res.body.json()) as T;
}

interface Reported {
  name: string;
  node: string;
  status: string;
  reason: string | null;
}

/** What the cluster reports running, through the first node that answers. */
async function reported(): Promise<Reported[]> {
  for (const node of NODES) {
    try {
      const [links, shovels] = await Promise.all([
        get<{ exchange?: string; node: string; status: string; error?: unknown }[]>(
          node,
          `/federation-links/${enc(vhost)}`,
        ),
        get<{ name: string; node: string; state: string; reason?: unknown }[]>(
          node,
          `/shovels/${enc(vhost)}`,
        ),
      ]);
      return [
        ...links.map((l) => ({
          name: String(l.exchange),
          node: l.node,
          status: l.status,
          reason: l.error === undefined ? null : JSON.stringify(l.error),
        })),
        ...shovels.map((s) => ({
          name: s.name,
          node: s.node,
          status: s.state,
          reason: s.reason === undefined ? null : JSON.stringify(s.reason),
        })),
      ].sort((a, b) => a.name.localeCompare(b.name));
    } catch {
      // that node is down: the next one
    }
  }
  throw new Error('no node of the cluster answers');
}

const cluster = (...args: string[]) =>
  execFileSync(join(repoRoot, 'scripts/cluster'), args, { stdio: 'pipe', timeout: 300_000 });

/** Every node started again, whatever happened (`scripts/cluster start N` waits until it rejoined). */
async function everyNodeBack(): Promise<void> {
  const nodes = await get<{ name: string; running?: boolean }[]>(
    NODES[1] ?? CLUSTER.url,
    '/nodes?columns=name,running',
  )
    .catch(() =>
      get<{ name: string; running?: boolean }[]>(NODES[2] ?? CLUSTER.url, '/nodes?columns=name,running'),
    )
    .catch(() => get<{ name: string; running?: boolean }[]>(CLUSTER.url, '/nodes?columns=name,running'));
  for (const n of nodes) if (!n.running) cluster('start', /rmqc(\d)/.exec(n.name)?.[1] ?? '');
}

const posts = (mark: number, what: RegExp) =>
  slack.calls
    .slice(mark)
    .filter((c) => c.ok && c.method === 'chat.postMessage' && what.test(String(c.args.text)));
const DOWN = /that should run (is|are) down/;
const BACK = /links? back in/;

async function health(): Promise<{
  status: number;
  links?: { lastRead?: { at: string; ok: boolean }; down?: number };
}> {
  const res = await fetch(`${url}/readyz`);
  const body = (await res.json()) as {
    watch?: { lab?: { links?: { lastRead?: { at: string; ok: boolean } } } };
  };
  return { status: res.status, ...(body.watch?.lab?.links ? { links: body.watch.lab.links } : {}) };
}

async function metric(state: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^rmq_links\\{env="lab",state="${state}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Waits for `n` more successful readings of the links than when called. */
async function readings(n: number): Promise<void> {
  const seen = new Set<string>();
  const first = (await health()).links?.lastRead?.at;
  await waitFor(
    async () => {
      const at = (await health()).links?.lastRead;
      if (at?.ok && at.at !== first) seen.add(at.at);
      return seen.size >= n;
    },
    { deadlineMs: (n + 2) * INTERVAL_MS + 10_000, intervalMs: 200, what: `${n} readings of the links` },
  );
}

beforeAll(async () => {
  if (!ready) return;
  release = await lockCluster();
  const mainJs = join((await built()).outdir, 'main.js');
  [slack, redis] = await Promise.all([startFakeSlack(), startRedisServer()]);
  const { user, password } = brokerCredentials();
  const perms = { configure: '.*', write: '.*', read: '.*' };
  // Upstream: 4.0.5, the exchange federated and the shovel's source queue.
  await admin('PUT', `/api/vhosts/${enc(vhost)}`, {}, UPSTREAM.url);
  await admin('PUT', `/api/permissions/${enc(vhost)}/${enc(user)}`, perms, UPSTREAM.url);
  for (const x of ['fed.a', 'fed.b'])
    await admin('PUT', `/api/exchanges/${enc(vhost)}/${x}`, { type: 'topic', durable: true }, UPSTREAM.url);
  await admin('PUT', `/api/queues/${enc(vhost)}/dst`, { durable: true }, UPSTREAM.url);
  // Downstream: the cluster.
  await admin('PUT', `/api/vhosts/${enc(vhost)}`, {}, CLUSTER.url);
  await admin('PUT', `/api/permissions/${enc(vhost)}/${enc(user)}`, perms, CLUSTER.url);
  await vhostOnEveryNode(NODES, vhost);
  const uri = `amqp://${enc(user)}:${enc(password)}@localhost:${UPSTREAM.amqpPort}/${enc(vhost)}`;
  await admin('PUT', `/api/parameters/federation-upstream/${enc(vhost)}/up`, { value: { uri } }, CLUSTER.url);
  await admin(
    'PUT',
    `/api/policies/${enc(vhost)}/fed`,
    { pattern: '^fed\\.', 'apply-to': 'exchanges', priority: 0, definition: { 'federation-upstream': 'up' } },
    CLUSTER.url,
  );
  for (const x of ['fed.a', 'fed.b'])
    await admin('PUT', `/api/exchanges/${enc(vhost)}/${x}`, { type: 'topic', durable: true }, CLUSTER.url);
  // The shovel declares its source, a classic queue, on the node it runs on: that node stopped,
  // the source is down with it, and the shovel started elsewhere cannot consume.
  await admin(
    'PUT',
    `/api/parameters/shovel/${enc(vhost)}/sh`,
    { value: { 'src-uri': 'amqp://', 'src-queue': 'src', 'dest-uri': uri, 'dest-queue': 'dst' } },
    CLUSTER.url,
  );
  await waitFor(
    async () => {
      const r = await reported();
      return r.length === 3 && r.every((l) => l.status === 'running');
    },
    { deadlineMs: 60_000, what: 'both federation links and the shovel running' },
  );
  const environmentsYaml = [
    'environments:',
    `  - { name: lab, url: ${JSON.stringify(NODES)}, amqpUrl: ${JSON.stringify(CLUSTER.amqpUrls)}, userEnv: LAB_USER, passwordEnv: LAB_PASSWORD, approvers: [U0APPROVER], approvalsChannel: C0APPROVALS, vhosts: [${JSON.stringify(vhost)}] }`,
  ].join('\n');
  const env = labBotEnv({
    cwd,
    environmentsYaml,
    slack,
    redisUrl: redis.url,
    signingSecret: 'links-watch-secret',
  });
  bot = spawnBot(mainJs, { ...env, RMQ_WATCH_INTERVAL: `${INTERVAL_MS / 1000}s` }, cwd);
  replica = spawnBot(mainJs, { ...env, RMQ_WATCH_INTERVAL: `${INTERVAL_MS / 1000}s` }, cwd);
  url = `http://127.0.0.1:${await bot.listening()}`;
  await replica.listening();
}, CLUSTER_WAIT_MS + 180_000);

afterAll(async () => {
  try {
    for (const b of [bot, replica]) {
      if (!b || b.child.exitCode !== null) continue;
      b.child.kill('SIGTERM');
      const cut = setTimeout(() => b.child.kill('SIGKILL'), 15_000);
      await b.exited;
      clearTimeout(cut);
    }
    if (ready) {
      await everyNodeBack();
      await admin('DELETE', `/api/vhosts/${enc(vhost)}`, undefined, CLUSTER.url).catch(() => undefined);
      await admin('DELETE', `/api/vhosts/${enc(vhost)}`, undefined, UPSTREAM.url).catch(() => undefined);
    }
  } finally {
    release?.();
    await Promise.allSettled([slack?.close(), redis?.stop()]);
    rmSync(cwd, { recursive: true, force: true });
  }
}, 360_000);

describe.skipIf(!ready)('links watched on the cluster, downstream of 4.0.5', () => {
  it('posts nothing while every link runs; rmq_links counts them', async () => {
    await readings(3);
    expect(await metric('running')).toBe(3);
    expect(await metric('missing')).toBe(0);
    expect(posts(0, /link/)).toEqual([]);
  }, 60_000);

  it('the node running the shovel stopped: what stops is posted once within two intervals, with the next step; back once when the node returns', async () => {
    const before = await reported();
    console.info(`links before the stop: ${JSON.stringify(before)}`);
    // The node that runs the shovel, and holds its source queue.
    const host = before.find((l) => l.name === 'sh')?.node ?? '';
    const n = /rmqc(\d)@/.exec(host)?.[1];
    expect(n).toBeDefined();
    const mark = slack.calls.length;
    try {
      cluster('stop', String(n));
      const stoppedAt = Date.now();
      const [post] = await waitFor(() => posts(mark, DOWN).length > 0 && posts(mark, DOWN), {
        deadlineMs: TWO_INTERVALS_MS,
        intervalMs: 100,
        what: 'a post of the links down, within two intervals of the stop',
      }).catch(async (err: unknown) => {
        // What the broker and the bot said meanwhile, to tell a bot that missed it from a broker that lost nothing.
        console.info(`not posted; the broker reports ${JSON.stringify(await reported().catch(String))}`);
        console.info(`the bot's links watch: ${JSON.stringify((await health()).links)}`);
        console.info(
          bot
            .stdout()
            .split('\n')
            .filter((l) => /links/.test(l))
            .slice(-20)
            .join('\n'),
        );
        throw err;
      });
      console.info(`posted ${Date.now() - stoppedAt} ms after the stop`);
      const after = await reported();
      console.info(`links after the stop of ${host}: ${JSON.stringify(after)}`);
      const text = renderedText(post?.args ?? {});
      // Every link the post names is one the broker reports not running.
      const named = after.filter((l) => text.includes(`\`${l.name}\``));
      expect(named.length).toBeGreaterThan(0);
      for (const l of named) expect(l.status, l.name).not.toBe('running');
      expect(text).toMatch(/Next:/);
      expect((await health()).status).toBe(200);
      // Each replica counts at its own readings: this one's next reading, at the latest.
      await waitFor(async () => ((await metric('stopped')) ?? 0) > 0, {
        deadlineMs: 2 * INTERVAL_MS + 5_000,
        what: 'rmq_links{state="stopped"} above 0',
      });
      // Recorded: one record of the burst, in the bot's own Redis, under its prefix.
      const r = new Redis(redis.url);
      try {
        const records = (await new AuditTrail(r as never, 'rmq').list({ vhost })).filter(
          (x) => x.action === 'links',
        );
        expect(records.map((x) => (x.action === 'links' ? [x.went, x.detectedBy] : []))).toEqual([
          ['down', expect.stringMatching(/^(nodes|interval)$/)],
        ]);
      } finally {
        r.disconnect();
      }
    } finally {
      cluster('start', String(n));
    }
    const [back] = await waitFor(() => posts(mark, BACK).length > 0 && posts(mark, BACK), {
      deadlineMs: 60_000 + TWO_INTERVALS_MS,
      intervalMs: 200,
      what: 'the post of the links back',
    });
    console.info(`links after node ${n} started again: ${JSON.stringify(await reported())}`);
    expect(renderedText(back?.args ?? {})).toMatch(/running again/);
    // Once each: two more readings change nothing.
    await readings(2);
    expect(posts(mark, DOWN)).toHaveLength(1);
    expect(posts(mark, BACK)).toHaveLength(1);
  }, 300_000);
});
