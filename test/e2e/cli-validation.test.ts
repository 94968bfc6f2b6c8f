/**
 * One validation of a definition for every path, equal to what the broker refuses, on what users
 * run: the package's `bin/rmq.js` (`plan`, `lint FILE`, `preview create`, `import`) and, for
 * `import`, the compiled bot (`dist/main.js`, its `POST /api/import`) with a Redis of its own and
 * the local fake of Slack. Each definitions file is one of ours, in the shape the case needs; each
 * rule is shown on the real brokers first (the policy PUT to a vhost of the test's own and refused
 * there; a plugin's key where the plugin is off, on scripts/broker-plain), then refused by every
 * path with the same sentence, exit 2, nothing filed. What a broker takes plans there. And `lint`
 * of a vhost where a tie sits under an operator limit above both tied policies: the limit never
 * bites whichever the broker picks, and lint says so.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RabbitError } from '../../src/rabbit/errors.ts';
import { type BotProcess, spawnImportBot } from '../support/botProcess.ts';
import { brokerCredentials, uniqueName, waitFor } from '../support/broker.ts';
import { brokersUp, clientFor, PLAIN, type TestBroker } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';

// With the broker where a plugin is off (scripts/broker-plain), for the plugin's key there.
const { up } = await brokersUp({ plain: true });
const machine = up[0] as TestBroker;
const plain = up.find((b) => b === PLAIN);
const SECRET = 'cli-validation-signing-secret';
const TOKEN = 'ci-token-cli-validation-0123456';
const vhost = uniqueName('validation');
const cwd = mkdtempSync(join(tmpdir(), 'rmq-validation-'));
let pkg: Built;
let slack: FakeSlack;
let redis: RedisServer;
let bot: BotProcess;
/** The bot `import` files through, by broker: the machine's, and the plain broker's when it runs. */
const botUrls = new Map<TestBroker, string>();
let plainRedis: RedisServer | undefined;
let plainBot: BotProcess | undefined;

beforeAll(async () => {
  pkg = await built();
  [slack, redis] = await Promise.all([startFakeSlack(), startRedisServer()]);
  for (const b of up) {
    const c = clientFor(b);
    await c.putVhost(vhost);
    await c.close();
  }
  const importBot = async (broker: TestBroker, redisUrl: string, dir: string) => {
    const spawned = await spawnImportBot({
      mainJs: realpathSync(join(pkg.outdir, 'main.js')),
      cwd: dir,
      slack,
      redisUrl,
      signingSecret: SECRET,
      token: TOKEN,
      vhosts: [vhost],
      brokerUrl: broker.url,
    });
    botUrls.set(broker, spawned.url);
    return spawned.bot;
  };
  bot = await importBot(machine, redis.url, cwd);
  if (plain) {
    plainRedis = await startRedisServer();
    plainBot = await importBot(plain, plainRedis.url, mkdtempSync(join(cwd, 'plain-')));
  }
}, 180_000);

afterAll(async () => {
  bot?.child.kill('SIGKILL');
  plainBot?.child.kill('SIGKILL');
  await Promise.allSettled([slack?.close(), redis?.stop(), plainRedis?.stop()]);
  for (const b of up) {
    const c = clientFor(b);
    await c.deleteVhost(vhost).catch(() => undefined);
    await c.close();
  }
  rmSync(cwd, { recursive: true, force: true });
});

/** `rmq …` on `broker` (the machine's by default), as a CI job runs it. */
const rmq = (args: readonly string[], broker: TestBroker = machine) => {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(
    pkg.bin,
    args,
    {
      RMQ_URL: broker.url,
      RMQ_USER: user,
      RMQ_PASSWORD: password,
      RMQ_BOT_URL: botUrls.get(broker) ?? '',
      RMQ_BOT_TOKEN: TOKEN,
    },
    cwd,
  );
};

let files = 0;
/** A topology operator manifest of one policy, written for the case. */
function manifest(spec: Record<string, unknown>): string {
  const path = join(cwd, `policy-${++files}.yaml`);
  const body = JSON.stringify({ vhost, applyTo: 'queues', priority: 0, ...spec });
  writeFileSync(
    path,
    `apiVersion: rabbitmq.com/v1beta1\nkind: Policy\nmetadata: {name: p${files}}\nspec: ${body}\n`,
  );
  return path;
}

