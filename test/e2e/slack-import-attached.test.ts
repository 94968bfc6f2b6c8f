/**
 * A set from Slack, on what users run: the compiled bot (`dist/main.js`) with a Redis of its own
 * and the local fake of Slack's Web API, the definitions file attached to the message that
 * mentions the bot. The fake serves the file as Slack does (`files.info`, then its private URL,
 * which answers the bytes only with the bot token, else Slack's sign-in page). `@rmq plan` answers
 * the plan (the loss first, the changes in order, the whole plan attached) and writes nothing;
 * a file over the limit is refused before a byte is downloaded; `@rmq import --reason …` files
 * one request for the set, its requester the Slack user, approved in the approvals channel,
 * applied in the plan's order (the queue keeping its 30 messages) and audited as one set.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotProcess, labBotEnv, spawnBot } from '../support/botProcess.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { BROKERS } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeSlack, renderedText, startFakeSlack } from '../support/fakeSlack.ts';
import type { Harness } from '../support/harness.ts';
import { messages } from '../support/messages.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';
import { buttonsOf, ephemeralTo, isPost } from '../support/requestFlow.ts';
import { approveRename } from '../support/setFlow.ts';
import { mentionEnvelope, type SignedRequests, signedRequests } from '../support/slackRequests.ts';

const SECRET = 'slack-import-signing-secret';
const vhost = uniqueName('slack-import');
const admin = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-slack-import-'));
const CHANNEL = 'C0INCIDENT';
const ASKER = 'U0ONCALL';
let pkg: Built;
let slack: FakeSlack;
let redis: RedisServer;
let bot: BotProcess;
let botUrl: string;
let signedTo: SignedRequests;

const KEEP = {
  pattern: '^orders\\.audit$',
  'apply-to': 'queues',
  priority: 10,
  definition: { 'max-length': 1000 },
};
const FALLBACK = {
  pattern: '^orders\\.',
  'apply-to': 'queues',
  priority: 1,
  definition: { 'max-length': 5 },
};

/** The rename as a one-vhost export (4.x style: no vhost fields; --vhost names it). */
const RENAME = JSON.stringify({
  policies: [
    { name: 'keep-audit', ...KEEP },
    { name: 'fallback', ...FALLBACK },
  ],
  queues: [{ name: 'orders.audit' }],
});

beforeAll(async () => {
  pkg = await built();
  [slack, redis] = await Promise.all([startFakeSlack(), startRedisServer()]);
  await admin.putVhost(vhost);
  await admin.putQueue(vhost, 'orders.audit', { kind: 'classic' });
  for (const [name, p] of [
    ['keep', KEEP],
    ['fallback', FALLBACK],
  ] as const) {
    const { 'apply-to': applyTo, ...rest } = p;
    await admin.putPolicy('user', { vhost, name, applyTo, ...rest });
  }
  const m = await messages(BROKERS[0] as (typeof BROKERS)[number], vhost);
  await m.publish('orders.audit', 30);
  await m.close();
  const env = labBotEnv({
    cwd,
    environmentsYaml: `environments:\n  - { name: lab, url: "${brokerUrl()}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD, approvers: [U0APPROVER], approvalsChannel: C0APPROVALS }\n`,
    slack,
    redisUrl: redis.url,
    signingSecret: SECRET,
  });
  bot = spawnBot(realpathSync(join(pkg.outdir, 'main.js')), { ...env, RMQ_VHOSTS: vhost }, cwd);
  botUrl = `http://127.0.0.1:${await bot.listening()}`;
  signedTo = signedRequests(botUrl, SECRET, slack);
}, 180_000);

afterAll(async () => {
  bot?.child.kill('SIGKILL');
  await Promise.allSettled([slack?.close(), redis?.stop(), admin.deleteVhost(vhost)]);
  await admin.close();
  rmSync(cwd, { recursive: true, force: true });
});

/** `@rmq <words>` in CHANNEL by ASKER, with `files` attached; Slack's ack. */
async function mention(words: string, files: readonly { id: string; name: string }[] = []) {
  const res = await signedTo.mention(
    mentionEnvelope({
      text: `<@${slack.botUserId}> ${words}`,
      botUserId: slack.botUserId,
      channel: CHANNEL,
      user: ASKER,
      files: files.map((f) => ({ id: f.id, name: f.name })),
    }),
  );
  expect(res.status).toBe(200);
}

const rmq = (args: readonly string[]) => {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    args,
    { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password, REDIS_URL: redis.url },
    cwd,
  );
};

