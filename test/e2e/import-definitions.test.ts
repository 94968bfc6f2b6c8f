/**
 * A definitions file filed through the bot, on what users run: the compiled bot (`dist/main.js`,
 * its environment limited to two vhosts) with a Redis of its own and the local fake of Slack, and the
 * package's `bin/rmq.js`:
 * - `import FILE` without `--vhost` files every vhost the file names, whatever RMQ_VHOST says;
 * - a folder is filed as one set of its files; `--vhost-map FROM=TO` files a staging file in
 *   another vhost, from the terminal and from Slack (`@rmq plan`, `@rmq import` with the file
 *   attached);
 * - `POST /api/import` answers 400 `{error}` for an alias bomb, a file nested 3,000 deep, a
 *   `__proto__` key in a definition (never filed without it) and a folder with a broken file.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotProcess, spawnImportBot } from '../support/botProcess.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName } from '../support/broker.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeSlack, renderedText, startFakeSlack } from '../support/fakeSlack.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';
import { ephemeralTo, isPost } from '../support/requestFlow.ts';
import { mentionEnvelope, type SignedRequests, signedRequests } from '../support/slackRequests.ts';

const SECRET = 'import-definitions-signing-secret';
const TOKEN = 'ci-token-import-definitions-0123';
const orders = uniqueName('imp-orders');
const billing = uniqueName('imp-billing');
const admin = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-import-definitions-'));
const CHANNEL = 'C0DEFS';
const ASKER = 'U0DEFS';
let pkg: Built;
let slack: FakeSlack;
let redis: RedisServer;
let bot: BotProcess;
let botUrl: string;
let signedTo: SignedRequests;

beforeAll(async () => {
  pkg = await built();
  [slack, redis] = await Promise.all([startFakeSlack(), startRedisServer()]);
  await admin.putVhost(orders);
  await admin.putVhost(billing);
  ({ bot, url: botUrl } = await spawnImportBot({
    mainJs: realpathSync(join(pkg.outdir, 'main.js')),
    cwd,
    slack,
    redisUrl: redis.url,
    signingSecret: SECRET,
    token: TOKEN,
    vhosts: [orders, billing],
  }));
  signedTo = signedRequests(botUrl, SECRET, slack);
}, 180_000);

afterAll(async () => {
  bot?.child.kill('SIGKILL');
  await Promise.allSettled([
    slack?.close(),
    redis?.stop(),
    admin.deleteVhost(orders),
    admin.deleteVhost(billing),
  ]);
  await admin.close();
  rmSync(cwd, { recursive: true, force: true });
});

const rmq = (args: readonly string[], extra: Record<string, string> = {}) => {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    args,
    {
      RMQ_BOT_URL: botUrl,
      RMQ_BOT_TOKEN: TOKEN,
      RMQ_URL: brokerUrl(),
      RMQ_USER: user,
      RMQ_PASSWORD: password,
      REDIS_URL: redis.url,
      ...extra,
    },
    cwd,
  );
};

function file(name: string, text: string): string {
  const path = join(cwd, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const exported = (...policies: { vhost?: string; name: string; pattern: string }[]) =>
  JSON.stringify({
    policies: policies.map((p) => ({ ...p, 'apply-to': 'queues', definition: { 'max-length': 100 } })),
  });

type Filed = {
  request: { id: string };
  plan: { changes: { action: string; policy: string; vhost: string }[] };
};
const changesOf = (doc: Filed) => doc.plan.changes.map((c) => `${c.action} ${c.policy} in ${c.vhost}`).sort();

/** `POST /api/import` as a CI job would send it, with the token. */
async function postImport(body: unknown): Promise<{ status: number; body: { error?: { message: string } } }> {
  const res = await fetch(new URL('/api/import', botUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { error?: { message: string } } };
}

describe('import through the bot: the vhosts of the file', () => {
  it('without --vhost, a file naming two vhosts is filed in both (not read as vhost /, nor narrowed by RMQ_VHOST)', async () => {
    const path = file(
      'two.json',
      exported(
        { vhost: orders, name: 'two-orders', pattern: '^o' },
        { vhost: billing, name: 'two-billing', pattern: '^b' },
      ),
    );
    const run = await rmq(['import', path, '--reason', 'both vhosts', '--json'], { RMQ_VHOST: orders });
    expect(run.code, run.out + run.err).toBe(0);
    expect(changesOf(JSON.parse(run.out))).toEqual([
      `create two-billing in ${billing}`,
      `create two-orders in ${orders}`,
    ]);
  });

  it('a folder: its files filed as one set', async () => {
    const folder = join(cwd, 'k8s');
    file(
      'k8s/orders.yaml',
      `apiVersion: rabbitmq.com/v1beta1\nkind: Policy\nspec: {name: folder-orders, vhost: ${orders}, pattern: ^fo, definition: {max-length: 10}}\n`,
    );
    file(
      'k8s/billing.yaml',
      `apiVersion: rabbitmq.com/v1beta1\nkind: Policy\nspec: {name: folder-billing, vhost: ${billing}, pattern: ^fb, definition: {max-length: 10}}\n`,
    );
    const run = await rmq(['import', folder, '--reason', 'the folder', '--json']);
    expect(run.code, run.out + run.err).toBe(0);
    expect(changesOf(JSON.parse(run.out))).toEqual([
      `create folder-billing in ${billing}`,
      `create folder-orders in ${orders}`,
    ]);
  });

  it('--vhost-map FROM=TO: a staging file filed in another vhost', async () => {
    const path = file('staging.json', exported({ vhost: 'staging', name: 'mapped', pattern: '^m' }));
    const run = await rmq([
      'import',
      path,
      '--vhost-map',
      `staging=${billing}`,
      '--reason',
      'from staging',
      '--json',
    ]);
    expect(run.code, run.out + run.err).toBe(0);
    expect(changesOf(JSON.parse(run.out))).toEqual([`create mapped in ${billing}`]);
    const outside = await rmq(['import', path, '--vhost-map', 'staging=elsewhere', '--reason', 'outside']);
    expect(outside.code).toBe(2);
    expect(outside.err).toContain('vhost "elsewhere" is not one of them');
  });
});

describe('POST /api/import refuses what it cannot read: 400 {error}, nothing filed', () => {
  const aliasBomb = [
    'kind: ConfigMap',
    'data:',
    '  a0: &a0 [x, x, x, x, x, x, x, x, x]',
    ...Array.from({ length: 9 }, (_, i) => `  a${i + 1}: &a${i + 1} [${Array(9).fill(`*a${i}`).join(', ')}]`),
    '',
  ].join('\n');
  const deep = `{"policies": [{"vhost": "${orders}", "name": "deep", "pattern": "^d", "definition": {"max-length": 1, "x": ${'{"a": '.repeat(3000)}1${'}'.repeat(3000)}}}]}`;
  const proto = `{"policies": [{"vhost": "${orders}", "name": "proto", "pattern": "^p", "definition": {"__proto__": {"max-length": 1}, "message-ttl": 60000}}]}`;

  it.each([
    ['an alias bomb', aliasBomb, /expands its aliases/],
    ['a file nested 3,000 deep', deep, /nested more than 64 levels deep/],
    ['__proto__ in a definition', proto, /__proto__ is not a policy key RabbitMQ/],
  ])('%s', async (_what, text, words) => {
    const answer = await postImport({ source: 'ci.json', file: text, reason: 'attack' });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toMatch(words);
    expect(bot.output()).not.toMatch(/Excessive alias count|Maximum call stack/);
  });

  it('a folder with a file that is not YAML: 400 naming the file', async () => {
    const answer = await postImport({
      source: 'k8s',
      files: [
        {
          name: 'k8s/ok.yaml',
          file: `kind: Policy\nspec: {name: ok, vhost: ${orders}, pattern: ^k, definition: {max-length: 1}}\n`,
        },
        { name: 'k8s/broken.yaml', file: 'kind: Policy\nspec: [1, 2\n' },
      ],
      reason: 'broken',
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toContain('The file "k8s/broken.yaml" is neither JSON nor valid YAML');
  });
});

describe('Slack: a file attached to the mention, with --vhost-map', () => {
  async function mention(words: string, files: readonly { id: string; name: string }[]) {
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
  const staging = () =>
    slack.shareFile({
      name: 'staging.json',
      content: exported({ vhost: 'staging', name: 'slack-mapped', pattern: '^s' }),
    });

  it('@rmq plan --vhost-map: planned in the vhost it maps to; a vhost outside RMQ_VHOSTS refused', async () => {
    let mark = slack.calls.length;
    await mention(`plan --vhost-map staging=${orders}`, [staging()]);
    const post = await slack.waitForCall((c) => slack.calls.indexOf(c) >= mark && isPost(CHANNEL)(c), {
      what: 'the plan posted in the channel',
    });
    expect(renderedText(post.args)).toContain('slack-mapped');
    expect(renderedText(post.args)).toContain(orders);

    mark = slack.calls.length;
    await mention('plan', [staging()]);
    const told = await slack.waitForCall((c) => slack.calls.indexOf(c) >= mark && ephemeralTo(ASKER)(c), {
      what: 'the asker told the vhost is outside the environment',
    });
    expect(renderedText(told.args)).toContain('vhost "staging" is not one of them');
  });

  it('@rmq import --vhost-map --reason: filed in the vhost it maps to', async () => {
    const mark = slack.calls.length;
    await mention(`import --vhost-map staging=${orders} --reason "from staging"`, [staging()]);
    await slack.waitForCall((c) => slack.calls.indexOf(c) >= mark && isPost(CHANNEL)(c), {
      what: 'the set filed, said in the channel',
    });
    const open = JSON.parse((await rmq(['requests', '--json'])).out).requests as unknown[];
    expect(open).toContainEqual(
      expect.objectContaining({
        vhost: orders,
        requester: { user: ASKER, reason: 'from staging' },
        set: { source: 'staging.json', size: 1, vhosts: [orders] },
      }),
    );
  });
});
