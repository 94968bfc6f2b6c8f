// Over 400 lines: one bot process under every fault in turn, each checked against the same outcome.
/**
 * bench/faults: what a user sees, and that nothing is lost, when what the bot depends on fails.
 *
 *   npm run bench:faults [-- --commands 10]
 *
 * The compiled bot (`dist/main.js`) runs as its own process in HTTP mode; its broker is the real
 * one behind a fault proxy (test/support/fakeBroker.ts, a lab vhost of its own), its Redis a
 * `redis-server` this script starts on a free port with AOF in a temporary directory (the
 * machine's Redis is never touched), and Slack the local fake, which can answer 429 with
 * Retry-After and 5xx. For each fault, `--commands` signed `/rmq which orders.audit` are sent at
 * once; printed: how many were acknowledged within 3 s, how many answers were delivered, and
 * what the user saw. Every request must end with exactly one answer delivered (none lost, none
 * twice); exit code 1 otherwise.
 *
 * Last, the write path: a change request approved, and the bot sent SIGTERM while its apply job
 * runs (the broker slowed to 1 s a call); restarted, the request must end applied, its policy
 * written once and audited once. Two replicas deciding at once: bench/approvals.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { build } from '../scripts/build.ts';
import { setUpLab } from '../scripts/lab.ts';
import { AuditTrail } from '../src/audit/trail.ts';
import { isChange } from '../src/audit/types.ts';
import { DEFAULT_KEY_PREFIX } from '../src/config/config.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { RequestStore } from '../src/workflow/store.ts';
import { type BotProcess, spawnBot } from '../test/support/botProcess.ts';
import { waitFor } from '../test/support/broker.ts';
import { type FakeBroker, startFakeBroker } from '../test/support/fakeBroker.ts';
import { type FakeSlack, type RecordedCall, startFakeSlack } from '../test/support/fakeSlack.ts';
import {
  APPROVALS_CHANNEL,
  APPROVER,
  commandForm,
  mentionEnvelope,
  renderedText,
  signed,
} from '../test/support/harness.ts';
import { buttonValue, clickPayload, type OpenedView, submission } from '../test/support/interactions.ts';
import { benchOptions } from './options.ts';

const { count, brokerUrl, user, password } = benchOptions('commands', 10);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A Redis of this script's own: AOF with fsync on every write, so a kill loses nothing written. */
class OwnRedis {
  #child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'rmq-bench-redis-'));
  constructor(readonly port: number) {}
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    this.#child = spawn(
      'redis-server',
      [
        ...['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir],
        ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
      ],
      { stdio: 'ignore' },
    );
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => {});
    await waitFor(
      async () => {
        await probe.connect().catch(() => undefined);
        return (await probe.ping().catch(() => '')) === 'PONG';
      },
      { deadlineMs: 10_000, intervalMs: 100, what: 'redis-server to start' },
    );
    probe.disconnect();
  }
  /** SIGKILL: a crash, not a clean shutdown. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

interface Outcome {
  readonly name: string;
  readonly acked: number;
  readonly delivered: number;
  readonly twice: number;
  readonly saw: string;
  readonly ok: boolean;
}

async function main(): Promise<number> {
  const { outdir } = await build();
  const admin = new LabClient({ url: brokerUrl, user, password });
  const vhost = `rmq-bench-faults-${process.pid}`;
  const slack: FakeSlack = await startFakeSlack();
  const proxy: FakeBroker = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl } });
  const redis = new OwnRedis(await freePort());
  const secret = randomBytes(16).toString('hex');
  const outcomes: Outcome[] = [];
  let bot: BotProcess | undefined;
  try {
    await setUpLab(admin, vhost);
    await waitFor(async () => (await admin.getQueue(vhost, 'orders.audit'))?.policy === 'audit-retention', {
      deadlineMs: 60_000,
      intervalMs: 500,
      what: 'the broker to report orders.audit',
    });
    await redis.start();
    const startBot = async () => {
      bot = spawnBot(join(outdir, 'main.js'), {
        RMQ_URL: proxy.url,
        RMQ_USER: user,
        RMQ_PASSWORD: password,
        RMQ_TIMEOUT: '5s',
        REDIS_URL: redis.url,
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: secret,
        SLACK_API_URL: slack.apiUrl,
        SLACK_APPROVALS_CHANNEL: APPROVALS_CHANNEL,
        SLACK_APPROVERS: APPROVER,
        PORT: '0',
        LOG_LEVEL: 'info',
      });
      return `http://127.0.0.1:${await bot.listening()}`;
    };
    let url = await startBot();

    const send = async (n: number, during?: () => Promise<void>) => {
      const urls = Array.from({ length: n }, () => slack.responseUrl());
      const sentAt = Date.now();
      const acks = urls.map(async (responseUrl) => {
        const r = signed(
          secret,
          commandForm({ text: `which orders.audit --vhost ${vhost}`, responseUrl }),
          'application/x-www-form-urlencoded',
        );
        const res = await fetch(`${url}/slack/events`, {
          method: 'POST',
          headers: r.headers,
          body: r.body,
        }).catch(() => undefined);
        return res?.status === 200 && Date.now() - sentAt <= 3000;
      });
      await during?.();
      const acked = (await Promise.all(acks)).filter(Boolean).length;
      await waitFor(() => urls.every((u) => delivered(u).length > 0), {
        deadlineMs: 60_000,
        intervalMs: 50,
        what: 'every answer',
      }).catch(() => undefined);
      // Late duplicates would arrive after the first answer: give them a moment.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { urls, acked };
    };
    const delivered = (responseUrl: string): RecordedCall[] =>
      slack.responsesTo(responseUrl).filter((c) => c.ok && !c.injected);
    /** What the user saw, by kind; a right answer names the policy in force. */
    const KINDS: readonly [string, RegExp][] = [
      ['answered', /audit-retention is in force/],
      ['"did not answer in time"', /did not answer in time/],
      ['"answered with an error"', /answered with an error/],
      ['"could not be reached"', /could not be reached/],
    ];
    const kindOf = (text: string) =>
      KINDS.find(([, re]) => re.test(text))?.[0] ?? `other: ${text.slice(0, 80)}`;
    /** Every request answered exactly once, each answer of an `allowed` kind. */
    const judge = (name: string, urls: string[], acked: number, allowed: readonly string[]) => {
      const answers = urls.map((u) => delivered(u));
      const kinds = answers.flatMap((a) => (a[0] ? [kindOf(renderedText(a[0].args))] : []));
      const counts = new Map<string, number>();
      for (const k of kinds) counts.set(k, (counts.get(k) ?? 0) + 1);
      outcomes.push({
        name,
        acked,
        delivered: answers.filter((a) => a.length > 0).length,
        twice: answers.filter((a) => a.length > 1).length,
        saw: [...counts].map(([k, n]) => `${n}x ${k}`).join(', '),
        ok:
          acked === urls.length &&
          answers.every((a) => a.length === 1) &&
          kinds.every((k) => allowed.includes(k)),
      });
    };
    const RIGHT = ['answered'];

    // 1. Nothing wrong.
    {
      const { urls, acked } = await send(count);
      judge('no fault', urls, acked, RIGHT);
    }
    // 2. The broker slow (1.5 s per call): the pool's 8 connections queue the burst's calls, so
    //    some questions outlast RMQ_TIMEOUT (5 s here, 10 s by default) and say so.
    {
      proxy.setFallback({ kind: 'proxy', target: brokerUrl, delayMs: 1500 });
      const { urls, acked } = await send(count);
      judge('broker slow (1.5 s per call)', urls, acked, [...RIGHT, '"did not answer in time"']);
    }
    // 3. The broker slower than the question's budget (RMQ_TIMEOUT=5s here).
    {
      proxy.setFallback({ kind: 'proxy', target: brokerUrl, delayMs: 8000 });
      const { urls, acked } = await send(count);
      judge('broker slower than RMQ_TIMEOUT', urls, acked, ['"did not answer in time"']);
    }
    // 4. The broker failing with 503.
    {
      proxy.setFallback({ kind: 'respond', status: 503, body: { error: 'unavailable' } });
      const { urls, acked } = await send(count);
      judge('broker 503', urls, acked, ['"answered with an error"']);
    }
    // 5. The broker unreachable (connections dropped).
    {
      proxy.setFallback({ kind: 'drop' });
      const { urls, acked } = await send(count);
      judge('broker unreachable', urls, acked, ['"could not be reached"']);
    }
    proxy.setFallback({ kind: 'proxy', target: brokerUrl });
    // 6. Slack answering 429 (Retry-After 1 s), then 503, on the response URLs.
    {
      slack.faultNext(
        'response_url',
        ...Array.from({ length: count }, () => ({ status: 429 as const, retryAfter: 1 })),
      );
      let r = await send(count);
      judge('Slack 429 Retry-After 1', r.urls, r.acked, RIGHT);
      slack.faultNext('response_url', ...Array.from({ length: count }, () => ({ status: 503 as const })));
      r = await send(count);
      judge('Slack 503', r.urls, r.acked, RIGHT);
      slack.clearFaults();
    }
    // 7. Redis killed mid-burst and started again on its AOF: commands answered throughout; a
    //    mention answered before the crash is still known after it (not answered twice).
    {
      const eventId = `EvBENCH${randomBytes(4).toString('hex').toUpperCase()}`;
      const threadTs = '1700000000.000700';
      const mention = () => {
        const r = signed(
          secret,
          JSON.stringify(
            mentionEnvelope({
              text: `<@${slack.botUserId}> which orders.audit --vhost ${vhost}`,
              eventId,
              threadTs,
              botUserId: slack.botUserId,
            }),
          ),
          'application/json',
        );
        return fetch(`${url}/slack/events`, { method: 'POST', headers: r.headers, body: r.body });
      };
      const inThread = () =>
        slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs);
      await mention();
      await waitFor(() => inThread().length > 0, {
        deadlineMs: 30_000,
        intervalMs: 50,
        what: 'the mention answered',
      });
      const { urls, acked } = await send(count, async () => {
        await redis.kill();
        await redis.start();
      });
      judge('Redis killed and restarted mid-burst', urls, acked, RIGHT);
      await waitFor(async () => (await fetch(`${url}/healthz`)).status === 200, {
        deadlineMs: 30_000,
        intervalMs: 200,
        what: 'the bot back on Redis',
      });
      await mention(); // Slack's redelivery of the same event
      await new Promise((resolve) => setTimeout(resolve, 2000));
      outcomes.push({
        name: 'Redis restart: a redelivered event',
        acked: 1,
        delivered: inThread().length,
        twice: inThread().length > 1 ? 1 : 0,
        saw:
          inThread().length === 1
            ? 'answered once, before the crash; the redelivery recognised from the AOF'
            : 'answered again',
        ok: inThread().length === 1,
      });
    }
    // 8. SIGTERM with answers under way (broker at 0.5 s a call): each delivered before the exit.
    {
      proxy.setFallback({ kind: 'proxy', target: brokerUrl, delayMs: 500 });
      const running = bot as BotProcess | undefined;
      const { urls, acked } = await send(count, async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        running?.child.kill('SIGTERM');
      });
      const code = await running?.exited;
      judge(`SIGTERM with answers under way (exit ${code})`, urls, acked, RIGHT);
      proxy.setFallback({ kind: 'proxy', target: brokerUrl });
      url = await startBot();
    }

    // 9. SIGTERM while the apply job runs (broker at 1 s a call): the request still ends applied
    //    (by the restarted bot), its policy written once and audited once.
    {
      const name = 'bench-sigterm';
      const { responseUrl } = await (async () => {
        const responseUrl = slack.responseUrl();
        const r = signed(
          secret,
          commandForm({
            text: `create ${name} --pattern ^${name}$ --definition {"max-length": 5} --vhost ${vhost} --reason faults`,
            responseUrl,
            userId: 'U0REQUESTER',
          }),
          'application/x-www-form-urlencoded',
        );
        await fetch(`${url}/slack/events`, { method: 'POST', headers: r.headers, body: r.body });
        return { responseUrl };
      })();
      await waitFor(() => delivered(responseUrl).length > 0, {
        deadlineMs: 30_000,
        intervalMs: 50,
        what: 'filed',
      });
      const message = await waitFor(
        () =>
          slack.calls.find(
            (c) =>
              c.ok &&
              c.method === 'chat.postMessage' &&
              c.args.channel === APPROVALS_CHANNEL &&
              JSON.stringify(c.args.blocks ?? []).includes('rmq_request_approve'),
          ),
        { deadlineMs: 30_000, intervalMs: 50, what: 'the request in the approvals channel' },
      );
      const id = buttonValue(message.args.blocks, 'rmq_request_approve');
      const direct = new Redis(redis.url);
      const store = new RequestStore(direct as never, DEFAULT_KEY_PREFIX);
      const interact = (payload: Record<string, unknown>) => {
        const r = signed(
          secret,
          `payload=${encodeURIComponent(JSON.stringify(payload))}`,
          'application/x-www-form-urlencoded',
        );
        return fetch(`${url}/slack/events`, { method: 'POST', headers: r.headers, body: r.body });
      };
      const click = clickPayload(
        APPROVER,
        { action_id: 'rmq_request_approve', value: String(id) },
        { channel: APPROVALS_CHANNEL, ts: String(message.response?.ts) },
        slack.responseUrl(),
      );
      await interact(click);
      const form = await waitFor(
        () =>
          slack.calls.find(
            (c) => c.method === 'views.open' && c.ok && c.args.trigger_id === click.trigger_id,
          ),
        { deadlineMs: 30_000, intervalMs: 50, what: 'the decision form' },
      );
      proxy.setFallback({ kind: 'proxy', target: brokerUrl, delayMs: 1000 });
      await interact(submission(APPROVER, form.args.view as OpenedView, { reason: 'faults' }));
      await waitFor(async () => (await store.get(String(id)))?.state === 'applying', {
        deadlineMs: 30_000,
        intervalMs: 20,
        what: 'the apply job running',
      });
      const running = bot as BotProcess | undefined;
      running?.child.kill('SIGTERM');
      const code = await running?.exited;
      const stateAtExit = (await store.get(String(id)))?.state;
      proxy.setFallback({ kind: 'proxy', target: brokerUrl });
      url = await startBot();
      const final = await waitFor(
        async () => {
          const s = (await store.get(String(id)))?.state;
          return s === 'applied' || s === 'failed' ? s : undefined;
        },
        { deadlineMs: 90_000, intervalMs: 200, what: 'the request in a final state' },
      ).catch(async () => (await store.get(String(id)))?.state ?? 'missing');
      const trail = new AuditTrail(direct as never, DEFAULT_KEY_PREFIX);
      const audited = (await trail.list({ vhost })).filter(isChange).filter((r) => r.policy === name).length;
      const puts = proxy.requests.filter((q) => q.method === 'PUT' && q.url.endsWith(`/${name}`)).length;
      direct.disconnect();
      outcomes.push({
        name: `SIGTERM while the apply job runs (exit ${code})`,
        acked: 1,
        delivered: final === 'applied' ? 1 : 0,
        twice: puts > 1 || audited > 1 ? 1 : 0,
        saw: `state at exit ${stateAtExit}, final ${final}; PUTs of the policy ${puts}, audit records ${audited}`,
        ok: final === 'applied' && audited === 1 && puts === 1,
      });
    }

    process.stdout.write(
      `bench/faults: ${count} signed "/rmq which orders.audit" per fault, one compiled bot process, real broker behind a fault proxy, own Redis (AOF), fake Slack\n`,
    );
    for (const o of outcomes) {
      process.stdout.write(
        `  ${o.ok ? 'ok  ' : 'FAIL'} ${o.name.padEnd(40)} acked<3s ${o.acked}  delivered ${o.delivered}  twice ${o.twice}  saw: ${o.saw}\n`,
      );
    }
    process.stdout.write(`  refused by the fake Slack: ${slack.rejections().length}\n`);
    return outcomes.every((o) => o.ok) ? 0 : 1;
  } finally {
    const last = bot as BotProcess | undefined;
    if (last && last.child.exitCode === null) {
      last.child.kill('SIGTERM');
      await last.exited;
    }
    await Promise.allSettled([slack.close(), proxy.close(), redis.stop()]);
    await admin.deleteVhost(vhost);
    await admin.close();
  }
}

process.exitCode = await main();
