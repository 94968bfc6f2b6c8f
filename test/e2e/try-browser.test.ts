/**
 * `npm run try` in a real browser: scripts/try.ts as a process (the built bot behind the Slack
 * stand-in, the lab in a vhost of its own, a Redis of the file's own), its page driven in headless
 * Chromium (Debian's, /usr/bin/chromium, through playwright-core): a whole change request typed,
 * approved by someone else with a reason, its audit diff read; and a name full of markup shown as
 * written, never run. First, the README's `--at` trial from the terminal: a change made outside the
 * bot, then the question about the minute before it.
 *
 * Without Chromium the file is skipped, loudly; `.ci/run` installs it and sets
 * TRY_BROWSER_REQUIRED=1, which turns its absence into a failure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trialRedisUrl } from '../../scripts/try.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { built, repoRoot } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const required = process.env.TRY_BROWSER_REQUIRED === '1';
const present = existsSync(CHROMIUM);

if (!present && !required) {
  console.warn(
    `\n${'*'.repeat(72)}\n*** ${CHROMIUM} is missing: the npm run try browser test is SKIPPED ***\n*** (apt-get install chromium; .ci/run does, and then requires it) ***\n${'*'.repeat(72)}\n`,
  );
}

describe.skipIf(!present && !required)('npm run try, in headless Chromium', () => {
  const vhost = uniqueName('try');
  const admin = adminClient();
  const cwd = mkdtempSync(join(tmpdir(), 'rmq-try-e2e-'));
  let redis: RedisServer;
  let trial: ChildProcess;
  let out = '';
  let url = '';
  let browser: Browser;

  beforeAll(async () => {
    expect(present, `${CHROMIUM} is required here (TRY_BROWSER_REQUIRED=1) but missing`).toBe(true);
    const [{ outdir }, server] = await Promise.all([built(), startRedisServer()]);
    redis = server;
    const { user, password } = brokerCredentials();
    trial = spawn(
      process.execPath,
      [
        join(repoRoot, 'node_modules/tsx/dist/cli.mjs'),
        join(repoRoot, 'scripts/try.ts'),
        '--port',
        '0',
        '--vhost',
        vhost,
        '--redis',
        redis.url,
        '--bot',
        join(outdir, 'main.js'),
      ],
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    trial.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    trial.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    url = await waitFor(
      () => {
        if (trial.exitCode !== null) throw new Error(`npm run try exited ${trial.exitCode}: ${out}`);
        return /The trial is ready: (http:\/\/127\.0\.0\.1:\d+)\//.exec(out)?.[1];
      },
      { deadlineMs: 90_000, intervalMs: 100, what: `the trial to be ready (${out})` },
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    if (trial && trial.exitCode === null) {
      trial.kill('SIGTERM');
      await new Promise((r) => trial.once('exit', r));
    }
    await redis?.stop();
    await admin.deleteVhost(vhost);
    await admin.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  async function open(): Promise<Page> {
    const page = await browser.newPage();
    page.on('pageerror', (e) => {
      throw e;
    });
    await page.goto(`${url}/`);
    await page.getByLabel('Acting as').selectOption('U0ALICE');
    return page;
  }

  const team = (page: Page) => page.getByRole('log', { name: 'Messages in #orders-team' });
  const approvals = (page: Page) => page.getByRole('log', { name: 'Messages in #rmq-approvals' });

  it("the README's --at trial: a change outside the bot, then `which --at -1m` and `policies --at -1m` from the terminal say the minute before it", async () => {
    const { bin } = await built();
    const { user, password } = brokerCredentials();
    const env = {
      RMQ_URL: brokerUrl(),
      RMQ_USER: user,
      RMQ_PASSWORD: password,
      // The README's `export REDIS_URL=redis://127.0.0.1:6379/13`: the trial's database.
      REDIS_URL: trialRedisUrl(redis.url),
    };
    const rmq = (args: string[]) => runBuiltRmq(bin, [...args, '--vhost', vhost], env, cwd);
    // "wait a minute (it seals the lab's state when it starts)": until a minute ago is watched.
    await waitFor(
      async () => {
        const r = await rmq(['which', 'orders.audit', '--at', '-1m', '--json']);
        return r.code === 0 && (JSON.parse(r.out) as { known: boolean }).known;
      },
      { deadlineMs: 120_000, intervalMs: 2_000, what: 'a minute ago to be watched' },
    );
    await admin.putPolicy('user', {
      vhost,
      name: 'hotfix',
      pattern: '^orders\\.audit$',
      applyTo: 'queues',
      priority: 20,
      definition: { 'max-length': 7 },
    });
    try {
      await waitFor(async () => (await rmq(['which', 'orders.audit'])).out.includes('In force: hotfix'), {
        deadlineMs: 30_000,
        what: 'hotfix in force now',
      });
      // The change recorded (caught by the watch) before asking: it is then listed around.
      await waitFor(
        async () => (await rmq(['history', 'hotfix', '--json'])).out.includes('"action": "outside"'),
        { deadlineMs: 60_000, what: 'the change caught outside the bot' },
      );
      const then = await rmq(['which', 'orders.audit', '--at', '-1m']);
      expect(then.code, then.err).toBe(0);
      expect(then.out).toContain('recomputed from the trail; the broker cannot be asked about the past');
      expect(then.out).toMatch(/^ {2}In force: audit-retention — /m);
      expect(then.out).toMatch(/created policy "hotfix", outside the bot/);
      const listed = await rmq(['policies', '--at', '-1m']);
      expect(listed.code, listed.err).toBe(0);
      expect(listed.out).toContain('audit-retention');
      expect(listed.out).not.toMatch(/^ +\d+ {2}hotfix/m);
    } finally {
      await admin.deletePolicy('user', vhost, 'hotfix');
    }
  }, 240_000);

  it('types /rmq delete as alice, approves as bob with a reason, and shows the applied audit diff', async () => {
    const page = await open();
    // The channel's vhost was set to the lab when the trial started.
    await expect.poll(() => team(page).textContent(), { timeout: 20_000 }).toContain(vhost);

    await page
      .getByLabel('Message #orders-team')
      .fill('/rmq delete audit-retention --reason "INC-7: retire the audit DLX"');
    await page.getByLabel('Message #orders-team').press('Enter');
    const request = approvals(page).locator('.message', { hasText: 'Waiting for an approver' });
    await request.waitFor({ timeout: 30_000 });
    expect(await request.textContent()).toContain('INC-7: retire the audit DLX');
    expect(await request.textContent()).toMatch(/Requested by\s+@alice/);

    // Alice may not approve her own request: act as bob.
    await page.getByLabel('Acting as').selectOption('U0BOB');
    await request.getByRole('button', { name: 'Approve' }).click();
    const form = page.getByRole('dialog');
    await form.waitFor({ timeout: 20_000 });
    await form.locator('textarea, input[type=text]').first().fill('checked the fallback policy');
    await form.locator('.foot button.primary').click();
    await form.waitFor({ state: 'detached', timeout: 20_000 });

    const applied = approvals(page).locator('.message', { hasText: 'Applied:' });
    await applied.first().waitFor({ timeout: 60_000 });
    const diff = await applied.first().textContent();
    expect(diff).toContain('orders.audit');
    expect(diff).toMatch(/lost\s+dead-letter-exchange/);
    expect(diff).toMatch(/Approved by\s+@bob: checked the fallback policy/);
    // …and where it was asked.
    await team(page).locator('.message', { hasText: 'Applied:' }).first().waitFor({ timeout: 30_000 });
    expect((await admin.listPolicies(vhost)).map((p) => p.name)).not.toContain('audit-retention');
    await page.screenshot({ path: join(cwd, 'applied.png') });
    await page.close();
  }, 180_000);

  it("posts changes made outside the bot in the lab's vhost only (RMQ_VHOSTS), not in another", async () => {
    const page = await open();
    const other = uniqueName('try-other');
    await admin.putVhost(other);
    try {
      const policy = {
        pattern: '^nothing$',
        applyTo: 'queues',
        priority: 0,
        definition: { 'max-length': 1 },
      };
      await admin.putPolicy('user', { vhost: other, name: 'elsewhere', ...policy });
      await admin.putPolicy('user', { vhost, name: 'made-outside', ...policy });
      const inLab = approvals(page).locator('.message', { hasText: 'made-outside' });
      await inLab.first().waitFor({ timeout: 60_000 });
      expect(await inLab.first().textContent()).toContain('outside the bot');
      const shown = await approvals(page).textContent();
      expect(shown).not.toContain(other);
      expect(shown).not.toContain('elsewhere');
    } finally {
      await admin.deleteVhost(other);
      await page.close();
    }
  }, 90_000);

  it('shows a name full of markup as written: nothing of it runs or becomes an element', async () => {
    const page = await open();
    const name = '<img/src/onerror=window.__pwned=1><b>x</b>*b*';
    await page.getByLabel('Message #orders-team').fill(`/rmq which ${name}`);
    await page.getByLabel('Message #orders-team').press('Enter');
    // The bot's answer (not the command as typed): its heading names the object.
    const answer = team(page).locator('.message', { hasText: 'Which policy governs' }).last();
    await answer.waitFor({ timeout: 30_000 });
    expect(await answer.locator('code').first().textContent()).toBe(name);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('#channels img, #channels b, #channels script').count()).toBe(0);
    await page.close();
  }, 60_000);
});
