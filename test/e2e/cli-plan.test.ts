/**
 * `plan` as a CI job runs it: the built package's `bin/rmq.js` on a definitions file (a path and
 * standard input), in text and `--json`, with every exit code it has: 0 planned, 4 with
 * `--detailed-exitcode` when something is to change, 2 a file refused, 3 a broker not asked.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, brokerCredentials, brokerUrl, uniqueName } from '../support/broker.ts';
import { BROKERS } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { type CliRun, runBuiltRmq } from '../support/cli.ts';
import { management, messages } from '../support/messages.ts';

const vhost = uniqueName('cli-plan');
const client = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-cli-plan-'));
let pkg: Built;

const env = () => {
  const { user, password } = brokerCredentials();
  return { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password };
};
const rmq = (args: readonly string[], extra: Record<string, string> = {}) =>
  runBuiltRmq(pkg.bin, args, { ...env(), ...extra }, cwd);

/** The same, with `input` on standard input. */
function rmqWithStdin(args: readonly string[], input: string): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [pkg.bin, ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', ...env() }, timeout: 60_000 },
      (err, out, errOut) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out, err: errOut }),
    );
    child.stdin?.end(input);
  });
}

const rename = (v: string) =>
  [
    'apiVersion: rabbitmq.com/v1beta1',
    'kind: Policy',
    'spec:',
    `  {name: keep-audit, vhost: ${JSON.stringify(v)}, pattern: '^orders\\.audit$', applyTo: queues, priority: 10, definition: {max-length: 1000}}`,
    '---',
    'apiVersion: rabbitmq.com/v1beta1',
    'kind: Policy',
    'spec:',
    `  {name: fallback, vhost: ${JSON.stringify(v)}, pattern: '^orders\\.', applyTo: queues, priority: 1, definition: {max-length: 5}}`,
    '---',
    'kind: Queue',
    'spec: {name: orders.audit}',
    '',
  ].join('\n');

beforeAll(async () => {
  pkg = await built();
  await client.putVhost(vhost);
  const broker = BROKERS[0];
  if (!broker) throw new Error('no broker');
  const api = management(broker, vhost);
  await api.policy('keep', '^orders\\.audit$', { 'max-length': 1000 }, { priority: 10 });
  await api.policy('fallback', '^orders\\.', { 'max-length': 5 }, { priority: 1 });
  await api.queue('orders.audit', 'classic');
  const amqp = await messages(broker, vhost);
  await amqp.publish('orders.audit', 30);
  await amqp.close();
  await api.settled('orders.audit', 30);
}, 120_000);

afterAll(async () => {
  await client.deleteVhost(vhost);
  await client.close();
  rmSync(cwd, { recursive: true, force: true });
});

describe('rmq plan, built', () => {
  it('text: the loss first, the changes in order, the objects, what was left alone; exit 0, or 4 with --detailed-exitcode', async () => {
    const file = join(cwd, 'rename.yaml');
    writeFileSync(file, rename(vhost));
    const run = await rmq(['plan', file, '--prune']);
    expect(run.code, run.err).toBe(0);
    expect(run.err).toBe('');
    const out = run.out;
    expect(out).toContain(`Plan for vhost "${vhost}"`);
    expect(out.trimEnd().split('\n').at(-1)).toBe(`Answered for vhost "${vhost}" in environment default.`);
    const loss = out.indexOf('What the set loses:');
    const changes = out.indexOf('The changes, in the order they are written:');
    const objects = out.indexOf('What each object gets');
    const alone = out.indexOf('Left alone (not managed by the bot):');
    expect(loss).toBeGreaterThan(0);
    expect(changes).toBeGreaterThan(loss);
    expect(objects).toBeGreaterThan(changes);
    expect(alone).toBeGreaterThan(objects);
    expect(out.indexOf('1. create policy "keep-audit"')).toBeLessThan(out.indexOf('2. delete policy "keep"'));
    expect(out).toContain('pattern "^orders\\.audit$"');
    expect(out).toContain('1 Queue');
    const detailed = await rmq(['plan', file, '--prune', '--detailed-exitcode']);
    expect(detailed.code).toBe(4);
  });

  it('--json from standard input: INTERFACE.md §2a, with env; nothing to change exits 0 with --detailed-exitcode', async () => {
    const run = await rmqWithStdin(['plan', '-', '--prune', '--json'], rename(vhost));
    expect(run.code, run.err).toBe(0);
    const doc = JSON.parse(run.out);
    expect(doc.env).toBe('default');
    expect(doc.changes.map((c: { action: string; policy: string }) => `${c.action} ${c.policy}`)).toEqual([
      'create keep-audit',
      'delete keep',
    ]);
    expect(doc.unchanged).toBe(1);
    expect(doc.ignored).toEqual({ Queue: 1 });
    expect(doc.transitional).toEqual([]);
    expect(doc.impact).toEqual({
      messagesDeadLettered: 0,
      messagesLost: 0,
      queuesDeleted: 0,
      queuesRefusingPublishes: 0,
    });
    expect(doc.objects).toEqual([
      expect.objectContaining({
        vhost,
        name: 'orders.audit',
        kind: 'classic',
        before: { policy: 'keep', operatorPolicy: null },
        after: { policy: 'keep-audit', operatorPolicy: null },
        impact: [],
      }),
    ]);
    const same = JSON.stringify({
      policies: [
        {
          vhost,
          name: 'keep',
          pattern: '^orders\\.audit$',
          'apply-to': 'queues',
          priority: 10,
          definition: { 'max-length': 1000 },
        },
        {
          vhost,
          name: 'fallback',
          pattern: '^orders\\.',
          'apply-to': 'queues',
          priority: 1,
          definition: { 'max-length': 5 },
        },
      ],
    });
    const nothing = await rmqWithStdin(['plan', '-', '--detailed-exitcode', '--json'], same);
    expect(nothing.code, nothing.err).toBe(0);
    expect(JSON.parse(nothing.out)).toMatchObject({ changes: [], unchanged: 2 });
  });

  it('a file refused whole exits 2 with what to fix; a missing vhost, a bad definition too; a broker not asked exits 3', async () => {
    const twice = await rmqWithStdin(
      ['plan', '-'],
      JSON.stringify({
        policies: [
          { vhost, name: 'p', pattern: '^x', definition: {} },
          { vhost, name: 'p', pattern: '^y', definition: {} },
        ],
      }),
    );
    expect(twice.code).toBe(2);
    expect(twice.err).toMatch(/^rmq: .*in the file twice/);
    const bad = await rmqWithStdin(
      ['plan', '-'],
      JSON.stringify({
        policies: [{ vhost, name: 'p', pattern: '^x', definition: { 'max-length': 'ten' } }],
      }),
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/max-length/);
    const missing = await rmqWithStdin(
      ['plan', '-'],
      JSON.stringify({ policies: [{ vhost: `${vhost}-nope`, name: 'p', pattern: '^x', definition: {} }] }),
    );
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/does not exist/);
    expect((await rmq(['plan'])).code).toBe(2);
    expect((await rmq(['plan', join(cwd, 'no-such-file.json')])).code).toBe(2);
    const notAsked = await rmq(['plan', join(cwd, 'rename.yaml')], { RMQ_URL: 'http://127.0.0.1:1' });
    expect(notAsked.code).toBe(3);
  });
});
