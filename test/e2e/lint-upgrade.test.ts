/**
 * `rmq lint --target-version` proven by moving definitions for real: a vhost made on 3.10.8 (the
 * machine's broker) with mirroring policies, lazy queues, a queue-master-locator, vetoes that
 * change with the version, quorum queues with and without a dead-letter target, a transient
 * queue and a version-1 classic queue is linted against 4.0 and 4.3 through the built
 * `bin/rmq.js`; its export is then imported into 4.0.5 and 4.3.6 and what those brokers say
 * (the import refused or not and why, each queue's policy, effective definition, arguments and
 * delivery limit, the deprecated features in use) is held against what lint predicted: every
 * difference it predicted happens, and none it did not. The 4.0.5 copy is then linted against 4.3
 * there and moved on into 4.3.6, held the same way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LintResult } from '../../src/commands/lint/lint.ts';
import { admin, brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { BROKERS, reachable } from '../support/brokers.ts';
import { type Built, built } from '../support/built.ts';
import { type CliRun, runBuiltRmq } from '../support/cli.ts';

const vhost = uniqueName('lint-upgrade');
const cwd = mkdtempSync(join(tmpdir(), 'rmq-lint-upgrade-'));
const source = brokerUrl();
let pkg: Built;
let exported: Definitions;

interface Definitions {
  policies: { name: string; definition: Record<string, unknown> }[];
  queues: { name: string; arguments: Record<string, unknown> }[];
  [k: string]: unknown;
}

const path = (...segments: string[]) => `/api/${segments.map(encodeURIComponent).join('/')}`;

async function http(url: string, method: 'GET' | 'POST', p: string, body?: unknown) {
  const { user, password } = brokerCredentials();
  const res = await request(url.replace(/\/+$/, '') + p, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: () => JSON.parse(text) as unknown };
}

function rmq(url: string, ...args: string[]): Promise<CliRun> {
  const { user, password } = brokerCredentials();
  return runBuiltRmq(pkg.bin, args, { RMQ_URL: url, RMQ_USER: user, RMQ_PASSWORD: password }, cwd);
}

const POLICIES: [string, string, number, Record<string, unknown>][] = [
  ['p-lazy', '^lazy\\.', 1, { 'queue-mode': 'lazy' }],
  ['p-ha', '^mirrored\\.', 1, { 'ha-mode': 'all', 'ha-sync-mode': 'automatic', 'message-ttl': 60000 }],
  ['p-haonly', '^haonly\\.', 1, { 'ha-mode': 'exactly', 'ha-params': 2 }],
  ['p-qml', '^qml\\.', 1, { 'queue-master-locator': 'min-masters' }],
  ['p-qll', '^qll\\.', 2, { 'queue-leader-locator': 'balanced', 'max-length': 7 }],
  ['p-qll-low', '^qll\\.', 1, { 'max-length': 99 }],
  ['p-mem', '^mem\\.', 2, { 'max-in-memory-length': 10, 'max-length': 5 }],
  ['p-mem-low', '^mem\\.', 1, { 'max-length': 50 }],
  ['p-dlx', '^quorum\\.dlx', 1, { 'dead-letter-exchange': 'dlx' }],
];

const QUEUES: [string, Record<string, unknown>][] = [
  ['mirrored.a', { durable: true }],
  ['haonly.a', { durable: true }],
  ['lazy.a', { durable: true, arguments: { 'x-queue-mode': 'lazy' } }],
  ['lazy.b', { durable: true }],
  ['qml.a', { durable: true }],
  ['qll.a', { durable: true }],
  ['mem.a', { durable: true }],
  ['quorum.nodlx', { durable: true, arguments: { 'x-queue-type': 'quorum' } }],
  ['quorum.dlx', { durable: true, arguments: { 'x-queue-type': 'quorum' } }],
  ['quorum.limit', { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 5 } }],
  ['transient.a', { durable: false, auto_delete: false }],
  ['cqv1.a', { durable: true, arguments: { 'x-queue-version': 1 } }],
];

interface QueueSeen {
  name: string;
  policy: string | null;
  effective: Record<string, unknown>;
  arguments: Record<string, unknown>;
  deliveryLimit: number | null;
}

/** Every queue of the vhost once the broker reports each one's policy (statistics lag a new queue). */
async function queuesOf(url: string, expected: number): Promise<Map<string, QueueSeen>> {
  return waitFor(
    async () => {
      const res = await http(url, 'GET', `${path('queues', vhost)}`);
      const list = res.json() as Record<string, unknown>[];
      if (list.length !== expected || list.some((q) => !('effective_policy_definition' in q)))
        return undefined;
      // 4.x reports a quorum queue's delivery limit with its statistics: waited for too.
      if (url !== source && list.some((q) => q.type === 'quorum' && !('delivery_limit' in q)))
        return undefined;
      return new Map(
        list.map((q) => {
          const args = { ...(q.arguments as Record<string, unknown>) };
          delete args['x-queue-type'];
          return [
            q.name as string,
            {
              name: q.name as string,
              policy: (q.policy as string | null | undefined) || null,
              effective: (q.effective_policy_definition as Record<string, unknown> | null) ?? {},
              arguments: args,
              deliveryLimit: typeof q.delivery_limit === 'number' ? q.delivery_limit : null,
            },
          ];
        }),
      );
    },
    { deadlineMs: 60_000, intervalMs: 500, what: `the queues of ${vhost} on ${url}` },
  );
}

