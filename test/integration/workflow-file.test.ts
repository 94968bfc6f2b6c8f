/**
 * Filing and deciding change requests on the real Redis and broker: who may, what is refused
 * (and that nothing is stored then), one decision however many decide at once, expiry. The
 * rules themselves, table by table: test/unit/rules.test.ts.
 */

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManagementClient } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { isWorkflowError, type WorkflowErrorCode } from '../../src/workflow/errors.ts';
import { MAX_REASON } from '../../src/workflow/rules.ts';
import type { FileInput } from '../../src/workflow/types.ts';
import { adminClient, brokerUrl, withUser, withVhost } from '../support/broker.ts';
import {
  APPROVER,
  APPROVER_2,
  REQUESTER,
  TEST_ENV,
  type WorkflowFixture,
  workflowFixture,
} from '../support/workflow.ts';

let admin: LabClient;
let fx: WorkflowFixture;

beforeAll(() => {
  admin = adminClient();
  fx = workflowFixture(admin);
});
afterAll(async () => {
  await fx.close();
  await admin.close();
});

const create = (vhost: string, over: Partial<FileInput> = {}): FileInput => ({
  vhost,
  layer: 'user',
  action: 'create',
  policy: 'ttl',
  fields: { pattern: '^orders\\.', definition: { 'message-ttl': 60000 } },
  requester: { user: REQUESTER, reason: 'orders pile up' },
  origin: { channel: 'C0INCIDENT', threadTs: '1700000000.000100' },
  ...over,
});

async function refused(p: Promise<unknown>): Promise<WorkflowErrorCode> {
  try {
    await p;
  } catch (err) {
    if (isWorkflowError(err)) return err.code;
    throw err;
  }
  throw new Error('not refused');
}

// Sorted: KEYS answers in hash-table order, which a rehash (the shared Redis grows) changes.
const storedKeys = async () => (await fx.redis.keys(`${fx.keyPrefix}:request*`)).sort();

