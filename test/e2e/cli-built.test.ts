/**
 * What users run: every terminal command through the package's `bin/rmq.js` after the build
 * (built.ts), in text and `--json`, against the real broker (the lab in a vhost of its own) and a
 * real Redis of this suite's own (the compiled CLI reads the production key prefix `rmq:`), and
 * every exit code of INTERFACE.md: 0 answered, 2 refused input, 3 broker or Redis not asked, 1
 * anything else (a broken audit chain). The in-process suites test the sources; this one the
 * artifact (the sources answered `history` while the bundle crashed).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import { commandsOf, type TerminalCommandName } from '../../src/commands/registry.ts';
import type { WhichResult } from '../../src/commands/which/which.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { type Built, built } from '../support/built.ts';
import { type CliRun, runBuiltRmq } from '../support/cli.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';
import { APPROVER, REQUESTER, type WorkflowFixture, workflowFixture } from '../support/workflow.ts';

const vhost = uniqueName('cli-built');
const client = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-cli-built-'));
let pkg: Built;
let redis: RedisServer;
let fx: WorkflowFixture;

function rmq(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    args,
    { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password, REDIS_URL: redis.url, ...env },
    cwd,
  );
}

/**
 * Exits `code`: when it answered, nothing on stderr; otherwise what it says there is a sentence
 * of ours (`rmq: …`), never a stack trace.
 */
function expectExit(run: CliRun, code: number): void {
  expect(run.code, `exit code; stderr: ${run.err}`).toBe(code);
  if (code === 0) expect(run.err).toBe('');
  else if (run.err !== '') expect(run.err).toMatch(/^rmq: /);
  expect(`${run.out}${run.err}`).not.toMatch(/\n\s+at /);
}

beforeAll(async () => {
  [pkg, redis] = await Promise.all([built(), startRedisServer()]);
  await setUpLab(client, vhost);
  fx = workflowFixture(client, { redisUrl: redis.url, keyPrefix: 'rmq' });
});