beforeAll(async () => {
  pkg = await built();
  await admin('PUT', path('vhosts', vhost));
  await admin('PUT', path('exchanges', vhost, 'dlx'), { type: 'fanout', durable: true });
  for (const [name, pattern, priority, definition] of POLICIES)
    await admin('PUT', path('policies', vhost, name), {
      pattern,
      'apply-to': 'queues',
      priority,
      definition,
    });
  for (const [name, body] of QUEUES) await admin('PUT', path('queues', vhost, name), body);
  const res = await http(source, 'GET', path('definitions', vhost));
  expect(res.status).toBe(200);
  exported = res.json() as Definitions;
}, 120_000);

afterAll(async () => {
  await admin('DELETE', path('vhosts', vhost));
  rmSync(cwd, { recursive: true, force: true });
});

const TARGETS = [
  { target: '4.0', broker: BROKERS[1] },
  { target: '4.3', broker: BROKERS[2] },
] as const;

type Upgrade = Extract<LintResult['findings'][number], { kind: 'upgrade' }>;

/** `rmq lint --target-version` of the vhost on `url`, through the built bin: its upgrade findings. */
async function predicted(url: string, target: string): Promise<{ lint: LintResult; upgrade: Upgrade[] }> {
  const run = await rmq(url, 'lint', '--vhost', vhost, '--target-version', target, '--json');
  expect(run.code, run.err).toBe(0);
  const lint = JSON.parse(run.out) as LintResult;
  expect(lint).toMatchObject({ targetVersion: target, answer: 'linted' });
  return { lint, upgrade: lint.findings.flatMap((f) => (f.kind === 'upgrade' ? [f] : [])) };
}

/**
 * The vhost's export from `from` (holding `count` queues) imported into `to`, and every difference
 * held against `upgrade`: refused exactly when a refused-* finding says so, naming what it names;
 * with that taken out, imported whole; then each queue's policy, effective definition, arguments
 * and delivery limit as on `from` except where a finding said.
 */
