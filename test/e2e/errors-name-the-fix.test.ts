/**
 * Errors that name the fix (issue 30, item 6), where users meet them: the package's `bin/rmq.js`
 * and the compiled bot (`dist/main.js`) as a process. A refused login names the variables the
 * credentials came from (`RMQ_PASSWORD`, or an environment's `passwordEnv`), read from config.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotProcess, spawnBot } from '../support/botProcess.ts';
import { brokerCredentials, brokerUrl, waitFor, withUser } from '../support/broker.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';
import { commandForm, renderedText, signed } from '../support/harness.ts';
import { clearMainRedis, MAIN_REDIS_URL } from '../support/mainRedis.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cwd = mkdtempSync(join(tmpdir(), 'rmq-errors-'));
let pkg: Built;
let slack: FakeSlack;

beforeAll(async () => {
  [pkg, slack] = await Promise.all([built(), startFakeSlack()]);
});
afterAll(async () => {
  await clearMainRedis();
  await slack?.close();
  rmSync(cwd, { recursive: true, force: true });
});

function start(env: Record<string, string>): BotProcess {
  return spawnBot(join(pkg.outdir, 'main.js'), { HOME: cwd, ...env }, cwd);
}

/** A signed `/rmq <text>` to the bot at `url`; resolves with the answer's text. */
async function ask(url: string, secret: string, text: string): Promise<string> {
  const responseUrl = slack.responseUrl();
  const request = signed(secret, commandForm({ text, responseUrl }), 'application/x-www-form-urlencoded');
  const ack = await fetch(`${url}/slack/events`, {
    method: 'POST',
    headers: request.headers,
    body: request.body,
  });
  expect(ack.status).toBe(200);
  const answer = await slack.waitForCall((c) => c.path === new URL(responseUrl).pathname && c.ok, {
    what: 'the answer',
  });
  return renderedText(answer.args);
}