afterAll(async () => {
  await fx?.close();
  await client.deleteVhost(vhost);
  await client.close();
  await redis?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

describe('bin/rmq.js after the build', () => {
  it('help: usage on stdout, exit 0; an unknown command: exit 2 with the usage', async () => {
    for (const args of [[], ['help'], ['--help']]) {
      const run = await rmq(args);
      expectExit(run, 0);
      // every command the terminal answers, from the one table
      for (const { usage } of commandsOf('terminal')) expect(run.out).toContain(`rmq ${usage}\n`);
    }
    // help says how to get a document, and the version is the package's (issue 30)
    const help = await rmq(['help']);
    expect(help.out).toContain('--json after any command prints its answer as one JSON document');
    const pkgJson = JSON.parse(readFileSync(join(dirname(pkg.bin), '..', 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const version = await rmq([flag]);
      expectExit(version, 0);
      expect(version.out).toBe(`${pkgJson.name} ${pkgJson.version}\n`);
    }
    const unknown = await rmq(['whcih', 'orders.audit', '--json']);
    expectExit(unknown, 2);
    expect(JSON.parse(unknown.out)).toMatchObject({ error: { code: 'bad-input' } });
    expect(unknown.err).toContain('whcih');
  });

  it('policies: text and --json; a vhost that does not exist: exit 2', async () => {
    const json = await rmq(['policies', '--vhost', vhost, '--json']);
    expectExit(json, 0);
    const doc = JSON.parse(json.out) as {
      answer: string;
      policies: { name: string }[];
      operatorPolicies: { name: string }[];
    };
    expect(doc.answer).toBe('listed');
    expect(doc.policies.map((p) => p.name).sort()).toEqual(
      ['audit-fallback', 'audit-retention', 'billing-a', 'billing-b', 'orders-ae', 'orders-cap'].sort(),
    );
    expect(doc.operatorPolicies.map((p) => p.name)).toEqual(['orders-ceiling']);
    const text = await rmq(['policies'], { RMQ_VHOST: vhost });
    expectExit(text, 0);
    expect(text.out).toContain('audit-retention');
    expect(text.out).toContain('orders-ceiling');
    const missing = await rmq(['policies', '--vhost', `${vhost}-nope`]);
    expectExit(missing, 2);
  });

  it('which: text and --json from the broker; bad flags exit 2; a broker not asked exits 3', async () => {
    const r = await waitFor(
      async () => {
        const run = await rmq(['which', 'orders.audit', '--vhost', vhost, '--json']);
        expectExit(run, 0);
        const result = JSON.parse(run.out) as WhichResult;
        return result.answer === 'reported' ? result : undefined;
      },
      { deadlineMs: 30_000, intervalMs: 500, what: 'the broker to report orders.audit' },
    );
    expect(r.inForce).toMatchObject({ name: 'audit-retention', priority: 10 });
    expect(r.operatorPolicy).toMatchObject({ name: 'orders-ceiling' });
    const text = await rmq(['which', 'orders.audit', '--vhost', vhost]);
    expectExit(text, 0);
    expect(text.out).toContain('audit-retention');

    expectExit(await rmq(['which']), 2);
    expectExit(await rmq(['which', 'orders.audit', '--kind', 'nonsense', '--vhost', vhost]), 2);
    expectExit(await rmq(['which', 'x'.repeat(256), '--vhost', vhost]), 2);
    const unknownEnv = await rmq(['which', 'orders.audit', '--env', 'nowhere', '--json']);
    expectExit(unknownEnv, 2);
    expect(unknownEnv.err).toContain('nowhere');

    const unreachable = await rmq(['which', 'orders.audit', '--vhost', vhost, '--json'], {
      RMQ_URL: 'http://127.0.0.1:9',
    });
    expectExit(unreachable, 3);
    expect(JSON.parse(unreachable.out)).toMatchObject({ answer: 'not-asked' });
    const refused = await rmq(['which', 'orders.audit', '--vhost', vhost], { RMQ_PASSWORD: 'wrong' });
    expectExit(refused, 3);
    expect(refused.out).toContain('refused the bot');
  });

  it('an environments file (RMQ_ENVIRONMENTS, YAML read only when there is one): --env answers; a file that is not YAML exits 2', async () => {
    const { user, password } = brokerCredentials();
    const file = join(cwd, 'environments.yaml');
    writeFileSync(
      file,
      `environments:\n  - name: lab\n    url: ${brokerUrl()}\n    userEnv: LAB_USER\n    passwordEnv: LAB_PASSWORD\n`,
    );
    const files = { RMQ_ENVIRONMENTS: file, LAB_USER: user, LAB_PASSWORD: password };
    const run = await rmq(['which', 'orders.audit', '--vhost', vhost, '--env', 'lab', '--json'], files);
    expectExit(run, 0);
    expect((JSON.parse(run.out) as WhichResult).object).toMatchObject({ name: 'orders.audit', exists: true });
    writeFileSync(file, 'environments: [\n');
    const broken = await rmq(['which', 'orders.audit', '--vhost', vhost, '--env', 'lab'], files);
    expectExit(broken, 2);
    expect(broken.err).toContain('cannot read');
  });

  it('every answer names the environment it answered for (and the vhost): the last line of the text, `env` in --json (issue 30)', async () => {
    const { user, password } = brokerCredentials();
    const file = join(cwd, 'two-environments.yaml');
    const entry = (name: string) =>
      `  - { name: ${name}, url: "${brokerUrl()}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD }\n`;
    writeFileSync(file, `environments:\n${entry('prod')}${entry('staging')}`);
    const files = { RMQ_ENVIRONMENTS: file, LAB_USER: user, LAB_PASSWORD: password };
    const planFile = join(cwd, 'plan.json');
    writeFileSync(planFile, JSON.stringify({ policies: [] }));
    // Typed from the table: a new terminal command must be asked here, and name its environment.
    // `import` answers through a bot: test/e2e/import-flow.test.ts asks it (and its `env`).
    const asked: { readonly [N in Exclude<TerminalCommandName, 'help' | 'import'>]: readonly string[] } = {
      policies: ['--vhost', vhost],
      which: ['orders.audit', '--vhost', vhost],
      path: ['orders.audit', '--vhost', vhost],
      preview: ['delete', 'audit-retention', '--vhost', vhost],
      requests: [],
      history: ['--vhost', vhost],
      lint: ['--vhost', vhost],
      links: ['--vhost', vhost],
      plan: [planFile, '--vhost', vhost],
    };
    for (const [command, args] of Object.entries(asked)) {
      const text = await rmq([command, ...args, '--env', 'staging'], files);
      expectExit(text, 0);
      const where = args.includes('--vhost') ? `vhost "${vhost}" in ` : '';
      expect(text.out.trimEnd().split('\n').at(-1), command).toBe(
        `Answered for ${where}environment staging.`,
      );
      const json = await rmq([command, ...args, '--env', 'staging', '--json'], files);
      expectExit(json, 0);
      expect((JSON.parse(json.out) as { env: unknown }).env, command).toBe('staging');
    }
    // Without --env, requests and history answer for every environment, and say so.
    const every = await rmq(['requests', '--json'], files);
    expect(JSON.parse(every.out)).toMatchObject({ env: null });
    expect((await rmq(['requests'], files)).out.trimEnd().split('\n').at(-1)).toBe(
      'Answered for every environment.',
    );
  });

  it('RMQ_VHOSTS limits the environment: its vhosts answered, another refused with exit 2 naming the list, the broker not asked (issue 30)', async () => {
    const limits = { RMQ_VHOSTS: `${vhost}, team-b` };
    expectExit(await rmq(['which', 'orders.audit', '--vhost', vhost], limits), 0);
    for (const args of [
      ['which', 'orders.audit', '--vhost', 'someone-else'],
      ['policies', '--vhost', 'someone-else'],
      ['preview', 'delete', 'audit-retention', '--vhost', 'someone-else'],
    ]) {
      // An unreachable broker: the refusal comes before anything is asked.
      const run = await rmq(args, { ...limits, RMQ_URL: 'http://127.0.0.1:1' });
      expectExit(run, 2);
      expect(run.err).toBe(
        `rmq: Environment default is limited to the vhosts "${vhost}", "team-b": vhost "someone-else" is not one of them, so nothing was asked or changed there.\n`,
      );
    }
  });

  it('preview delete, create and edit: text and --json; a bad definition exits 2', async () => {
    const del = await rmq(['preview', 'delete', 'audit-retention', '--vhost', vhost, '--json']);
    expectExit(del, 0);
    const delDoc = JSON.parse(del.out) as { change: { action: string }; objects: { name: string }[] };
    expect(delDoc.change.action).toBe('delete');
    expect(delDoc.objects.map((o) => o.name)).toContain('orders.audit');
    const delText = await rmq(['preview', 'delete', 'audit-retention', '--vhost', vhost]);
    expectExit(delText, 0);
    expect(delText.out).toContain('orders.audit');

    const create = ['preview', 'create', 'tight', '--pattern', '^orders', '--priority', '20'];
    const created = await rmq([...create, '--definition', '{"max-length":10}', '--vhost', vhost, '--json']);
    expectExit(created, 0);
    const createdDoc = JSON.parse(created.out) as {
      change: { action: string; after: { priority: number } };
      objects: { name: string; after: { policy: string } }[];
    };
    expect(createdDoc.change).toMatchObject({ action: 'create', after: { priority: 20 } });
    expect(createdDoc.objects.find((o) => o.name === 'orders.audit')?.after.policy).toBe('tight');
    expectExit(await rmq([...create, '--definition', '{"max-length":10}', '--vhost', vhost]), 0);

    const edit = await rmq(['preview', 'edit', 'orders-cap', '--priority', '50', '--vhost', vhost, '--json']);
    expectExit(edit, 0);
    expect(JSON.parse(edit.out)).toMatchObject({ change: { action: 'edit', after: { priority: 50 } } });
    expectExit(await rmq(['preview', 'edit', 'orders-cap', '--priority', '50', '--vhost', vhost]), 0);

    const bad = await rmq([...create, '--definition', '{"max-length":', '--vhost', vhost]);
    expectExit(bad, 2);
    expect(bad.err).toContain('definition');
  });

  it('requests and history read what the bot wrote; history --verify exits 1 on a broken chain; Redis away exits 3', async () => {
    // What the bot does, on the Redis the CLI reads: a request filed, another approved and applied.
    await fx.worker(client);
    const wf = fx.workflow();
    const fileInput = (policy: string) => ({
      vhost,
      layer: 'user' as const,
      action: 'create' as const,
      policy,
      fields: { pattern: `^${policy}\\.`, definition: { 'max-length': 5 } },
      requester: { user: REQUESTER, reason: 'INC-19' },
      origin: { channel: 'C0INCIDENT' },
    });
    const pending = (await wf.file(fileInput('pending-one'))).request;
    const applied = (await wf.file(fileInput('applied-one'))).request;
    await wf.decide(applied.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
    await waitFor(async () => (await wf.get(applied.id))?.state === 'applied', {
      deadlineMs: 60_000,
      what: 'the approved request to be applied',
    });

    const requests = await rmq(['requests', '--json']);
    expectExit(requests, 0);
    const listed = (JSON.parse(requests.out) as { requests: ChangeRequest[] }).requests;
    expect(listed.map((q) => [q.id, q.state])).toEqual([[pending.id, 'pending']]);
    const requestsText = await rmq(['requests']);
    expectExit(requestsText, 0);
    expect(requestsText.out).toContain(pending.id);
    expect(requestsText.out).toContain('pending-one');

    const history = await rmq(['history', 'applied-one', '--json']);
    expectExit(history, 0);
    const entries = (
      JSON.parse(history.out) as { entries: { requestId: string; action: string; vhost: string }[] }
    ).entries;
    expect(entries).toEqual([expect.objectContaining({ requestId: applied.id, action: 'create', vhost })]);
    const historyText = await rmq(['history', '--vhost', vhost]);
    expectExit(historyText, 0);
    expect(historyText.out).toContain('applied-one');
    const verified = await rmq(['history', '--verify', '--json']);
    expectExit(verified, 0);
    expect(JSON.parse(verified.out)).toMatchObject({ verify: { ok: true, records: 1 } });

    // A record edited behind the bot's back: the chain no longer holds (exit 1, naming it).
    const [row] = await fx.redis.xrange('rmq:audit', '-', '+');
    const record = JSON.parse(row?.[1][1] as string) as { id: string; requester: { reason: string } };
    record.requester.reason = 'nothing to see';
    await fx.redis.del('rmq:audit');
    await fx.redis.xadd('rmq:audit', row?.[0] as string, 'record', JSON.stringify(record));
    const broken = await rmq(['history', '--verify']);
    expectExit(broken, 1);
    expect(broken.err).toContain(record.id);

    for (const args of [['requests'], ['history', '--json']]) {
      const down = await rmq(args, { REDIS_URL: 'redis://127.0.0.1:1' });
      expectExit(down, 3);
      expect(down.err).toContain('Redis');
    }
  });
});
