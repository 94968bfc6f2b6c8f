/**
 * Issue 14 in the terminal, against the real broker: `RMQ_VHOST` is the default `--vhost`, a
 * missing object gets the close names that exist ("did you mean"), with `--kind` narrowing them,
 * and a policy name that names nothing gets the close policy names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import type { WhichResult } from '../../src/commands/which/which.ts';
import { adminClient, brokerUrl, uniqueName } from '../support/broker.ts';
import { type CliRun, runRmq } from '../support/cli.ts';

const vhost = uniqueName('typed');
const client = adminClient();
const base = { RMQ_URL: brokerUrl(), RMQ_USER: 'guest', RMQ_PASSWORD: 'guest' };

async function rmq(env: NodeJS.ProcessEnv, ...argv: string[]): Promise<CliRun> {
  return runRmq(env, argv);
}

beforeAll(async () => {
  await setUpLab(client, vhost);
});
afterAll(async () => {
  await client.deleteVhost(vhost);
  await client.close();
});

describe('the terminal', () => {
  it('RMQ_VHOST is the default --vhost; a flag says otherwise', async () => {
    const r = await rmq({ ...base, RMQ_VHOST: vhost }, 'which', 'orders.audit', '--json');
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as WhichResult).object).toMatchObject({ vhost, exists: true });
    const flagged = await rmq(
      { ...base, RMQ_VHOST: vhost },
      'which',
      'orders.audit',
      '--vhost',
      '/',
      '--json',
    );
    expect((JSON.parse(flagged.out) as WhichResult).object).toMatchObject({ vhost: '/', exists: false });
  });

  it('a missing object: the close queues and exchanges, above the answer, and in --json', async () => {
    const r = await rmq(base, 'which', 'orders.adit', '--vhost', vhost);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toBe('No queue or exchange "orders.adit"; did you mean "orders.audit"?');
    const j = JSON.parse(
      (await rmq(base, 'which', 'orders.topc', '--vhost', vhost, '--json')).out,
    ) as WhichResult;
    expect(j.didYouMean).toEqual([{ name: 'orders.topic', kind: 'exchange' }]);
    // --kind narrows the listing: no exchange is offered for a queue.
    const q = JSON.parse(
      (await rmq(base, 'which', 'orders.topc', '--kind', 'classic', '--vhost', vhost, '--json')).out,
    ) as WhichResult;
    expect(q.didYouMean).toBeUndefined();
    // An object that exists gets none.
    const there = JSON.parse(
      (await rmq(base, 'which', 'orders.audit', '--vhost', vhost, '--json')).out,
    ) as WhichResult;
    expect(there.didYouMean).toBeUndefined();
  });

  it('a policy name that names nothing: the close policy names, exit 2', async () => {
    const r = await rmq(base, 'preview', 'delete', 'audit-retentoin', '--vhost', vhost);
    expect(r.code).toBe(2);
    expect(r.out).toContain('No policy "audit-retentoin"; did you mean "audit-retention"?');
    const j = JSON.parse(
      (await rmq(base, 'preview', 'delete', 'audit-retentoin', '--vhost', vhost, '--json')).out,
    );
    expect(j.didYouMean).toEqual(['audit-retention']);
  });
});
