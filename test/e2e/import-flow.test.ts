/**
 * The CI flow as a pipeline runs it, on what users run: the compiled bot (`dist/main.js`) with a
 * Redis of its own and the local fake of Slack's Web API, and the package's `bin/rmq.js`. A
 * definitions file (the rename of the issue) planned (exit 4: something to change), then imported with a token files one request for the
 * set, in the plan's order, its requester `api:NAME`, and writes nothing before an approval. A
 * wrong token files nothing and exits 2. Approved in Slack (signed requests), the set is applied
 * in the plan's order, the queue keeping its 30 messages, and audited as one (`history --json`:
 * `set`; `--verify`). `requests` lists it as a set; applied, it is posted whole (every change with
 * its audit record), its requester `api:ci` never sent a direct message (Slack refuses one); its
 * Revert files the revert of the whole set, approved and applied back. A set over 50 vhosts is
 * named by their count.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotProcess, spawnImportBot } from '../support/botProcess.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { BROKERS } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeSlack, type RecordedCall, renderedText, startFakeSlack } from '../support/fakeSlack.ts';
import type { Harness } from '../support/harness.ts';
import { submission } from '../support/interactions.ts';
import { messages } from '../support/messages.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';
import { buttonsOf, requestFlow, viewOf } from '../support/requestFlow.ts';
import { approveRename } from '../support/setFlow.ts';
import { signedRequests } from '../support/slackRequests.ts';

const SECRET = 'import-flow-signing-secret';
const TOKEN = 'ci-token-0123456789abcdef';
const vhost = uniqueName('import-flow');
const admin = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-import-'));
let pkg: Built;
let slack: FakeSlack;
let redis: RedisServer;
let bot: BotProcess;
let botUrl: string;
/** Fifty vhosts besides `vhost`, made before the bot starts, for a set over all of them. */
const tenants = Array.from({ length: 50 }, (_, i) => `${vhost}-t${String(i).padStart(2, '0')}`);

const KEEP = {
  pattern: '^orders\\.audit$',
  'apply-to': 'queues',
  priority: 10,
  definition: { 'max-length': 1000 },
};

beforeAll(async () => {
  pkg = await built();
  [slack, redis] = await Promise.all([startFakeSlack(), startRedisServer()]);
  await Promise.all([vhost, ...tenants].map((v) => admin.putVhost(v)));
  await admin.putQueue(vhost, 'orders.audit', { kind: 'classic' });
  const { 'apply-to': applyTo, ...keep } = KEEP;
  await admin.putPolicy('user', { vhost, name: 'keep', applyTo, ...keep });
  await admin.putPolicy('user', {
    vhost,
    name: 'fallback',
    pattern: '^orders\\.',
    applyTo: 'queues',
    priority: 1,
    definition: { 'max-length': 5 },
  });
  const m = await messages(BROKERS[0] as (typeof BROKERS)[number], vhost);
  await m.publish('orders.audit', 30);
  await m.close();
  ({ bot, url: botUrl } = await spawnImportBot({
    mainJs: realpathSync(join(pkg.outdir, 'main.js')),
    cwd,
    slack,
    redisUrl: redis.url,
    signingSecret: SECRET,
    token: TOKEN,
    vhosts: [vhost, ...tenants],
  }));
}, 180_000);

afterAll(async () => {
  bot?.child.kill('SIGKILL');
  await Promise.allSettled([
    slack?.close(),
    redis?.stop(),
    admin.deleteVhost(vhost),
    ...tenants.map((v) => admin.deleteVhost(v)),
  ]);
  await admin.close();
  rmSync(cwd, { recursive: true, force: true });
});

/** The renamed policy as a one-vhost export (4.x style: no vhost fields; --vhost names it). */
function exportFile(): string {
  const path = join(cwd, 'definitions.json');
  writeFileSync(
    path,
    JSON.stringify({
      policies: [
        { name: 'keep-audit', ...KEEP },
        {
          name: 'fallback',
          pattern: '^orders\\.',
          'apply-to': 'queues',
          priority: 1,
          definition: { 'max-length': 5 },
        },
      ],
      queues: [{ name: 'orders.audit' }],
    }),
  );
  return path;
}

