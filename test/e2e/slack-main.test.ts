import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotProcess, spawnBot } from '../support/botProcess.ts';
import { brokerCredentials, brokerUrl, waitFor } from '../support/broker.ts';
import { built } from '../support/built.ts';
import { type FakeBroker, startFakeBroker } from '../support/fakeBroker.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';
import { commandForm, renderedText, signed } from '../support/harness.ts';
import { clearMainRedis, MAIN_REDIS_URL } from '../support/mainRedis.ts';

/**
 * `npm start` (the compiled `dist/main.js`, as the image runs it) as a process: it refuses to start without Slack credentials (saying which and
 * where to get them), stops on a refused token, and on SIGTERM stops taking requests, lets the
 * answer under way reach Slack, and exits 0.
 */

let mainJs: string;
/** An empty working directory: a developer's own .env must not change what is tested. */
const cwd = mkdtempSync(join(tmpdir(), 'rmq-main-'));

function start(env: Record<string, string>): BotProcess {
  return spawnBot(mainJs, { HOME: process.env.HOME ?? cwd, ...env }, cwd);
}

/** The bot's base URL, once its log says it listens. */
async function listening(run: BotProcess): Promise<string> {
  return `http://127.0.0.1:${await run.listening()}`;
}

/** A signed `/rmq <text>` to the bot; returns the acknowledgement. */
function command(url: string, secret: string, text: string, responseUrl: string): Promise<Response> {
  const request = signed(secret, commandForm({ text, responseUrl }), 'application/x-www-form-urlencoded');
  return fetch(`${url}/slack/events`, { method: 'POST', headers: request.headers, body: request.body });
}

let slack: FakeSlack;
let slowBroker: FakeBroker;

beforeAll(async () => {
  mainJs = join((await built()).outdir, 'main.js');
  slack = await startFakeSlack();
  slowBroker = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl(), delayMs: 1500 } });
});
afterAll(async () => {
  await clearMainRedis();
  await Promise.allSettled([slack?.close(), slowBroker?.close()]);
  rmSync(cwd, { recursive: true, force: true });
});

describe('npm start without Slack credentials', () => {
  it('exits non-zero, naming what is missing and where to get it', async () => {
    const run = start({});
    expect(await run.exited).not.toBe(0);
    const said = run.stderr();
    expect(said).toContain('SLACK_BOT_TOKEN');
    expect(said).toContain('SLACK_SIGNING_SECRET');
    expect(said).toContain('slack/manifest.yml');
    expect(said).toContain('.env.example');
    expect(said).not.toMatch(/\n\s+at /);
  });

  it('names only what is missing', async () => {
    const run = start({ SLACK_BOT_TOKEN: 'xoxb-1' });
    expect(await run.exited).not.toBe(0);
    expect(run.stderr()).toMatch(/SLACK_SIGNING_SECRET is not set/);
    expect(run.stderr()).not.toMatch(/SLACK_BOT_TOKEN (is|and)/);
  });

  it('with a token Slack refuses, says so and exits non-zero', async () => {
    const run = start({
      SLACK_BOT_TOKEN: 'xoxb-refused',
      SLACK_SIGNING_SECRET: 's3cret-s3cret',
      SLACK_API_URL: slack.apiUrl,
      PORT: '0',
    });
    expect(await run.exited).not.toBe(0);
    expect(run.stderr()).toMatch(/Slack refused SLACK_BOT_TOKEN \(invalid_auth\)/);
    expect(run.stderr() + run.stdout()).not.toContain('xoxb-refused');
  });

  it('in Socket Mode with an app token Slack refuses, names SLACK_APP_TOKEN and exits non-zero', async () => {
    const run = start({
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_APP_TOKEN: 'xapp-refused',
      SLACK_API_URL: slack.apiUrl,
      PORT: '0',
    });
    expect(await run.exited).not.toBe(0);
    expect(run.stderr()).toMatch(/Slack refused SLACK_APP_TOKEN \(invalid_auth\)/);
    expect(run.stderr() + run.stdout()).not.toContain('xapp-refused');
  });
});

describe('npm start with credentials', () => {
  it('serves, and on SIGTERM finishes the answer under way before exiting 0', async () => {
    const secret = 'main-test-signing-secret';
    const rejectedBefore = slack.rejections().length;
    const { user, password } = brokerCredentials();
    const run = start({
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: secret,
      SLACK_API_URL: slack.apiUrl,
      RMQ_URL: slowBroker.url,
      RMQ_USER: user,
      RMQ_PASSWORD: password,
      REDIS_URL: MAIN_REDIS_URL,
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    try {
      const url = await listening(run);
      // Answered from the background check: 200 once its first round found Redis.
      await waitFor(async () => (await fetch(`${url}/healthz`)).status === 200, { what: '/healthz 200' });

      const responseUrl = slack.responseUrl();
      const ack = await command(url, secret, 'which orders.audit --vhost /', responseUrl);
      expect(ack.status).toBe(200);
      // The broker sits behind a slow proxy: the answer is still under way when the signal comes.
      expect(slack.responsesTo(responseUrl)).toHaveLength(0);
      run.child.kill('SIGTERM');

      expect(await run.exited).toBe(0);
      const [answer] = slack.responsesTo(responseUrl);
      expect(answer, 'the answer reached Slack before the process exited').toBeDefined();
      expect(renderedText(answer?.args ?? {})).toMatch(/orders\.audit/);
      expect(run.stdout()).toContain('shutting down');
      expect(run.stdout()).toContain('"msg":"stopped"');
      expect(run.stdout() + run.stderr()).not.toContain(secret);
      expect(slack.rejections().slice(rejectedBefore)).toEqual([]);
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});

describe('npm start against a broker that drips one byte at a time', () => {
  it('comes up, serves /healthz (ready: Redis answers), tells the asker the broker did not answer in time, and exits on SIGTERM', async () => {
    const secret = 'main-test-signing-secret-drip';
    const drip = await startFakeBroker({
      fallback: { kind: 'drip', body: '{"name":"guest","tags":["administrator"]}', intervalMs: 200 },
    });
    const run = start({
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: secret,
      SLACK_API_URL: slack.apiUrl,
      RMQ_URL: drip.url,
      RMQ_TIMEOUT: '2s',
      REDIS_URL: MAIN_REDIS_URL,
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    try {
      const url = await listening(run);
      // Ready (Redis answers), the dripping broker reported as timed out by the background check.
      const health = await waitFor(
        async () => {
          const res = await fetch(`${url}/healthz`);
          const body = (await res.json()) as { brokers: Record<string, { state: string }> };
          return body.brokers.default?.state === 'failing' && { status: res.status, body };
        },
        { what: "/healthz to report the drip's check" },
      );
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ brokers: { default: { ok: false, error: 'timeout' } } });

      const responseUrl = slack.responseUrl();
      const ack = await command(url, secret, 'which orders.audit --vhost /', responseUrl);
      expect(ack.status).toBe(200);
      const answer = await slack.waitForCall((c) => c.path === new URL(responseUrl).pathname && c.ok, {
        what: 'the answer',
      });
      expect(renderedText(answer.args)).toMatch(/did not answer in time/);

      // A question under way against the drip when the signal comes: the process still exits.
      await command(url, secret, 'which orders.events --vhost /', slack.responseUrl());
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
      await drip.close();
    }
  });
});