async function move(from: string, count: number, to: string, definitions: Definitions, upgrade: Upgrade[]) {
  const byCause = (cause: string) => upgrade.filter((f) => f.cause === cause);
  const refusedPolicies = new Map(byCause('refused-keys').map((f) => [f.policy, f.keys]));
  const refusedQueues = new Set(byCause('refused-argument').flatMap((f) => f.objects));

  await admin('DELETE', path('vhosts', vhost), undefined, to);
  await admin('PUT', path('vhosts', vhost), undefined, to);
  // The export as it is: refused exactly when lint said so, naming what lint named.
  const whole = await http(to, 'POST', path('definitions', vhost), definitions);
  expect(whole.status).toBe(refusedPolicies.size > 0 || refusedQueues.size > 0 ? 400 : 204);
  if (whole.status === 400) {
    const reason = whole.text;
    const named = [...refusedPolicies.keys()].some((p) => reason.includes(p));
    expect(named || (refusedQueues.size > 0 && reason.includes('unsupported queue version')), reason).toBe(
      true,
    );
    // What lint named taken out (the keys it named, the queues it named): the rest imports whole.
    await admin('DELETE', path('vhosts', vhost), undefined, to);
    await admin('PUT', path('vhosts', vhost), undefined, to);
    const fixed: Definitions = {
      ...definitions,
      policies: definitions.policies
        .map((p) => ({
          ...p,
          definition: Object.fromEntries(
            Object.entries(p.definition).filter(([k]) => !(refusedPolicies.get(p.name) ?? []).includes(k)),
          ),
        }))
        .filter((p) => Object.keys(p.definition).length > 0),
      queues: definitions.queues.filter((q) => !refusedQueues.has(q.name)),
    };
    const again = await http(to, 'POST', path('definitions', vhost), fixed);
    expect(again.status, again.text).toBe(204);
  }

  const before = await queuesOf(from, count);
  const after = await queuesOf(to, count - refusedQueues.size);
  for (const q of refusedQueues) expect(after.has(q)).toBe(false);

  // Which policy governs each queue, and what it sets: moved exactly where lint said.
  const expectedPolicy = new Map<string, string | null>();
  const expectedLoses = new Set<string>();
  for (const f of byCause('governs')) for (const o of f.objects) expectedPolicy.set(o, f.policy);
  for (const f of byCause('stops-governing')) for (const o of f.objects) expectedPolicy.set(o, f.other);
  for (const f of byCause('refused-keys')) for (const o of f.objects) expectedLoses.add(o);
  const limited = new Set(
    [...byCause('delivery-limit'), ...byCause('delivery-limit-dead-letter')].flatMap((f) => f.objects),
  );
  for (const [name, was] of before) {
    const now = after.get(name);
    if (!now) continue;
    // Arguments are kept as written (x-queue-mode, x-queue-version where the target takes it).
    expect(now.arguments, name).toEqual(was.arguments);
    // The delivery limit of 20: exactly the quorum queues lint named, with or without a dead-letter target.
    if (limited.has(name)) {
      expect(was.deliveryLimit, name).toBeNull();
      expect(now.deliveryLimit, name).toBe(20);
      const dead = byCause('delivery-limit-dead-letter').some((f) => f.objects.includes(name));
      expect('dead-letter-exchange' in now.effective, name).toBe(dead);
    } else {
      const own = was.arguments['x-delivery-limit'];
      expect(now.deliveryLimit, name).toBe(was.deliveryLimit ?? (typeof own === 'number' ? own : null));
    }
    if (expectedLoses.has(name)) {
      const keys = refusedPolicies.get(was.policy ?? '') ?? [];
      expect(keys.length, name).toBeGreaterThan(0);
      const kept = Object.fromEntries(Object.entries(was.effective).filter(([k]) => !keys.includes(k)));
      // The policy with what the target takes of it, or (nothing left of it) not that policy.
      if (Object.keys(kept).length > 0) {
        expect(now.policy, name).toBe(was.policy);
        expect(now.effective, name).toEqual(kept);
      } else expect(now.policy, name).not.toBe(was.policy);
      continue;
    }
    expect(now.policy, name).toBe(expectedPolicy.has(name) ? expectedPolicy.get(name) : was.policy);
    if (!expectedPolicy.has(name)) expect(now.effective, name).toEqual(was.effective);
  }
  return after.size;
}

