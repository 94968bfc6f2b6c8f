/**
 * The least a broker identity needs, proven on the real broker (the README's least privilege
 * quotes these): reading (`which`, `preview`) takes the `management` tag and a permission entry
 * in the vhost that grants nothing (`^$` for configure, write and read); writing user policies
 * takes `policymaker` with the same empty entry; operator policies take `administrator`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpLab } from '../../scripts/lab.ts';
import type { WhichResult } from '../../src/commands/which/which.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import { adminClient, brokerUrl, uniqueName, waitFor, withUser } from '../support/broker.ts';
import { runRmq } from '../support/cli.ts';

const vhost = uniqueName('least');
const admin = adminClient();
const nothing = { configure: '^$', write: '^$', read: '^$' };
const policy = {
  vhost,
  name: 'least-probe',
  pattern: '^least-probe$',
  applyTo: 'queues' as const,
  priority: 0,
  definition: { 'max-length': 5 },
};

async function rmq(user: string, password: string, ...argv: string[]) {
  const env = { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password };
  return runRmq(env, argv);
}

async function refusal(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

beforeAll(async () => {
  await setUpLab(admin, vhost);
});
afterAll(async () => {
  await admin.deleteVhost(vhost);
  await admin.close();
});

describe('read-only: the management tag and an empty permission entry', () => {
  it('answers which and preview, and cannot write a policy', async () => {
    await withUser({ tags: ['management'], vhost, permissions: nothing }, async ({ user, password }) => {
      const result = await waitFor(
        async () => {
          const r = await rmq(user, password, 'which', 'orders.audit', '--vhost', vhost, '--json');
          expect(r.code, r.err).toBe(0);
          const w = JSON.parse(r.out) as WhichResult;
          return w.answer === 'reported' && w.operatorPolicySource === 'broker' ? w : undefined;
        },
        { deadlineMs: 30_000, intervalMs: 500, what: 'the broker to report orders.audit' },
      );
      expect(result.inForce?.name).toBe('audit-retention');

      const preview = await rmq(
        user,
        password,
        'preview',
        'delete',
        'audit-retention',
        '--vhost',
        vhost,
        '--json',
      );
      expect(preview.code, preview.err).toBe(0);

      const client = new ManagementClient({ url: brokerUrl(), user, password });
      try {
        expect(await refusal(client.putPolicy('user', policy))).toBe('forbidden');
      } finally {
        await client.close();
      }
    });
  });

  it('without any permission entry in the vhost, which is refused with the broker reason', async () => {
    await withUser({ tags: ['management'] }, async ({ user, password }) => {
      const r = await rmq(user, password, 'which', 'orders.audit', '--vhost', vhost, '--json');
      expect(JSON.parse(r.out)).toMatchObject({ answer: 'not-asked' });
    });
  });
});

describe('read-write: policymaker for user policies, administrator for operator policies', () => {
  it('policymaker with an empty permission entry writes and deletes a user policy, not an operator policy', async () => {
    await withUser({ tags: ['policymaker'], vhost, permissions: nothing }, async ({ user, password }) => {
      const client = new ManagementClient({ url: brokerUrl(), user, password });
      try {
        expect(await client.putPolicy('user', policy)).toBe('created');
        await client.deletePolicy('user', vhost, policy.name);
        expect(await refusal(client.putPolicy('operator', { ...policy, name: 'least-op' }))).toBe(
          'forbidden',
        );
      } finally {
        await client.close();
      }
    });
  });

  it('administrator writes an operator policy', async () => {
    await withUser({ tags: ['administrator'], vhost, permissions: nothing }, async ({ user, password }) => {
      const client = new ManagementClient({ url: brokerUrl(), user, password });
      try {
        expect(await client.putPolicy('operator', { ...policy, name: 'least-op' })).toBe('created');
        await client.deletePolicy('operator', vhost, 'least-op');
      } finally {
        await client.close();
      }
    });
  });
});