/** The signed requests to the bot, as the Slack flow helpers take them. */
const harnessOf = () => ({ slack, ...signedRequests(botUrl, SECRET, slack) }) as unknown as Harness;

/** The set this suite files and applies (the rename), once filed. */
let setId: string | undefined;
const appliedSetId = () => {
  if (!setId) throw new Error('the set was not filed');
  return setId;
};

/** `rmq import … --json` run (filed: exit 0, nothing on stderr), then its approval post, once the bot made it. */
async function importedAndPosted(args: readonly string[], what: string): Promise<RecordedCall> {
  const mark = slack.calls.length;
  const run = await rmq(args);
  expect(run.err).toBe('');
  expect(run.code).toBe(0);
  const id = JSON.parse(run.out).request.id as string;
  return waitFor(
    () =>
      slack.calls
        .slice(mark)
        .find((c) => c.method === 'chat.postMessage' && buttonsOf(c).some((b) => b.value === id)),
    { what },
  );
}

const rmq = (args: readonly string[], token = TOKEN) => {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    args,
    {
      RMQ_BOT_URL: botUrl,
      RMQ_BOT_TOKEN: token,
      RMQ_URL: brokerUrl(),
      RMQ_USER: user,
      RMQ_PASSWORD: password,
      REDIS_URL: redis.url,
    },
    cwd,
  );
};