describe('filing', () => {
  it('files a pending request with the preview, expiring after the environment ttl', async () => {
    await withVhost(async (vhost) => {
      await admin.putQueue(vhost, 'orders.audit', { kind: 'classic' });
      const now = new Date('2026-11-30T12:00:00Z');
      const wf = fx.workflow({ env: { requestTtlMs: 3_600_000 }, now: () => now });
      const { request, preview } = await wf.file(create(vhost));
      expect(request).toMatchObject({
        env: TEST_ENV,
        vhost,
        state: 'pending',
        action: 'create',
        before: null,
        after: { pattern: '^orders\\.', applyTo: 'all', priority: 0, definition: { 'message-ttl': 60000 } },
        requester: { user: REQUESTER, reason: 'orders pile up' },
        origin: { channel: 'C0INCIDENT', threadTs: '1700000000.000100' },
        approvalsChannel: 'C0APPROVALS',
        createdAt: '2026-11-30T12:00:00.000Z',
        expiresAt: '2026-11-30T13:00:00.000Z',
      });
      expect(preview.objects.map((o) => o.name)).toContain('orders.audit');
      expect(request.preview.objects).toBe(preview.objects.length);
      expect(await wf.get(request.id)).toEqual(request);
      expect((await wf.listOpen(TEST_ENV)).map((r) => r.id)).toContain(request.id);
      expect(await wf.listOpen('elsewhere')).toEqual([]);
      const attached = await wf.attachMessage(request.id, 'C0APPROVALS', '1700000001.000200');
      expect(attached.message).toEqual({ channel: 'C0APPROVALS', ts: '1700000001.000200' });
    });
  });

  it.each([
    ['a read-only environment', { mode: 'read-only' as const }, {}, 'read-only-env'],
    [
      'a write in a guarded environment without a reason',
      { mode: 'guarded' as const },
      { requester: { user: REQUESTER } },
      'reason-required',
    ],
    [
      'an invalid definition',
      {},
      { fields: { pattern: 'x', definition: { 'message-ttl': 'soon' } } },
      'preview-refused',
    ],
    [
      'a delete of a policy that does not exist',
      {},
      { action: 'delete' as const, fields: {}, policy: 'nope' },
      'preview-refused',
    ],
    ['an unknown environment', {}, { env: 'mars' }, 'unknown-env'],
    [
      'a reason longer than MAX_REASON (on every path, not only Slack)',
      {},
      { requester: { user: REQUESTER, reason: 'x'.repeat(MAX_REASON + 1) } },
      'reason-too-long',
    ],
  ])('refuses %s, storing nothing', async (_what, env, over, code) => {
    await withVhost(async (vhost) => {
      const before = await storedKeys();
      expect(await refused(fx.workflow({ env }).file(create(vhost, over)))).toBe(code);
      expect(await storedKeys()).toEqual(before);
    });
  });

  it('a reason missing from a delete is a coded refusal carrying the preview, so the form can ask for it', async () => {
    await withVhost(async (vhost) => {
      await admin.putPolicy('user', {
        vhost,
        name: 'ttl',
        pattern: '^a',
        applyTo: 'all',
        priority: 0,
        definition: { 'message-ttl': 1 },
      });
      const wf = fx.workflow();
      const err = await wf
        .file(create(vhost, { action: 'delete', fields: {}, requester: { user: REQUESTER } }))
        .catch((e) => e);
      expect(isWorkflowError(err, 'reason-required')).toBe(true);
      expect(err.details.preview.status).toBe('answered');
      const { request } = await wf.file(
        create(vhost, { action: 'delete', fields: {}, requester: { user: REQUESTER, reason: 'unused' } }),
      );
      expect(request).toMatchObject({ action: 'delete', after: null, before: { pattern: '^a' } });
    });
  });

  it('refuses when the bot identity cannot write policies, with the reason, before anything is asked', async () => {
    await withVhost(async (vhost) => {
      // monitoring: may read everything, write no policy
      await withUser({ tags: ['monitoring'], vhost }, async ({ user, password }) => {
        const client = new ManagementClient({ url: brokerUrl(), user, password });
        try {
          const err = await fx
            .workflow({ client })
            .file(create(vhost))
            .catch((e) => e);
          expect(isWorkflowError(err, 'identity-cannot-write')).toBe(true);
          expect(err.refusal.reason).toMatch(/policymaker or administrator/);
        } finally {
          await client.close();
        }
      });
      // policymaker, but no permissions in this vhost
      await withUser({ tags: ['policymaker'] }, async ({ user, password }) => {
        const client = new ManagementClient({ url: brokerUrl(), user, password });
        try {
          const err = await fx
            .workflow({ client })
            .file(create(vhost))
            .catch((e) => e);
          expect(isWorkflowError(err, 'identity-cannot-write')).toBe(true);
          expect(err.refusal.reason).toMatch(/no permissions in vhost/);
          // operator policies need administrator
          const op = await fx
            .workflow({ client })
            .file(
              create(vhost, { layer: 'operator', fields: { pattern: 'x', definition: { 'max-length': 5 } } }),
            )
            .catch((e) => e);
          expect(op.code).toBe('identity-cannot-write');
          expect(op.refusal.reason).toMatch(/administrator tag/);
        } finally {
          await client.close();
        }
      });
      // policymaker with permissions: may file
      await withUser({ tags: ['policymaker'], vhost }, async ({ user, password }) => {
        const client = new ManagementClient({ url: brokerUrl(), user, password });
        try {
          const { request } = await fx.workflow({ client }).file(create(vhost));
          expect(request.state).toBe('pending');
        } finally {
          await client.close();
        }
      });
    });
  });

  it('Redis down when filing: a clear coded refusal, nothing written anywhere', async () => {
    await withVhost(async (vhost) => {
      const dead = new Redis('redis://127.0.0.1:1', {
        maxRetriesPerRequest: 1,
        connectTimeout: 500,
        lazyConnect: true,
      });
      dead.on('error', () => undefined);
      try {
        const err = await fx
          .workflow({ redis: dead })
          .file(create(vhost))
          .catch((e) => e);
        expect(isWorkflowError(err, 'store-unavailable')).toBe(true);
        expect(err.message).toMatch(/nothing was filed/);
        expect(await admin.listPolicies(vhost)).toEqual([]);
        const decided = await fx
          .workflow({ redis: dead })
          .decide('r-00000000000000000000', { kind: 'approve', user: APPROVER, reason: 'ok' })
          .catch((e) => e);
        expect(isWorkflowError(decided, 'store-unavailable')).toBe(true);
        expect(decided.message).toMatch(/nothing was decided/);
      } finally {
        dead.disconnect();
      }
    });
  });
});

