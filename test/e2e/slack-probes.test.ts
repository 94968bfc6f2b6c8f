/**
 * The probes of the compiled bot (`dist/main.js`, as `npm start` runs it): `/livez` from the
 * process alone, quick while one broker drips a byte every second and another is a black hole;
 * `/readyz` (and `/healthz`) at once from the last background check, each part with its state,
 * error code and age, Redis's persistence said; a broker, then Redis, going away is reflected
 * within one check interval; an environment of two nodes, the first down, is ready through the
 * second, each node's state said; on SIGTERM the probes stop saying 200.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/bot/health.ts';
import { HEALTH_INTERVAL_MS, HEALTH_TIMEOUT_MS } from '../../src/bot/health.ts';
import { type BotProcess, labBotEnv, spawnBot } from '../support/botProcess.ts';
import { brokerUrl, waitFor } from '../support/broker.ts';
import { built } from '../support/built.ts';
import { closedPortUrl, type FakeBroker, startBlackHole, startFakeBroker } from '../support/fakeBroker.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

/** A change is seen by the next check: one interval, plus the check's own deadline, plus the poll. */
const ONE_CHECK_MS = HEALTH_INTERVAL_MS + HEALTH_TIMEOUT_MS + 2_000;
/** INTERFACE.md: `/livez` answers in milliseconds; the bound. */
const LIVEZ_BOUND_MS = 50;

const cwd = mkdtempSync(join(tmpdir(), 'rmq-probes-'));
let slack: FakeSlack;
let lab: FakeBroker;
/** The second node of environment `pair`, whose first node is down (nothing listens there). */
let node2: FakeBroker;
let node1Down: string;
let drip: FakeBroker;
let hole: Awaited<ReturnType<typeof startBlackHole>>;
let redis: RedisServer;
let bot: BotProcess;
let url: string;

async function readiness(path = '/readyz'): Promise<{ status: number; body: Readiness }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, body: (await res.json()) as Readiness };
}

/** Median time of `n` GETs of `path`, one after another. */
async function medianMs(path: string, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await fetch(`${url}${path}`);
    await res.arrayBuffer();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(n / 2)] ?? Number.POSITIVE_INFINITY;
}

beforeAll(async () => {
  const mainJs = join((await built()).outdir, 'main.js');
  [slack, redis, hole] = await Promise.all([startFakeSlack(), startRedisServer(), startBlackHole()]);
  lab = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
  node2 = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
  node1Down = await closedPortUrl();
  drip = await startFakeBroker({ fallback: { kind: 'drip', body: '{"name":"guest"}', intervalMs: 1000 } });
  const amqp = 'amqp://127.0.0.1:5672';
  const environmentsYaml = [
    'environments:',
    `  - { name: lab, url: "${lab.url}", amqpUrl: "${amqp}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD }`,
    `  - { name: drip, url: "${drip.url}", amqpUrl: "${amqp}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD }`,
    `  - { name: hole, url: "${hole.url}", amqpUrl: "${amqp}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD }`,
    `  - { name: pair, url: ["${node1Down}", "${node2.url}"], amqpUrl: ["amqp://127.0.0.1:1", "${amqp}"], userEnv: LAB_USER, passwordEnv: LAB_PASSWORD }`,
  ].join('\n');
  const env = labBotEnv({
    cwd,
    environmentsYaml,
    slack,
    redisUrl: redis.url,
    signingSecret: 'probes-test-signing-secret',
  });
  bot = spawnBot(mainJs, env, cwd);
  url = `http://127.0.0.1:${await bot.listening()}`;
});

afterAll(async () => {
  bot?.child.kill('SIGKILL');
  await Promise.allSettled([
    slack?.close(),
    lab?.close(),
    node2?.close(),
    drip?.close(),
    hole?.close(),
    redis?.stop(),
  ]);
  rmSync(cwd, { recursive: true, force: true });
});

