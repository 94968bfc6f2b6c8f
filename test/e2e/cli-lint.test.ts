/**
 * `npx rmq lint` as users run it: the built `bin/rmq.js` against the lab (scripts/lab.ts) in a
 * vhost of its own on the real broker. The lab's four surprises (issue 29) are found, the
 * environment is named, and the exit codes of INTERFACE.md §2b hold: 0 answered, 4 with
 * `--fail-on` when a finding that severe is there, 2 for a bad flag.
 */
import { describe, expect, it } from 'vitest';
import type { LintResult } from '../../src/commands/lint/lint.ts';

import { uniqueName } from '../support/broker.ts';
import { builtCliOnLab } from '../support/labCli.ts';

const { vhost, client, rmq } = builtCliOnLab('lint-lab');

describe('rmq lint on the lab', () => {
  it('--json: the four surprises, with the objects they concern, and the environment', async () => {
    const run = await rmq('lint', '--vhost', vhost, '--json');
    expect(run.code, run.err).toBe(0);
    const r = JSON.parse(run.out) as LintResult;
    expect(r).toMatchObject({ env: 'default', vhost, answer: 'linted' });
    const found = r.findings.map((f) => [f.kind, f.policy, f.objects]);
    expect(found).toEqual(
      expect.arrayContaining([
        ['unanchored', 'orders-cap', ['retry.orders.dlq']],
        ['tie', 'billing-a', ['billing.invoices']],
        ['missing-target', 'audit-retention', ['orders.audit']],
        ['cannot-govern', 'audit-fallback', ['orders.events']],
      ]),
    );
    expect(r.findings.find((f) => f.kind === 'tie')).toMatchObject({ policies: ['billing-a', 'billing-b'] });
    expect(
      r.findings.find((f) => f.kind === 'missing-target' && f.policy === 'audit-retention'),
    ).toMatchObject({
      key: 'dead-letter-exchange',
      target: 'audit.dlx',
    });
    // The most severe first.
    const order = ['error', 'warning', 'info'];
    const ranks = r.findings.map((f) => order.indexOf(f.severity));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it('text: the vhost and environment first, then each finding with its sentence and objects', async () => {
    const run = await rmq('lint', '--vhost', vhost);
    expect(run.code, run.err).toBe(0);
    expect(run.err).toBe('');
    expect(run.out.split('\n')[0]).toContain(`vhost "${vhost}" of environment "default"`);
    expect(run.out).toMatch(/ERROR {2}tie {2}Policies "billing-a" and "billing-b" share priority 5/);
    expect(run.out).toMatch(/WARNING {2}unanchored {2}Policy "orders-cap"'s pattern "orders" has no \^/);
    expect(run.out).toContain('"retry.orders.dlq"');
  });

  it('--fail-on error exits 4; --fail-on with a word it does not take exits 2', async () => {
    expect((await rmq('lint', '--vhost', vhost, '--fail-on', 'error')).code).toBe(4);
    expect((await rmq('lint', '--vhost', vhost, '--fail-on', 'warning', '--json')).code).toBe(4);
    const bad = await rmq('lint', '--vhost', vhost, '--fail-on', 'info');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^rmq: --fail-on takes error or warning/);
  });

  it('a clean vhost: no findings, exit 0 even with --fail-on warning', async () => {
    const clean = uniqueName('lint-clean');
    await client.putVhost(clean);
    try {
      await client.putPolicy('user', {
        vhost: clean,
        name: 'only',
        pattern: '^a\\.',
        applyTo: 'queues',
        priority: 0,
        definition: { 'max-length': 5 },
      });
      await client.putQueue(clean, 'a.q', { kind: 'classic' });
      const run = await rmq('lint', '--vhost', clean, '--fail-on', 'warning', '--json');
      expect(run.code, run.err).toBe(0);
      expect(JSON.parse(run.out)).toMatchObject({ findings: [], policies: 1, env: 'default' });
    } finally {
      await client.deleteVhost(clean);
    }
  });
});