describe('deciding', () => {
  it('refuses self-approval, a non-approver and an empty reason; the request stays pending', async () => {
    await withVhost(async (vhost) => {
      const wf = fx.workflow();
      const { request } = await wf.file(create(vhost));
      expect(await refused(wf.decide(request.id, { kind: 'approve', user: REQUESTER, reason: 'lgtm' }))).toBe(
        'self-approval',
      );
      expect(
        await refused(wf.decide(request.id, { kind: 'approve', user: 'U0STRANGER', reason: 'lgtm' })),
      ).toBe('not-approver');
      expect(await refused(wf.decide(request.id, { kind: 'reject', user: 'U0STRANGER', reason: 'no' }))).toBe(
        'not-approver',
      );
      expect(await refused(wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: '   ' }))).toBe(
        'reason-required',
      );
      const long = 'x'.repeat(MAX_REASON + 1);
      expect(await refused(wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: long }))).toBe(
        'reason-too-long',
      );
      expect(
        await refused(wf.decide('r-00000000000000000000', { kind: 'approve', user: APPROVER, reason: 'x' })),
      ).toBe('not-found');
      expect((await wf.get(request.id))?.state).toBe('pending');
    });
  });

  it('a member of an approvers user group may approve', async () => {
    await withVhost(async (vhost) => {
      const wf = fx.workflow();
      const { request } = await wf.file(create(vhost));
      const r = await wf.decide(request.id, {
        kind: 'reject',
        user: APPROVER_2,
        reason: 'not during the freeze',
      });
      expect(r.outcome).toBe('decided');
      expect(r.request).toMatchObject({
        state: 'rejected',
        decision: { kind: 'reject', by: APPROVER_2, reason: 'not during the freeze' },
      });
      expect(fx.notifier.told.states.some((s) => s.id === request.id && s.state === 'rejected')).toBe(true);
    });
  });

  it('the requester may withdraw (reject) their own request', async () => {
    await withVhost(async (vhost) => {
      const wf = fx.workflow();
      const { request } = await wf.file(create(vhost));
      const r = await wf.decide(request.id, { kind: 'reject', user: REQUESTER, reason: 'wrong vhost' });
      expect(r.request.state).toBe('rejected');
    });
  });

  it('approve and reject at once on two replicas: one decision; the other is told who and when', async () => {
    await withVhost(async (vhost) => {
      const a = fx.workflow();
      const b = fx.workflow();
      for (let round = 0; round < 5; round++) {
        const { request } = await a.file(create(vhost, { policy: `p${round}` }));
        const results = await Promise.all([
          a.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' }),
          b.decide(request.id, { kind: 'reject', user: APPROVER_2, reason: 'no' }),
        ]);
        const decided = results.filter((r) => r.outcome === 'decided');
        const lost = results.filter((r) => r.outcome === 'already-decided');
        expect(decided).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect(lost[0]?.request.decision).toEqual(decided[0]?.request.decision);
        expect(lost[0]?.request.decision?.at).toMatch(/^\d{4}-/);
      }
    });
  });

  it('a pending request past its deadline expires: deciding it says so, and the sweep expires the rest', async () => {
    await withVhost(async (vhost) => {
      let clock = new Date('2026-11-30T12:00:00Z');
      const wf = fx.workflow({ env: { requestTtlMs: 60_000 }, now: () => clock });
      const one = (await wf.file(create(vhost, { policy: 'one' }))).request;
      const two = (await wf.file(create(vhost, { policy: 'two' }))).request;
      clock = new Date('2026-11-30T12:01:00Z');
      const r = await wf.decide(one.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
      expect(r.outcome).toBe('expired');
      expect(r.request.state).toBe('expired');
      expect(r.request.decision).toBeUndefined();
      // a second click on the expired request's button says so too
      expect((await wf.decide(one.id, { kind: 'approve', user: APPROVER, reason: 'ok' })).outcome).toBe(
        'expired',
      );
      expect(await wf.expireDue()).toBeGreaterThanOrEqual(1);
      expect((await wf.get(two.id))?.state).toBe('expired');
      expect((await wf.listOpen()).map((x) => x.id)).not.toContain(two.id);
    });
  });
});