describe('the probes of npm start', () => {
  it('/readyz answers from the last check: each part with its state, error and age; Redis persistence said', async () => {
    const { status, body } = await waitFor(
      async () => {
        const r = await readiness();
        return r.body.brokers.drip?.state === 'failing' && r.body.brokers.hole?.state === 'failing' && r;
      },
      { deadlineMs: ONE_CHECK_MS, what: 'the first checks of the drip and the black hole' },
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ok: true,
      draining: false,
      intervalMs: HEALTH_INTERVAL_MS,
      redis: { state: 'ok', ok: true, persistence: { onDisk: false, aof: false, rdb: false } },
      brokers: {
        lab: { state: 'ok', ok: true },
        drip: { state: 'failing', ok: false, error: 'timeout' },
        hole: { state: 'failing', ok: false, error: 'timeout' },
      },
    });
    for (const part of [body.redis, body.brokers.lab]) {
      expect(typeof part?.ageMs).toBe('number');
      expect(Number.isNaN(Date.parse(part?.checkedAt ?? ''))).toBe(false);
    }
    // /healthz is the same document.
    const healthz = await readiness('/healthz');
    expect(healthz.status).toBe(200);
    expect(healthz.body.brokers).toMatchObject({ drip: { error: 'timeout' } });
    // Said at start, in the log, too.
    expect(bot.stdout()).toContain('Redis keeps nothing on disk');
  });

  it("an environment of two nodes, the first down: ready through the second, and each node's state said", async () => {
    const { body } = await waitFor(
      async () => {
        const r = await readiness();
        const nodes = Object.values(r.body.brokers.pair?.nodes ?? {});
        return nodes.length === 2 && nodes.every((n) => n.state !== 'unknown') && r;
      },
      { deadlineMs: ONE_CHECK_MS, what: 'the first check of both nodes of pair' },
    );
    expect(body.brokers.pair).toMatchObject({
      state: 'ok',
      ok: true,
      nodes: { [node1Down]: { state: 'failing', error: 'unreachable' }, [node2.url]: { state: 'ok' } },
    });
    expect(node2.requests.length).toBeGreaterThan(0);
  });

  it(`/livez and /readyz answer in < ${LIVEZ_BOUND_MS} ms while one broker drips and another is a black hole`, async () => {
    // Checks of both are under way or due all along (each takes its whole deadline).
    const livez = await medianMs('/livez', 21);
    const readyz = await medianMs('/readyz', 21);
    process.stdout.write(
      `probes: /livez median ${livez.toFixed(1)} ms, /readyz median ${readyz.toFixed(1)} ms\n`,
    );
    expect(livez).toBeLessThan(LIVEZ_BOUND_MS);
    expect(readyz).toBeLessThan(LIVEZ_BOUND_MS);
    const res = await fetch(`${url}/livez`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, draining: false });
    // The drip and the black hole were asked (by the checks), the probes never waited on them.
    expect(drip.requests.length).toBeGreaterThan(0);
    expect(hole.connections()).toBeGreaterThan(0);
  });

  it('a broker going away shows within one check interval, and leaves the bot ready', async () => {
    await lab.close();
    const { status, body } = await waitFor(
      async () => {
        const r = await readiness();
        return r.body.brokers.lab?.state === 'failing' && r;
      },
      { deadlineMs: ONE_CHECK_MS, intervalMs: 200, what: '/readyz to see the lab broker gone' },
    );
    expect(body.brokers.lab).toMatchObject({ ok: false, error: 'unreachable' });
    expect(status).toBe(200);
  });

  it('Redis going away makes /readyz and /healthz 503 within one check interval; /livez stays 200', async () => {
    await redis.stop();
    const { status, body } = await waitFor(
      async () => {
        const r = await readiness();
        return r.body.redis.state === 'failing' && r;
      },
      { deadlineMs: ONE_CHECK_MS, intervalMs: 200, what: '/readyz to see Redis gone' },
    );
    expect(status).toBe(503);
    expect(body).toMatchObject({ ok: false, redis: { ok: false } });
    expect(['unreachable', 'timeout']).toContain(body.redis.error);
    expect((await fetch(`${url}/healthz`)).status).toBe(503);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
  });

  it('on SIGTERM the probes stop saying 200', async () => {
    bot.child.kill('SIGTERM');
    await waitFor(
      async () => {
        const status = await fetch(`${url}/livez`).then(
          (r) => r.status,
          () => 'refused',
        );
        return status !== 200;
      },
      { deadlineMs: 10_000, intervalMs: 20, what: '/livez to stop saying 200' },
    );
    // Not waited for here: with Redis gone, closing the job queues takes the shutdown's hard limit.
  });
});