describe('a definitions file attached to a mention', () => {
  it('a slash command carries no file: the asker is told to attach it to a mention; nothing downloaded', async () => {
    const { responseUrl } = await signedTo.command('plan');
    const answer = await signedTo.answerTo(responseUrl);
    expect(renderedText(answer.args)).toContain('attached to the message that mentions the bot');
    expect(slack.downloads()).toEqual([]);
  });

  it('@rmq plan: downloaded with the bot token, the plan posted (the loss first, the changes in order, the whole plan attached); nothing written', async () => {
    const file = slack.shareFile({ name: 'definitions.json', content: RENAME });
    const mark = slack.calls.length;
    await mention(`plan --vhost ${vhost} --prune`, [file]);
    const post = await slack.waitForCall((c) => slack.calls.indexOf(c) >= mark && isPost(CHANNEL)(c), {
      what: 'the plan posted in the channel',
    });
    const text = renderedText(post.args);
    expect(text).toContain('2 changes');
    expect(text.indexOf('What the set loses')).toBeLessThan(text.indexOf('in the order they are written'));
    expect(text.indexOf('keep-audit')).toBeLessThan(text.indexOf('`keep`'));
    expect(text).toContain('1 unchanged');
    expect(text).toContain('Left alone (not managed by the bot): 1 queues');
    const upload = await waitFor(
      () =>
        slack
          .uploads()
          .find((u) => u.completed && u.channel_id === CHANNEL && u.filename.startsWith('plan-')),
      { what: 'the whole plan attached' },
    );
    expect(upload.content).toContain('1. create policy "keep-audit"');
    expect(upload.content).toContain('2. delete policy "keep"');
    // The file came with the bot token, and only that way.
    expect(slack.downloads().map((d) => d.args)).toEqual([{ id: file.id, authorized: true }]);
    expect(slack.calls.some((c) => c.method === 'files.info' && c.args.file === file.id)).toBe(true);
    expect(await admin.getPolicy('user', vhost, 'keep')).not.toBeNull();
    expect(await admin.getPolicy('user', vhost, 'keep-audit')).toBeNull();
    expect(slack.rejections()).toEqual([]);
  });

  it('a mention without a file, and a file over 10 MB: refused with the sentence, nothing downloaded or filed', async () => {
    const before = slack.downloads().length;
    let mark = slack.calls.length;
    await mention(`import --vhost ${vhost} --reason "no file"`);
    let told = await slack.waitForCall((c) => slack.calls.indexOf(c) >= mark && ephemeralTo(ASKER)(c), {
      what: 'the asker told to attach the file',
    });
    expect(renderedText(told.args)).toContain('attach the export or the Policy manifests');

    const big = slack.shareFile({ name: 'huge.json', content: RENAME, size: 11 * 1024 * 1024 });
    mark = slack.calls.length;
    await mention(`import --vhost ${vhost} --reason "too big"`, [big]);
    told = await slack.waitForCall((c) => slack.calls.indexOf(c) >= mark && ephemeralTo(ASKER)(c), {
      what: 'the asker told the file is too large',
    });
    expect(renderedText(told.args)).toContain('over the 10.0 MB the bot reads');
    expect(slack.downloads().length).toBe(before);
    expect(JSON.parse((await rmq(['requests', '--json'])).out).requests).toEqual([]);
  });

  it("@rmq import --reason: one request for the set, the Slack user its requester; approved in the approvals channel, applied in the plan's order, audited as one set", async () => {
    const file = slack.shareFile({ name: 'definitions.json', content: RENAME });
    const mark = slack.calls.length;
    await mention(`import --vhost ${vhost} --prune --reason "policies as code, from the incident"`, [file]);
    const approval = await slack.waitForCall(
      (c) => slack.calls.indexOf(c) >= mark && isPost('C0APPROVALS')(c) && buttonsOf(c).length >= 2,
      { what: 'the set posted in the approvals channel with its buttons' },
    );
    const id = String(buttonsOf(approval)[0]?.value);
    const shown = renderedText(approval.args);
    expect(shown.indexOf('On the way')).toBeLessThan(shown.indexOf('in the order of writing'));
    expect(shown.indexOf('keep-audit')).toBeLessThan(shown.indexOf('`keep`'));
    const filed = await slack.waitForCall((c) => slack.calls.indexOf(c) >= mark && isPost(CHANNEL)(c), {
      what: 'the asker told the set is filed',
    });
    expect(renderedText(filed.args)).toContain('filed by');
    const open = JSON.parse((await rmq(['requests', '--json'])).out).requests as {
      id: string;
      requester: { user: string; reason: string };
    }[];
    expect(open).toMatchObject([
      { id, requester: { user: ASKER, reason: 'policies as code, from the incident' } },
    ]);
    // Nothing written before an approval.
    expect(await admin.getPolicy('user', vhost, 'keep-audit')).toBeNull();

    const entries = await approveRename({
      h: { slack, ...signedTo } as unknown as Harness,
      admin,
      vhost,
      request: { id, ts: String(approval.response?.ts) },
      reason: 'read the plan',
      history: async () => (await rmq(['history', '--vhost', vhost, '--json'])).out,
    });
    expect(entries.map((e) => [e.action, e.policy, e.set, e.requester.user])).toEqual(
      expect.arrayContaining([
        ['create', 'keep-audit', { id, index: 0, size: 2 }, ASKER],
        ['delete', 'keep', { id, index: 1, size: 2 }, ASKER],
      ]),
    );
    expect((await rmq(['history', '--verify'])).code).toBe(0);
    await waitFor(async () => (await admin.getQueue(vhost, 'orders.audit'))?.live?.messages === 30, {
      what: 'orders.audit still holding its 30 messages',
    });
    expect(slack.rejections()).toEqual([]);
  }, 120_000);
});
