/**
 * `rmq policies` end to end through the CLI entry point, against the lab on the real broker:
 * the order, the marks, the operator policies apart and only when there are any, the refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import type { PoliciesResult } from '../../src/commands/policies/policies.ts';
import { runCli } from '../../src/terminal/cli.ts';
import { adminClient, brokerUrl, uniqueName, withVhost } from '../support/broker.ts';
import { type CliRun, runRmq } from '../support/cli.ts';

const vhost = uniqueName('lab');
const client = adminClient();
const env = { RMQ_URL: brokerUrl(), RMQ_USER: 'guest', RMQ_PASSWORD: 'guest' };

async function rmq(...argv: string[]): Promise<CliRun> {
  return runRmq(env, argv);
}

beforeAll(async () => {
  await setUpLab(client, vhost);
});

afterAll(async () => {
  await client.deleteVhost(vhost);
  await client.close();
});

describe('rmq policies on the lab', () => {
  it('--json: every policy by priority, ties together and marked, unanchored marked, operator policies apart', async () => {
    const r = await rmq('policies', '--vhost', vhost, '--json');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as PoliciesResult;
    expect(j.vhost).toBe(vhost);
    expect(j.policies.map((p) => [p.name, p.priority, p.tie, p.unanchored])).toEqual([
      ['audit-retention', 10, false, false],
      ['billing-a', 5, true, false],
      ['billing-b', 5, true, false],
      // Priority 1 too, but queues and exchanges never meet: no tie (issue 28, item 12).
      ['audit-fallback', 1, false, false],
      ['orders-ae', 1, false, false],
      ['orders-cap', 0, false, true],
    ]);
    expect(j.policies[0]).toMatchObject({
      pattern: '^orders\\.audit$',
      applyTo: 'queues',
      definition: { 'dead-letter-exchange': 'audit.dlx' },
    });
    expect(j.operatorPolicies.map((p) => p.name)).toEqual(['orders-ceiling']);
  });

  it('text: the same, readable', async () => {
    const r = await rmq('policies', '--vhost', vhost);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/orders-cap — pattern "orders", apply-to queues \(unanchored/);
    expect(r.out).toMatch(/Operator policies/);
    expect(r.out.indexOf('audit-retention')).toBeLessThan(r.out.indexOf('orders-cap'));
  });

  it('a vhost without operator policies has no operator part', async () => {
    await withVhost(
      async (v, c) => {
        await c.putPolicy('user', {
          vhost: v,
          name: 'only',
          pattern: '^a',
          applyTo: 'all',
          priority: 0,
          definition: { 'max-length': 1 },
        });
        const r = await rmq('policies', '--vhost', v);
        expect(r.code).toBe(0);
        expect(r.out).toMatch(/only — pattern "\^a"/);
        expect(r.out).not.toMatch(/Operator policies/);
        const j = JSON.parse((await rmq('policies', '--vhost', v, '--json')).out) as PoliciesResult;
        expect(j.operatorPolicies).toEqual([]);
      },
      { client },
    );
  });

  it('a vhost that does not exist: exit 2, with the close names', async () => {
    const r = await rmq('policies', '--vhost', `${vhost}x`);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/does not exist; did you mean/);
  });

  it('an unreachable broker: exit 3, nothing listed', async () => {
    let out = '';
    const code = await runCli(
      ['policies', '--json'],
      { RMQ_URL: 'http://127.0.0.1:9' },
      {
        out: (s) => (out += s),
        err: () => {},
      },
    );
    expect(code).toBe(3);
    expect(JSON.parse(out)).toMatchObject({ answer: 'not-asked', why: 'unreachable', policies: [] });
  });
});