describe('import in CI: a file imported with a token through the bot', () => {
  it('the pipeline plans the file first (no token, no write): the loss first, the changes in order, exit 4 with --detailed-exitcode', async () => {
    const run = await rmq(['plan', exportFile(), '--vhost', vhost, '--prune', '--detailed-exitcode']);
    expect(run.err).toBe('');
    expect(run.code).toBe(4);
    const at = (s: string) => run.out.indexOf(s);
    expect(at('What the set loses:')).toBeGreaterThanOrEqual(0);
    expect(at('What the set loses:')).toBeLessThan(at('The changes, in the order they are written:'));
    expect(at('1. create policy "keep-audit"')).toBeGreaterThan(0);
    expect(at('1. create policy "keep-audit"')).toBeLessThan(at('2. delete policy "keep"'));
    expect(await admin.getPolicy('user', vhost, 'keep-audit')).toBeNull();
  });

  it('a wrong token files nothing and exits 2', async () => {
    const run = await rmq(
      ['import', exportFile(), '--vhost', vhost, '--prune', '--reason', 'rename', '--json'],
      'not-a-token-of-the-bot',
    );
    expect(run.code).toBe(2);
    expect(JSON.parse(run.out)).toMatchObject({ error: { code: 'unauthorized' } });
    expect(run.err).toContain('refused RMQ_BOT_TOKEN');
    expect(run.out + run.err).not.toContain(TOKEN);
    const open = await rmq(['requests', '--json']);
    expect(JSON.parse(open.out).requests).toEqual([]);
  });

  it("a token of RMQ_API_TOKENS files one request for the set, in the plan's order, requester api:NAME; nothing written yet", async () => {
    const _mark = slack.calls.length;
    const run = await rmq([
      'import',
      exportFile(),
      '--vhost',
      vhost,
      '--prune',
      '--reason',
      'rename keep',
      '--json',
    ]);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const filed = JSON.parse(run.out);
    expect(filed).toMatchObject({
      env: 'lab',
      request: { state: 'pending', requester: { user: 'api:ci' } },
      plan: {
        changes: [
          { action: 'create', policy: 'keep-audit' },
          { action: 'delete', policy: 'keep' },
        ],
      },
    });
    expect(bot.output()).not.toContain(TOKEN);

    const open = JSON.parse((await rmq(['requests', '--json'])).out).requests as { id: string }[];
    expect(open.map((r) => r.id)).toEqual([filed.request.id]);
    // Nothing written before an approval.
    expect(await admin.getPolicy('user', vhost, 'keep-audit')).toBeNull();
  });

  it('`requests` shows the set as a set: its file, how many changes, its vhosts (not its first step alone)', async () => {
    const text = await rmq(['requests']);
    expect(text.code).toBe(0);
    expect(text.out).toContain(
      `import of 2 policy changes from ${JSON.stringify(exportFile())} in lab (vhost ${JSON.stringify(vhost)})`,
    );
    expect(text.out).not.toContain('import policy');
    expect(text.out).not.toContain('after:');
    const json = JSON.parse((await rmq(['requests', '--json'])).out).requests;
    expect(json[0]).toMatchObject({ set: { source: exportFile(), size: 2, vhosts: [vhost] } });
  });

  it("approved in Slack (signed requests): applied in the plan's order, the queue keeping its messages, audited as one set", async () => {
    const requested = JSON.parse((await rmq(['requests', '--json'])).out).requests as { id: string }[];
    const id = requested[0]?.id as string;
    setId = id;
    const post = await waitFor(
      () =>
        slack.calls.find((c) => c.method === 'chat.postMessage' && buttonsOf(c).some((b) => b.value === id)),
      { what: 'the set posted in the approvals channel with its buttons' },
    );
    const entries = await approveRename({
      h: harnessOf(),
      admin,
      vhost,
      request: { id, ts: String(post.response?.ts) },
      reason: 'reviewed in the PR',
      history: async () => (await rmq(['history', '--vhost', vhost, '--json'])).out,
    });
    expect(entries.map((e) => [e.action, e.policy, e.set])).toEqual(
      expect.arrayContaining([
        ['create', 'keep-audit', { id, index: 0, size: 2 }],
        ['delete', 'keep', { id, index: 1, size: 2 }],
      ]),
    );
    expect((await rmq(['history', '--verify'])).code).toBe(0);
    await waitFor(async () => (await admin.getQueue(vhost, 'orders.audit'))?.live?.messages === 30, {
      what: 'orders.audit still holding its 30 messages',
    });
  }, 120_000);

  it('the applied set is posted whole: every change, each with its audit record and diff, and one Revert', async () => {
    const id = appliedSetId();
    const post = await waitFor(
      () =>
        slack.calls.find(
          (c) => c.ok && c.method === 'chat.postMessage' && renderedText(c.args).includes(`a-${id}-1`),
        ),
      { what: 'the applied set posted' },
    );
    const text = renderedText(post.args);
    expect(text).toContain('*Applied:* import of 2 policy changes from');
    expect(text).toContain(`*1. create policy* \`keep-audit\` in \`${vhost}\` · \`a-${id}-0\``);
    expect(text).toContain(`*2. delete policy* \`keep\` in \`${vhost}\` · \`a-${id}-1\``);
    expect(text).toContain('+ definition.max-length: (none)');
    expect(buttonsOf(post).map((b) => [b.action_id, b.value])).toEqual([['rmq_audit_revert', `a-${id}-1`]]);
  });

  it('its requester api:ci (no Slack user) is never sent a direct message: the decision is said in the request’s thread', async () => {
    const id = appliedSetId();
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === 'api:ci')).toEqual(
      [],
    );
    const approval = slack.calls.find(
      (c) => c.method === 'chat.postMessage' && buttonsOf(c).some((b) => b.value === id),
    );
    expect(
      slack.calls.some(
        (c) =>
          c.method === 'chat.postMessage' &&
          c.args.thread_ts === approval?.response?.ts &&
          renderedText(c.args).includes('*Approved*'),
      ),
    ).toBe(true);
  });

  it('Revert on the applied set files the revert of the whole set, planned like any set; approved, every policy is back', async () => {
    const id = appliedSetId();
    const post = slack.calls.find(
      (c) => c.ok && c.method === 'chat.postMessage' && renderedText(c.args).includes(`a-${id}-1`),
    ) as RecordedCall;
    const h = harnessOf();
    const flow = requestFlow(h);
    const mark = slack.calls.length;
    const clicked = await h.interact(
      flow.click(
        'U0OPS',
        { action_id: 'rmq_audit_revert', value: `a-${id}-1` },
        { channel: 'C0APPROVALS', ts: String(post.response?.ts) },
      ),
    );
    expect(clicked.status).toBe(200);
    const opened = await flow.next(mark, (c) => c.method === 'views.open' && c.ok, 'the revert form');
    const answer = await h.interact(submission('U0OPS', viewOf(opened), { reason: 'undo the rename' }));
    expect(answer.status).toBe(200);
    const revert = await flow.next(
      mark,
      (c) =>
        c.ok &&
        c.method === 'chat.postMessage' &&
        buttonsOf(c).some((b) => b.action_id === 'rmq_request_approve'),
      'the revert posted for approval',
    );
    const revertId = String(buttonsOf(revert)[0]?.value);
    expect(renderedText(revert.args)).toContain('revert of 2 policy changes from');
    const open = JSON.parse((await rmq(['requests', '--json'])).out).requests as {
      id: string;
      change: { action: string };
      set?: { size: number };
      requester: { user: string };
      revertOf?: string;
    }[];
    expect(open.find((r) => r.id === revertId)).toMatchObject({
      change: { action: 'revert' },
      set: { size: 2 },
      requester: { user: 'U0OPS' },
      revertOf: `a-${id}-1`,
    });
    const decided = await flow.decide(
      'U0APPROVER',
      'approve',
      { id: revertId, ts: String(revert.response?.ts) },
      'ok',
    );
    expect(decided.status).toBe(200);
    await waitFor(async () => (await admin.getPolicy('user', vhost, 'keep-audit')) === null, {
      what: 'the set reverted',
    });
    expect(await admin.getPolicy('user', vhost, 'keep')).toMatchObject({ priority: 10 });
    const entries = await waitFor(
      async () => {
        const e = JSON.parse((await rmq(['history', '--vhost', vhost, '--json'])).out).entries as {
          action: string;
          policy: string;
          revertOf?: string;
        }[];
        return e.length >= 4 && e;
      },
      { what: 'the revert in the trail' },
    );
    expect(
      entries
        .filter((e) => e.action === 'revert')
        .map((e) => [e.policy, e.revertOf])
        .sort(),
    ).toEqual([
      ['keep', `a-${id}-1`],
      ['keep-audit', `a-${id}-0`],
    ]);
    expect((await rmq(['history', '--verify'])).code).toBe(0);
  }, 120_000);

  it('--for through the terminal and the API: the set filed time-boxed (the approval post says so); too short, refused before the bot', async () => {
    const path = join(cwd, 'fallback.json');
    writeFileSync(
      path,
      JSON.stringify({
        policies: [
          {
            name: 'fallback',
            pattern: '^orders\\.',
            'apply-to': 'queues',
            priority: 1,
            definition: { 'max-length': 6 },
          },
        ],
      }),
    );
    const short = await rmq(['import', path, '--vhost', vhost, '--reason', 'try 6', '--for', '5s']);
    expect(short.code).toBe(2);
    expect(short.err).toContain('--for 5s is too short');
    const post = await importedAndPosted(
      ['import', path, '--vhost', vhost, '--reason', 'try 6', '--for', '1h', '--json'],
      'the time-boxed set posted for approval',
    );
    expect(JSON.stringify(post.args)).toContain('Time-boxed:* reverted 1h after it is applied');
  }, 60_000);

  it('a set over 50 vhosts: its approval post and `requests` say "50 vhosts", never its first vhost alone', async () => {
    const fifty = tenants;
    const path = join(cwd, 'tenants.json');
    writeFileSync(
      path,
      JSON.stringify({
        policies: fifty.map((v) => ({
          vhost: v,
          name: 'tenant-cap',
          pattern: '^tenant\\.',
          'apply-to': 'queues',
          priority: 0,
          definition: { 'max-length': 10 },
        })),
      }),
    );
    const post = await importedAndPosted(
      ['import', path, '--reason', 'cap every tenant', '--json'],
      'the 50-vhost set posted for approval',
    );
    const text = renderedText(post.args);
    expect(text).toContain('*Environment* `lab` · 50 vhosts (each in the attached file)');
    expect(text).not.toContain(`*vhost* \`${fifty[0]}\``);
    const listed = await rmq(['requests']);
    expect(listed.out).toContain('import of 50 policy changes from');
    expect(listed.out).toContain('in lab (50 vhosts)');
  }, 120_000);
});
