/**
 * `rmq lint FILE` on the real broker: a definitions file's policies linted as if applied to the
 * objects there now (the broker's own kept beside them, as `plan` leaves them), nothing written;
 * a file the reader refuses is refused with exit 2.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LintResult } from '../../src/commands/lint/lint.ts';
import { adminClient, brokerUrl, uniqueName } from '../support/broker.ts';
import { runRmq } from '../support/cli.ts';

const vhost = uniqueName('lint-file');
const client = adminClient();
const dir = mkdtempSync(join(tmpdir(), 'rmq-lint-file-'));
const env = { RMQ_URL: brokerUrl(), RMQ_USER: 'guest', RMQ_PASSWORD: 'guest' };

const policy = (name: string, pattern: string, priority: number, definition: Record<string, unknown>) => ({
  vhost,
  name,
  pattern,
  'apply-to': 'queues',
  priority,
  definition,
});

beforeAll(async () => {
  await client.putVhost(vhost);
  await client.putQueue(vhost, 'billing.invoices', { kind: 'classic' });
  await client.putQueue(vhost, 'retry.orders.dlq', { kind: 'classic' });
  // On the broker: one policy the file leaves alone, at the priority the file's new one takes.
  await client.putPolicy('user', {
    vhost,
    name: 'billing-a',
    pattern: '^billing\\.',
    applyTo: 'queues',
    priority: 5,
    definition: { 'max-length': 500 },
  });
});

afterAll(async () => {
  await client.deleteVhost(vhost);
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('rmq lint FILE', () => {
  it("finds what the file's policies would do there, beside the broker's, and writes nothing", async () => {
    const file = join(dir, 'definitions.json');
    writeFileSync(
      file,
      JSON.stringify({
        policies: [
          policy('billing-b', '^billing\\.', 5, { 'max-length': 1000 }),
          policy('orders-cap', 'orders', 0, { 'max-length': 100000 }),
        ],
      }),
    );
    const run = await runRmq(env, ['lint', file, '--vhost', vhost, '--json']);
    expect(run.code, run.err).toBe(0);
    const r = JSON.parse(run.out) as LintResult;
    expect(r).toMatchObject({ file, vhost, answer: 'linted', policies: 3 });
    expect(r.findings.map((f) => [f.kind, f.policy, f.objects])).toEqual([
      ['tie', 'billing-a', ['billing.invoices']],
      ['unanchored', 'orders-cap', ['retry.orders.dlq']],
    ]);
    expect((await client.listPolicies(vhost)).map((p) => p.name)).toEqual(['billing-a']);
    const text = await runRmq(env, ['lint', file, '--vhost', vhost, '--fail-on', 'error']);
    expect(text.code).toBe(4);
    expect(text.out).toContain(`as if applied to vhost "${vhost}"`);

    // Applied for real: lint of the vhost then finds what lint FILE found.
    for (const p of [
      policy('billing-b', '^billing\\.', 5, { 'max-length': 1000 }),
      policy('orders-cap', 'orders', 0, { 'max-length': 100000 }),
    ]) {
      const { 'apply-to': applyTo, ...rest } = p;
      await client.putPolicy('user', { ...rest, applyTo });
    }
    try {
      const applied = await runRmq(env, ['lint', '--vhost', vhost, '--json']);
      expect(applied.code, applied.err).toBe(0);
      const after = JSON.parse(applied.out) as LintResult;
      expect(after.findings.map((f) => [f.kind, f.policy, f.objects, f.why])).toEqual(
        r.findings.map((f) => [f.kind, f.policy, f.objects, f.why]),
      );
    } finally {
      await client.deletePolicy('user', vhost, 'billing-b');
      await client.deletePolicy('user', vhost, 'orders-cap');
    }
  });

  it('a file the reader refuses, or none there: exit 2 with the sentence, nothing asked', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ policies: [{ vhost, pattern: '^a' }] }));
    const refused = await runRmq(env, ['lint', bad, '--vhost', vhost]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/^rmq: /);
    const missing = await runRmq(env, ['lint', join(dir, 'nope.json'), '--vhost', vhost]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/No file/);
  });
});