/** What the broker answers to the policy PUT as given: null when it takes it (then removed), else its reason. */
async function brokerAnswer(
  broker: TestBroker,
  policy: { name: string; pattern: string; applyTo?: string; definition: Record<string, unknown> },
): Promise<string | null> {
  const client = clientFor(broker);
  try {
    await client.putPolicy('user', { vhost, priority: 0, applyTo: 'queues', ...policy });
    await client.deletePolicy('user', vhost, policy.name);
    return null;
  } catch (e) {
    if (!(e instanceof RabbitError) || e.code !== 'refused-by-broker') throw e;
    return e.reason ?? e.message;
  } finally {
    await client.close();
  }
}

/**
 * Every path that reads a file, refusing it with `sentence`: exit 2, the sentence on stderr
 * (`import` on the brokers a bot of the test files to).
 */
async function everyPathRefuses(path: string, sentence: string, broker: TestBroker = machine): Promise<void> {
  const runs = [
    await rmq(['plan', path], broker),
    await rmq(['lint', path, '--fail-on', 'warning'], broker),
    ...(botUrls.has(broker)
      ? [await rmq(['import', path, '--vhost', vhost, '--reason', 'validation', '--json'], broker)]
      : []),
  ];
  for (const run of runs) {
    expect(run.code, run.out + run.err).toBe(2);
    expect(run.err).toContain(sentence);
  }
}

/** The broker runs the federation plugin (its management part): its links endpoint answers. */
const hasFederation = async (broker: TestBroker) => {
  const { user, password } = brokerCredentials();
  const res = await fetch(new URL('/api/federation-links', broker.url), {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
  });
  await res.body?.cancel();
  return res.status === 200;
};

describe('one validation of a definition for every path, equal to what the broker refuses', () => {
  it("a federation key where the plugin is off (scripts/broker-plain): the broker's 400, and every path refuses the file naming the plugin; every broker with the plugin (3.10.8 and the 4.x) plans it", async () => {
    // Every broker of the project runs federation but the plain one.
    for (const b of up)
      expect(await hasFederation(b), `${b.label}, as ${b.script} sets it`).toBe(b !== PLAIN);
    const definition = { 'federation-upstream': 'origin' };
    const path = manifest({
      name: 'federation-policy',
      pattern: '^fed\\.',
      applyTo: 'exchanges',
      definition,
    });
    if (plain) {
      expect(await brokerAnswer(plain, { name: 'fed', pattern: '^fed\\.', definition })).toMatch(
        /not recognised policy settings/,
      );
      const client = clientFor(plain);
      const { versionText } = await client.overview();
      await client.close();
      const sentence = `federation-upstream is accepted only while the federation plugin is enabled on the broker, and RabbitMQ ${versionText} here has not enabled it`;
      await everyPathRefuses(path, sentence, plain);
      const preview = await rmq(
        [
          'preview',
          'create',
          'federation-policy',
          '--pattern',
          '^fed\\.',
          '--definition',
          JSON.stringify(definition),
          '--vhost',
          vhost,
        ],
        plain,
      );
      expect(preview.code).toBe(2);
      expect(preview.err).toContain(sentence);
    }
    for (const b of up.filter((x) => x !== PLAIN)) {
      expect(await brokerAnswer(b, { name: 'fed', pattern: '^fed\\.', definition }), b.label).toBeNull();
      const run = await rmq(['plan', path, '--json'], b);
      expect(run.code, `${b.label}: ${run.err}`).toBe(0);
      expect(JSON.parse(run.out).changes).toMatchObject([{ action: 'create', policy: 'federation-policy' }]);
    }
  });

  it("lint FILE refuses what plan refuses, the same way: apply-to classic_queues on 3.10.8, ha-mode on 4.x, each the broker's 400", async () => {
    expect(
      await brokerAnswer(machine, {
        name: 'cq',
        pattern: '^cq\\.',
        applyTo: 'classic_queues',
        definition: { 'max-length': 10 },
      }),
    ).toMatch(/classic_queues/);
    const classic = manifest({
      name: 'classic-cap',
      pattern: '^cq\\.',
      applyTo: 'classic_queues',
      definition: { 'max-length': 10 },
    });
    await everyPathRefuses(classic, 'apply-to "classic_queues" is not accepted by RabbitMQ 3.10.8');
    const mirrored = manifest({ name: 'mirrored', pattern: '^ha\\.', definition: { 'ha-mode': 'all' } });
    for (const b of up.filter((x) => x !== machine)) {
      expect(
        await brokerAnswer(b, { name: 'ha', pattern: '^ha\\.', definition: { 'ha-mode': 'all' } }),
        b.label,
      ).toMatch(/not recognised policy settings/);
      await everyPathRefuses(mirrored, 'classic queue mirroring was removed in RabbitMQ 4.0', b);
    }
  });

  it('patterns the broker refuses at PUT, refused by every path on every broker; the one 4.3 takes plans there', async () => {
    const twice = manifest({
      name: 'dup-names',
      pattern: '^(?<n>a)(?<n>b)',
      definition: { 'max-length': 1 },
    });
    const recursive = manifest({ name: 'recursive', pattern: '(?R)', definition: { 'max-length': 1 } });
    for (const b of up) {
      const client = clientFor(b);
      const erlang = (await client.overview()).version.erlang ?? 0;
      await client.close();
      expect(
        await brokerAnswer(b, { name: 'dup', pattern: '^(?<n>a)(?<n>b)', definition: { 'max-length': 1 } }),
        b.label,
      ).toMatch(/two named subpatterns have the same name/);
      await everyPathRefuses(twice, 'two named subpatterns have the same name', b);
      const answer = await brokerAnswer(b, { name: 'rec', pattern: '(?R)', definition: { 'max-length': 1 } });
      if (erlang < 28) {
        expect(answer, b.label).toMatch(/recursive call could loop indefinitely/);
        await everyPathRefuses(recursive, 'recursive call could loop indefinitely', b);
      } else {
        expect(answer, b.label).toBeNull();
        const run = await rmq(['plan', recursive], b);
        expect(run.code, `${b.label}: ${run.err}`).toBe(0);
      }
    }
  });

  it('a policy name of 256 bytes: plan, lint FILE, import and preview create refuse it with one sentence', async () => {
    const name = 'n'.repeat(256);
    const sentence = 'The policy name is 256 bytes; names are at most 255 bytes.';
    await everyPathRefuses(
      manifest({ name, pattern: '^long\\.', definition: { 'max-length': 1 } }),
      sentence,
    );
    const preview = await rmq([
      'preview',
      'create',
      name,
      '--pattern',
      '^long\\.',
      '--definition',
      '{"max-length":1}',
      '--vhost',
      vhost,
    ]);
    expect(preview.code).toBe(2);
    expect(preview.err).toContain(sentence);
    // One of 255 bytes plans.
    const fits = await rmq([
      'plan',
      manifest({ name: 'n'.repeat(255), pattern: '^long\\.', definition: { 'max-length': 1 } }),
    ]);
    expect(fits.code, fits.err).toBe(0);
  });
});