/** The deprecated features `url` reports in use (the whole broker's: other vhosts' objects count too). */
async function deprecatedUsed(url: string) {
  return (await http(url, 'GET', path('deprecated-features', 'used'))).json() as {
    name: string;
    deprecation_phase: string;
  }[];
}

async function up(broker: (typeof BROKERS)[number] | undefined): Promise<boolean> {
  if (!broker) throw new Error('no such broker');
  if (await reachable(broker)) return true;
  if (broker.required) throw new Error(`${broker.label} is required and not running`);
  return false;
}

describe.each(TARGETS)('3.10.8 -> $target', ({ target, broker }) => {
  it('lint --target-version predicts what the import and the broker then do', async (ctx) => {
    if (!(await up(broker)) || !broker) return ctx.skip();
    const { lint, upgrade } = await predicted(source, target);
    expect(lint).toMatchObject({ deprecatedFeatures: null, brokerVersion: '3.10.8' });
    try {
      const moved = await move(source, QUEUES.length, broker.url, exported, upgrade);

      // The deprecated features the target reports in use include the transient queue lint
      // named, in the phase it said.
      const transient = upgrade.filter((f) => f.cause === 'transient-queue');
      expect(transient.flatMap((f) => f.objects)).toEqual(['transient.a']);
      const used = await deprecatedUsed(broker.url);
      const reported = used.find((f) => f.name === 'transient_nonexcl_queues');
      expect(reported, JSON.stringify(used)).toBeDefined();
      expect(transient[0]?.why).toContain(`"${reported?.deprecation_phase}"`);

      // On from 4.0.5 to 4.3.6: linted there, the broker's own report of the feature with its
      // phase, and the next move predicted from a 4.x broker.
      const next = BROKERS[2];
      if (target !== '4.0' || !(await up(next)) || !next) return;
      const there = await predicted(broker.url, '4.3');
      expect(there.lint.deprecatedFeatures).toEqual(
        expect.arrayContaining([{ name: 'transient_nonexcl_queues', phase: 'permitted_by_default' }]),
      );
      expect(there.upgrade.find((f) => f.feature?.name === 'transient_nonexcl_queues')).toMatchObject({
        severity: 'info',
        objects: ['transient.a'],
        feature: { name: 'transient_nonexcl_queues', phase: 'permitted_by_default' },
      });
      expect(there.upgrade.map((f) => [f.cause, f.policy, f.objects])).toEqual(
        expect.arrayContaining([
          ['refused-keys', 'p-qml', ['qml.a']],
          ['refused-argument', '', ['cqv1.a']],
        ]),
      );
      const fromFour = (await http(broker.url, 'GET', path('definitions', vhost))).json() as Definitions;
      try {
        await move(broker.url, moved, next.url, fromFour, there.upgrade);
      } finally {
        await admin('DELETE', path('vhosts', vhost), undefined, next.url);
      }
    } finally {
      await admin('DELETE', path('vhosts', vhost), undefined, broker.url);
    }
  }, 240_000);
});

describe('rmq lint --target-version, words', () => {
  it('text names the target and says 3.10.8 reports no deprecated features; a version it does not take exits 2', async () => {
    const run = await rmq(source, 'lint', '--vhost', vhost, '--target-version', '4.0');
    expect(run.code, run.err).toBe(0);
    expect(run.out.split('\n')[0]).toContain('upgrade to 4.0 read');
    expect(run.out).toMatch(/ERROR {2}upgrade {2}4\.0 refuses "ha-mode", "ha-sync-mode" of Policy "p-ha"/);
    expect(run.out).toContain('Deprecated features in use: not reported by this version of the broker');
    const bad = await rmq(source, 'lint', '--vhost', vhost, '--target-version', '5.0');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--target-version takes 4\.0 or 4\.3, got "5\.0"/);
  });
});