describe('a password the broker refuses', () => {
  it('the terminal names RMQ_PASSWORD (one broker) or the environment’s passwordEnv (an environments file)', async () => {
    const { user } = brokerCredentials();
    const single = await runBuiltRmq(
      pkg.bin,
      ['which', 'orders.audit', '--vhost', '/'],
      { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: 'wrong-password' },
      cwd,
    );
    expect(single.code).toBe(3);
    expect(single.out).toContain("refused the bot's credentials");
    expect(single.out).toContain('check RMQ_PASSWORD and RMQ_USER');

    const file = join(cwd, 'environments.yml');
    writeFileSync(
      file,
      `environments:\n  - name: lab\n    url: ${brokerUrl()}\n    userEnv: LAB_USER\n    passwordEnv: LAB_SECRET\n`,
    );
    const named = await runBuiltRmq(
      pkg.bin,
      ['policies', '--vhost', '/', '--env', 'lab'],
      { RMQ_ENVIRONMENTS: file, LAB_USER: user, LAB_SECRET: 'wrong-password', RMQ_PASSWORD: 'x' },
      cwd,
    );
    expect(named.code).toBe(3);
    expect(named.out).toContain('check LAB_SECRET and LAB_USER');
    expect(named.out).not.toContain('RMQ_PASSWORD');
  });

  it('the bot names RMQ_PASSWORD in its answer', async () => {
    const secret = 'errors-test-signing-secret';
    const { user } = brokerCredentials();
    const run = start({
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: secret,
      SLACK_API_URL: slack.apiUrl,
      RMQ_URL: brokerUrl(),
      RMQ_USER: user,
      RMQ_PASSWORD: 'wrong-password',
      REDIS_URL: MAIN_REDIS_URL,
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    try {
      const url = `http://127.0.0.1:${await run.listening()}`;
      const text = await ask(url, secret, 'which orders.audit --vhost /');
      expect(text).toContain("refused the bot's credentials");
      expect(text).toContain('RMQ_PASSWORD');
    } finally {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
});

/** The bot on the fake Slack, the real Redis, and the broker settings given. */
function startOn(env: Record<string, string>): BotProcess {
  const { user, password } = brokerCredentials();
  return start({
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: 'errors-test-signing-secret',
    SLACK_API_URL: slack.apiUrl,
    RMQ_USER: user,
    RMQ_PASSWORD: password,
    REDIS_URL: MAIN_REDIS_URL,
    PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
}

describe('the event feed', () => {
  it('is not said to be followed while the AMQP endpoint refuses', async () => {
    const run = startOn({ RMQ_URL: 'http://127.0.0.1:9', RMQ_AMQP_URL: 'amqp://127.0.0.1:9' });
    try {
      await run.listening();
      await waitFor(() => run.stdout().includes('comparing the policy lists every'), {
        what: 'the follower to report it failed',
      });
      expect(run.output()).not.toContain('following the event exchange');
    } finally {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
  it('with a wrong RMQ_URL port, is not said to be followed: events arrive unconfirmed, and RMQ_URL is named', async () => {
    // The AMQP port (5672 on RMQ_URL's host) answers; the management API does not.
    const run = startOn({ RMQ_URL: 'http://127.0.0.1:9' });
    try {
      await run.listening();
      await waitFor(() => run.stdout().includes('did not answer to confirm'), {
        what: 'the follower to say its endpoint is unconfirmed',
      });
      expect(run.output()).toContain('check RMQ_URL');
      expect(run.output()).not.toContain('following the event exchange');
    } finally {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
});

describe('the event feed refused on a permission (the README least-privilege grant, or less)', () => {
  /** The bot as `user`, until its watcher says how it follows the events; its output. */
  async function feedAs(user: { user: string; password: string }, until: string): Promise<string> {
    const run = startOn({ RMQ_URL: brokerUrl(), RMQ_USER: user.user, RMQ_PASSWORD: user.password });
    try {
      await run.listening();
      await waitFor(() => run.stdout().includes(until), { what: `the watcher to say "${until}"` });
      return run.output();
    } finally {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  }
  const failing = 'changes outside the bot: comparing the policy lists every';
  const needs = 'lacks a permission the event feed needs in the vhost of the AMQP URL';

  it('no entry for the vhost: the permission and the vhost named, not the credentials', async () => {
    await withUser({ tags: ['management'] }, async (user) => {
      const out = await feedAs(user, failing);
      expect(out).toContain(needs);
      expect(out).toContain(`access to vhost '/' refused for user '${user.user}'`);
      expect(out).not.toContain('refused the AMQP credentials');
    });
  });

  it("an entry without the grant on the event exchange: the broker's words name what is missing", async () => {
    const nothing = { configure: '^$', write: '^$', read: '^$' };
    await withUser({ tags: ['management'], vhost: '/', permissions: nothing }, async (user) => {
      const out = await feedAs(user, failing);
      expect(out).toContain(needs);
      expect(out).toMatch(/access to (queue|exchange) '[^']+' in vhost '\/' refused for user/);
      expect(out).not.toContain('refused the AMQP credentials');
    });
  });

  it("the README's grant is enough: the event exchange followed", async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const grant = /rabbitmqctl set_permissions -p \/ rmq-bot '([^']+)' '([^']+)' '([^']+)'/.exec(readme);
    expect(grant, 'the README shows the grant on / for the event exchange').not.toBeNull();
    const [, configure = '', write = '', read = ''] = grant ?? [];
    await withUser(
      { tags: ['management'], vhost: '/', permissions: { configure, write, read } },
      async (user) => {
        const out = await feedAs(user, 'changes outside the bot: following the event exchange');
        expect(out).not.toContain(needs);
      },
    );
  });
});

describe('a REDIS_URL where no Redis answers', () => {
  it('one line names REDIS_URL, every retry after it is quiet, and one line says when Redis answers again', async () => {
    // A port that takes each connection and resets it at once, counting them: the bot's retries
    // (the app's, the apply, time-box and digest workers', the queues') are seen, not timed.
    let attempts = 0;
    const resets = createServer((socket) => {
      attempts++;
      socket.resetAndDestroy();
    });
    await new Promise<void>((resolve) => resets.listen(0, '127.0.0.1', resolve));
    const { port } = resets.address() as AddressInfo;
    const run = startOn({
      RMQ_URL: brokerUrl(),
      REDIS_URL: `redis://127.0.0.1:${port}`,
      RMQ_LINT_SCHEDULE: '0 9 * * 1',
    });
    let redis: RedisServer | undefined;
    try {
      await run.listening();
      await waitFor(() => attempts >= 40, { what: 'the bot to try Redis 40 times', deadlineMs: 60_000 });
      const lines = run
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: number; msg: string });
      const naming = lines.filter((l) => l.msg.includes('REDIS_URL'));
      expect(naming.map((l) => l.msg)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Redis does not answer at redis://127\\.0\\.0\\.1:${port} \\(.+\\): check REDIS_URL\\.`,
          ),
        ),
      ]);
      // Beside it, at warn or above, only the probe's change of state; no stack trace anywhere.
      const loud = lines.filter((l) => l.level >= 40 && !l.msg.includes('REDIS_URL'));
      expect(loud.map((l) => l.msg).filter((m) => !m.startsWith('health: redis'))).toEqual([]);
      expect(loud.length).toBeLessThanOrEqual(1);
      expect(run.output()).not.toMatch(/"stack"|\n {4}at /);

      await new Promise<void>((resolve) => resets.close(() => resolve()));
      redis = await startRedisServer([], port);
      await waitFor(() => run.stdout().includes(`Redis answers again at redis://127.0.0.1:${port}`), {
        what: 'the bot to say Redis answers again',
        deadlineMs: 60_000,
      });
    } finally {
      run.child.kill('SIGKILL');
      await run.exited;
      resets.close();
      await redis?.stop();
    }
  }, 120_000);
});