describe('lint of a vhost: a tie under an operator limit', () => {
  it('two policies tied at priority 5 (max-length 500 and 1000) under an operator max-length 100,000: it never bites whichever the broker picks, and lint says so', async () => {
    const client = clientFor(machine);
    const tied = uniqueName('tie-ceiling');
    await client.putVhost(tied);
    try {
      for (const q of ['q.1', 'q.2']) await client.putQueue(tied, q, { kind: 'classic' });
      for (const [name, cap] of [
        ['cap-a', 500],
        ['cap-b', 1000],
      ] as const)
        await client.putPolicy('user', {
          vhost: tied,
          name,
          pattern: '^q\\.',
          applyTo: 'queues',
          priority: 5,
          definition: { 'max-length': cap },
        });
      await client.putPolicy('operator', {
        vhost: tied,
        name: 'ceiling',
        pattern: '^q\\.',
        applyTo: 'queues',
        priority: 0,
        definition: { 'max-length': 100_000 },
      });
      // The broker: each queue gets one of the two, and the ceiling's limit is not what it uses.
      for (const q of ['q.1', 'q.2']) {
        const detail = await waitFor(
          async () => {
            const d = await client.getQueue(tied, q);
            return d?.operatorPolicy === 'ceiling' && d.effectiveDefinition ? d : undefined;
          },
          { deadlineMs: 30_000, intervalMs: 250, what: `the broker to report the policies of ${q}` },
        );
        expect(['cap-a', 'cap-b']).toContain(detail.policy);
        expect([500, 1000]).toContain(detail.effectiveDefinition?.['max-length']);
      }
      const run = await rmq(['lint', '--vhost', tied, '--json']);
      expect(run.code, run.err).toBe(0);
      const { findings } = JSON.parse(run.out) as { findings: { kind: string; policy: string }[] };
      expect(findings.map((f) => [f.kind, f.policy])).toEqual([
        ['tie', 'cap-a'],
        ['operator-never-stricter', 'ceiling'],
      ]);
      expect(findings[1]).toMatchObject({ highestOwn: 1000, limit: 100_000, objectCount: 2 });
    } finally {
      await client.deleteVhost(tied);
      await client.close();
    }
  });
});
