/**
 * How `plan`, `lint FILE` (and `preview --set`) read a definitions file, through the package's
 * `bin/rmq.js` against the real brokers, each file written here in the shape it tests:
 * - the topology operator's OperatorPolicy: `applyTo` defaults to `queues`, and `all` or
 *   `exchanges` are refused (its CRD's enum);
 * - without `--vhost`, every vhost the file names, RMQ_VHOSTS checked against those; `--vhost-map`;
 * - a folder of manifests, each file read on its own; an upstream the same folder declares is not
 *   a missing target;
 * - the sentences: an empty spec, a vhost from `--vhost`, a JSON error's line and column, no usage
 *   line under a refusal of the file or of a vhost hidden from the user;
 * - an alias bomb and a file nested 3,000 deep refused (exit 2, `{error}`), not a crash;
 * - `__proto__` in a definition refused as an unknown key, never dropped.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, brokerCredentials, brokerUrl, uniqueName, withUser } from '../support/broker.ts';
import { brokersUp, clientFor, inVhostOn, type TestBroker } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { type CliRun, runBuiltRmq } from '../support/cli.ts';

const { up } = await brokersUp();
const client = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-cli-definitions-'));
const orders = uniqueName('defs-orders');
const billing = uniqueName('defs-billing');
let pkg: Built;

const env = (url = brokerUrl()) => {
  const { user, password } = brokerCredentials();
  return { RMQ_URL: url, RMQ_USER: user, RMQ_PASSWORD: password };
};
const rmq = (args: readonly string[], extra: Record<string, string> = {}, url?: string) =>
  runBuiltRmq(pkg.bin, args, { ...env(url), ...extra }, cwd);

/** Writes `text` to `name` under the test's folder; returns its path. */
function file(name: string, text: string): string {
  const path = join(cwd, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const json = (run: CliRun) =>
  JSON.parse(run.out) as Record<string, unknown> & { error?: { message: string } };
const changesOf = (run: CliRun) =>
  (
    json(run).changes as {
      action: string;
      policy: string;
      vhost: string;
      operator: boolean;
      after: unknown;
    }[]
  ).map((c) => `${c.action} ${c.operator ? 'operator ' : ''}${c.policy} in ${c.vhost}`);

/** A Policy manifest as the operator's users write them: one per file, no leading `---`. */
const policy = (spec: Record<string, unknown>, kind = 'Policy') =>
  [
    'apiVersion: rabbitmq.com/v1beta1',
    `kind: ${kind}`,
    `metadata: {name: ${String(spec.name)}}`,
    `spec: ${JSON.stringify(spec)}`,
    '',
  ].join('\n');

/** A whole-broker export naming both vhosts. */
const twoVhosts = () =>
  JSON.stringify({
    policies: [
      {
        vhost: orders,
        name: 'cap-orders',
        pattern: '^orders\\.',
        'apply-to': 'queues',
        priority: 1,
        definition: { 'max-length': 100 },
      },
      {
        vhost: billing,
        name: 'cap-billing',
        pattern: '^billing\\.',
        'apply-to': 'queues',
        priority: 1,
        definition: { 'max-length': 200 },
      },
    ],
  });

beforeAll(async () => {
  pkg = await built();
  await client.putVhost(orders);
  await client.putVhost(billing);
  // An operator policy as the topology operator creates it from an OperatorPolicy without applyTo.
  await client.putPolicy('operator', {
    vhost: orders,
    name: 'limits',
    pattern: '.*',
    applyTo: 'queues',
    priority: 0,
    definition: { 'max-length': 100000 },
  });
}, 120_000);

afterAll(async () => {
  await client.deleteVhost(orders);
  await client.deleteVhost(billing);
  await client.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe("the topology operator's OperatorPolicy", () => {
  it('without applyTo is read as queues, as the operator creates it: nothing to change against the broker', async () => {
    const path = file(
      'operator.yaml',
      policy(
        { name: 'limits', vhost: orders, pattern: '.*', definition: { 'max-length': 100000 } },
        'OperatorPolicy',
      ),
    );
    const run = await rmq(['plan', path, '--json', '--detailed-exitcode']);
    expect(run.code, run.out + run.err).toBe(0);
    expect(json(run)).toMatchObject({ changes: [], unchanged: 1 });
    // A Policy keeps all as its default.
    const user = file(
      'policy.yaml',
      policy({ name: 'p', vhost: orders, pattern: '^x', definition: { 'max-length': 1 } }),
    );
    const planned = await rmq(['plan', user, '--json']);
    expect(planned.code, planned.err).toBe(0);
    expect(json(planned).changes).toMatchObject([{ after: { applyTo: 'all' } }]);
  });

  it.each(['all', 'exchanges'])('with applyTo %s is refused with a sentence, exit 2', async (applyTo) => {
    const path = file(
      `operator-${applyTo}.yaml`,
      policy(
        { name: 'limits', vhost: orders, pattern: '.*', applyTo, definition: { 'max-length': 1 } },
        'OperatorPolicy',
      ),
    );
    const run = await rmq(['plan', path, '--json']);
    expect(run.code).toBe(2);
    expect(json(run).error?.message).toMatch(
      new RegExp(
        `OperatorPolicy at document 1 has applyTo "${applyTo}": the topology operator takes queues, classic_queues, quorum_queues, streams`,
      ),
    );
  });
});

describe('without --vhost, every vhost the file names', () => {
  it('plan and lint FILE take both vhosts, RMQ_VHOSTS checked against them (not against /), RMQ_VHOST aside', async () => {
    const path = file('two-vhosts.json', twoVhosts());
    const scoped = { RMQ_VHOSTS: `${orders},${billing}`, RMQ_VHOST: orders };
    const plan = await rmq(['plan', path, '--json'], scoped);
    expect(plan.code, plan.out + plan.err).toBe(0);
    expect(changesOf(plan).sort()).toEqual([
      `create cap-billing in ${billing}`,
      `create cap-orders in ${orders}`,
    ]);
    const lint = await rmq(['lint', path, '--json'], scoped);
    expect(lint.code, lint.out + lint.err).toBe(0);
    expect(json(lint)).toMatchObject({ answer: 'linted', vhosts: [billing, orders].sort(), policies: 3 });
    const text = await rmq(['lint', path], scoped);
    expect(text.out).toContain(
      `as if applied to vhosts ${[billing, orders]
        .sort()
        .map((v) => `"${v}"`)
        .join(', ')}`,
    );
    // A vhost of the file outside RMQ_VHOSTS is refused, named.
    const outside = await rmq(['plan', path], { RMQ_VHOSTS: orders });
    expect(outside.code).toBe(2);
    expect(outside.err).toContain(`vhost "${billing}" is not one of them`);
    expect((await rmq(['lint', path], { RMQ_VHOSTS: orders })).err).toContain(
      `vhost "${billing}" is not one of them`,
    );
  });

  it('--vhost-map FROM=TO plans a file written for one vhost against another; a FROM the file does not name is refused', async () => {
    const staging = file(
      'staging.yaml',
      policy({
        name: 'cap-orders',
        vhost: 'staging',
        pattern: '^orders\\.',
        applyTo: 'queues',
        priority: 1,
        definition: { 'max-length': 100 },
      }),
    );
    const run = await rmq(['plan', staging, '--vhost-map', `staging=${orders}`, '--json'], {
      RMQ_VHOSTS: orders,
    });
    expect(run.code, run.out + run.err).toBe(0);
    expect(changesOf(run)).toEqual([`create cap-orders in ${orders}`]);
    const lint = await rmq(['lint', staging, `--vhost-map=staging=${orders}`, '--json']);
    expect(lint.code, lint.out + lint.err).toBe(0);
    expect(json(lint)).toMatchObject({ vhost: orders, policies: 2 });
    const typo = await rmq(['plan', staging, '--vhost-map', `stagin=${orders}`]);
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('--vhost-map stagin=');
    expect(typo.err).toContain('names no vhost "stagin" (it names "staging")');
    const bad = await rmq(['plan', staging, '--vhost-map', 'staging']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--vhost-map takes FROM=TO');
  });
});

describe('a folder of definitions files', () => {
  it('every .json, .yaml and .yml file, each read on its own (no leading ---), planned as one set', async () => {
    const k8s = join(cwd, 'k8s');
    file(
      'k8s/orders.yaml',
      policy({
        name: 'cap-orders',
        vhost: orders,
        pattern: '^orders\\.',
        applyTo: 'queues',
        definition: { 'max-length': 100 },
      }),
    );
    file(
      'k8s/limits.yml',
      policy(
        { name: 'limits', vhost: orders, pattern: '.*', definition: { 'max-length': 100000 } },
        'OperatorPolicy',
      ),
    );
    file(
      'k8s/billing.json',
      JSON.stringify({
        policies: [
          { vhost: billing, name: 'cap-billing', pattern: '^billing\\.', definition: { 'max-length': 200 } },
        ],
      }),
    );
    file('k8s/queue.yaml', 'apiVersion: rabbitmq.com/v1beta1\nkind: Queue\nspec: {name: orders.audit}\n');
    file('k8s/README.md', '# not a manifest\n');
    file(
      'k8s/nested/other.yaml',
      policy({ name: 'not-read', vhost: orders, pattern: '^n', definition: { 'max-length': 1 } }),
    );
    const run = await rmq(['plan', k8s, '--json']);
    expect(run.code, run.out + run.err).toBe(0);
    expect(changesOf(run).sort()).toEqual([
      `create cap-billing in ${billing}`,
      `create cap-orders in ${orders}`,
    ]);
    expect(json(run)).toMatchObject({ unchanged: 1, ignored: { Queue: 1 } });
    const lint = await rmq(['lint', k8s, '--json']);
    expect(lint.code, lint.out + lint.err).toBe(0);

    // The same policy in two of its files is the same policy twice.
    file(
      'k8s/again.yaml',
      policy({ name: 'cap-orders', vhost: orders, pattern: '^o', definition: { 'max-length': 1 } }),
    );
    const twice = await rmq(['plan', k8s]);
    expect(twice.code).toBe(2);
    expect(twice.err).toContain(
      `The policy "cap-orders" of vhost "${orders}" is in the folder twice ("${k8s}/again.yaml" document 1 and "${k8s}/orders.yaml" document 1)`,
    );
    rmSync(join(k8s, 'again.yaml'));
  });

  it('a file of the folder the bot cannot read, or cannot parse, refuses the whole, naming the file', async () => {
    const folder = join(cwd, 'broken');
    file(
      'broken/orders.yaml',
      policy({ name: 'cap-orders', vhost: orders, pattern: '^o', definition: { 'max-length': 1 } }),
    );
    symlinkSync(join(cwd, 'nowhere.yaml'), join(folder, 'gone.yaml'));
    const gone = await rmq(['plan', folder, '--json']);
    expect(gone.code).toBe(2);
    expect(json(gone).error?.message).toContain(
      `The file "${folder}/gone.yaml" of the folder cannot be read (ENOENT)`,
    );
    rmSync(join(folder, 'gone.yaml'));
    file('broken/bad.yaml', 'kind: Policy\nspec: [1, 2\n');
    const bad = await rmq(['lint', folder]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(`The file "${folder}/bad.yaml" is neither JSON nor valid YAML`);
  });
});

describe('the sentences', () => {
  it("an empty spec says what a Policy needs; a vhost from --vhost says so and what to give instead; a JSON error's line and column", async () => {
    const empty = await rmq([
      'plan',
      file('empty-spec.yaml', 'apiVersion: rabbitmq.com/v1beta1\nkind: Policy\nspec:\n'),
    ]);
    expect(empty.code).toBe(2);
    expect(empty.err).toContain(
      'The Policy at document 1 has an empty spec: a Policy needs its name, pattern and definition under spec',
    );
    expect(empty.err).not.toContain('should be a');
    const noDefinition = await rmq([
      'plan',
      file('no-definition.yaml', policy({ name: 'p', pattern: '^x' })),
    ]);
    expect(noDefinition.err).toContain(
      'The Policy at document 1 cannot be read: it has no definition (under spec).',
    );

    const nowhere = uniqueName('nowhere');
    const missing = await rmq([
      'plan',
      file(
        'no-vhost.json',
        JSON.stringify({ policies: [{ name: 'p', pattern: '^x', definition: { 'max-length': 1 } }] }),
      ),
      '--vhost',
      nowhere,
    ]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`--vhost "${nowhere}": vhost "${nowhere}" does not exist`);
    expect(missing.err).toMatch(/Give --vhost a vhost the broker has, or leave it out .*--vhost-map FROM=TO/);

    const broken = file('broken.json', '{\n  "policies": [\n    {"name": "p", "pattern": "^x",}\n  ]\n}\n');
    const syntax = await rmq(['plan', broken, '--json']);
    expect(syntax.code).toBe(2);
    expect(json(syntax).error?.message).toContain(
      'The file is not valid JSON: Expected double-quoted property name, at line 3, column 35.',
    );
    expect(json(syntax).error?.message).not.toMatch(/position/);
  });

  it("lint FILE's refusals print no usage line, as plan's do not", async () => {
    const broken = file('broken-lint.json', '{"policies": [}');
    for (const command of ['plan', 'lint']) {
      const run = await rmq([command, broken]);
      expect(run.code, command).toBe(2);
      expect(run.err, command).toContain('The file is not valid JSON');
      expect(run.err, command).not.toMatch(/^(lint|plan) (FILE|\[FILE\])/m);
    }
    const vhost = uniqueName('nowhere');
    const lint = await rmq(['lint', file('lint-missing.json', twoVhosts()), '--vhost', vhost]);
    expect(lint.code).toBe(2);
    expect(lint.err).toContain(`--vhost "${vhost}": vhost "${vhost}" does not exist`);
    expect(lint.err).not.toMatch(/^lint \[FILE\]/m);
  });

  // 4.3 hides a vhost from a user without permissions on it (3.10 and 4.0 answer 401, exit 3).
  const hiding = up.find((b) => b.label === 'rabbitmq-4.3');
  it.skipIf(!hiding)(
    'a vhost hidden from the user: which and lint refuse it without printing their usage',
    async () => {
      const broker = hiding as TestBroker;
      await inVhostOn(broker, 'defs-hidden', async (vhost) => {
        await withUser({ tags: ['management'], url: broker.url }, async (u) => {
          const as = { RMQ_USER: u.user, RMQ_PASSWORD: u.password };
          for (const args of [
            ['which', 'orders.audit', '--vhost', vhost],
            ['lint', '--vhost', vhost],
            ['policies', '--vhost', vhost],
          ]) {
            const run = await rmq(args, as, broker.url);
            expect(run.code, run.err).toBe(2);
            expect(run.err).toContain(`Broker user "${u.user}" sees no vhost "${vhost}"`);
            expect(run.err, args[0]).not.toMatch(/^(which NAME|lint \[FILE\]|policies \[--vhost)/m);
          }
        });
      });
    },
  );
});

describe('a file the bot must not choke on', () => {
  /** Nine aliases of nine: 9^9 values once expanded. */
  const aliasBomb = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'data:',
    '  a0: &a0 [x, x, x, x, x, x, x, x, x]',
    ...Array.from({ length: 9 }, (_, i) => `  a${i + 1}: &a${i + 1} [${Array(9).fill(`*a${i}`).join(', ')}]`),
    '---',
    policy({ name: 'p', vhost: orders, pattern: '^x', definition: { 'max-length': 1 } }),
  ].join('\n');
  const deep = JSON.stringify({
    policies: [
      {
        vhost: orders,
        name: 'p',
        pattern: '^x',
        definition: { 'max-length': 1, x: JSON.parse(`${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`) },
      },
    ],
  });

  it.each([
    ['an alias bomb', 'bomb.yaml', aliasBomb, /expands its aliases \(\*name\) into more than the bot reads/],
    [
      'definitions nested 3,000 deep',
      'deep.json',
      deep,
      /nested more than 64 levels deep \(under policies\[0\]\)/,
    ],
    [
      'YAML nested 3,000 deep',
      'deep.yaml',
      `kind: Policy\nspec:\n  name: p\n  pattern: x\n  definition: {x: ${'['.repeat(3000)}${']'.repeat(3000)}}\n`,
      /nested more than 64 levels deep/,
    ],
  ])(
    '%s: plan --json exits 2 with {error} on stdout; lint FILE exits 2',
    async (_what, name, text, words) => {
      const path = file(name, text);
      const run = await rmq(['plan', path, '--json']);
      expect(run.code, run.err).toBe(2);
      expect(json(run).error?.message).toMatch(words);
      expect(run.err).not.toMatch(/Excessive alias count|Maximum call stack/);
      const lint = await rmq(['lint', path]);
      expect(lint.code, lint.err).toBe(2);
      expect(lint.err).toMatch(words);
    },
  );
});

describe('__proto__, constructor and prototype in a definition', () => {
  it.each([
    [
      'an export',
      'proto.json',
      `{"policies": [{"vhost": "${orders}", "name": "p", "pattern": "^x", "definition": {"__proto__": {"max-length": 1}, "message-ttl": 60000}}]}`,
      '__proto__',
    ],
    [
      'a manifest',
      'proto.yaml',
      `kind: Policy\nspec:\n  name: p\n  vhost: ${orders}\n  pattern: ^x\n  definition:\n    __proto__: {max-length: 1}\n    message-ttl: 60000\n`,
      '__proto__',
    ],
    [
      'an export, constructor',
      'constructor.json',
      `{"policies": [{"vhost": "${orders}", "name": "p", "pattern": "^x", "definition": {"constructor": 1, "message-ttl": 60000}}]}`,
      'constructor',
    ],
  ])('in %s: refused as an unknown key, never filed without it', async (_what, name, text, key) => {
    const run = await rmq(['plan', file(name, text), '--json']);
    expect(run.code, run.out).toBe(2);
    expect(json(run).error?.message).toContain(`${key} is not a policy key RabbitMQ`);
  });

  it('preview edit --set __proto__=… and --set constructor=…: refused as unknown keys', async () => {
    await client.putPolicy('user', {
      vhost: billing,
      name: 'ttl',
      pattern: '^t',
      applyTo: 'queues',
      priority: 0,
      definition: { 'message-ttl': 1000 },
    });
    for (const [set, key] of [
      ['__proto__={"max-length":1}', '__proto__'],
      ['constructor=1', 'constructor'],
      ['prototype=1', 'prototype'],
    ]) {
      const run = await rmq(['preview', 'edit', 'ttl', '--vhost', billing, '--set', set as string, '--json']);
      expect(run.code, run.out).toBe(2);
      expect(json(run).error?.message).toContain(`${key} is not a policy key RabbitMQ`);
    }
  });
});

// On a broker with the federation plugin (a 4.x one here; every broker of `up` has it): an
// upstream the same folder declares is not missing.
const federating = up.find((b) => b.label !== 'machine');
describe.skipIf(!federating)('an upstream the same file declares', () => {
  it("is not a missing target in the end state's lint (plan and lint FILE), in an export and in a folder", async () => {
    const broker = federating as TestBroker;
    await inVhostOn(broker, 'defs-fed', async (vhost) => {
      const admin = clientFor(broker);
      try {
        await admin.putQueue(vhost, 'fed.orders', { kind: 'classic' });
      } finally {
        await admin.close();
      }
      const fedPolicy = {
        name: 'federate',
        vhost,
        pattern: '^fed\\.',
        applyTo: 'queues',
        definition: { 'federation-upstream': 'origin' },
      };
      const folder = join(cwd, `fed-${vhost}`);
      const missingTargets = async (path: string) => {
        const run = await rmq(['plan', path, '--json'], {}, broker.url);
        expect(run.code, run.out + run.err).toBe(0);
        const doc = json(run) as {
          findings: { kind: string }[];
          objects: { impact: { effect: string }[] }[];
        };
        const lint = await rmq(['lint', path, '--vhost', vhost, '--json'], {}, broker.url);
        expect(lint.code, lint.out + lint.err).toBe(0);
        return {
          plan: doc.findings.filter((f) => f.kind === 'missing-target').length,
          impact: doc.objects.flatMap((o) => o.impact).filter((i) => i.effect === 'missing-target').length,
          lint: (json(lint) as { findings: { kind: string }[] }).findings.filter(
            (f) => f.kind === 'missing-target',
          ).length,
        };
      };
      // Without the upstream: the target is missing, and said so.
      const policies = [{ ...fedPolicy, 'apply-to': 'queues', applyTo: undefined }];
      const alone = file(`fed-${vhost}-alone.json`, JSON.stringify({ policies }));
      expect(await missingTargets(alone)).toEqual({ plan: 1, impact: 1, lint: 1 });
      // An export declaring it beside the policy (a federation-upstream parameter).
      const exported = file(
        `fed-${vhost}.json`,
        JSON.stringify({
          policies,
          parameters: [
            { vhost, component: 'federation-upstream', name: 'origin', value: { uri: 'amqp://origin' } },
          ],
        }),
      );
      expect(await missingTargets(exported)).toEqual({ plan: 0, impact: 0, lint: 0 });
      // A folder of manifests: the operator's Federation in another file of it.
      file(`fed-${vhost}/policy.yaml`, policy(fedPolicy));
      file(
        `fed-${vhost}/upstream.yaml`,
        `apiVersion: rabbitmq.com/v1beta1\nkind: Federation\nmetadata: {name: origin}\nspec: {name: origin, vhost: ${JSON.stringify(vhost)}, uriSecret: {name: origin-uri}}\n`,
      );
      expect(await missingTargets(folder)).toEqual({ plan: 0, impact: 0, lint: 0 });
    });
  });
});
