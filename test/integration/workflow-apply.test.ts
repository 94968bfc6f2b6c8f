/**
 * The apply job on the real Redis and broker: create, edit and delete applied as previewed and
 * recorded once; two replicas, one apply; stale; the broker down during the job; a bot stopped
 * between approval and apply.
 */

import { describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { APPLY_DEFAULTS } from '../../src/workflow/apply/queue.ts';
import type { FileInput } from '../../src/workflow/types.ts';
import { brokerCredentials, waitFor, withUser, withVhost } from '../support/broker.ts';
import { brokersUp } from '../support/brokers.ts';
import { startFakeBroker } from '../support/fakeBroker.ts';
import {
  APPROVER,
  APPROVER_2,
  auditDown,
  policyWritesCounted,
  REQUESTER,
  settled,
  type WorkflowFixture,
  workflowHooks,
} from '../support/workflow.ts';

let admin: LabClient;
let fx: WorkflowFixture;
let trail: AuditTrail;

// Each test its own key prefix: its workers see only its own jobs.
const { up } = await brokersUp();

describe.each(up)('apply on $label', (broker) => {
  workflowHooks(broker, (a, f) => {
    admin = a;
    fx = f;
    trail = new AuditTrail(f.redis, f.keyPrefix);
  });

  const input = (vhost: string, over: Partial<FileInput>): FileInput => ({
    vhost,
    layer: 'user',
    action: 'create',
    policy: 'ttl',
    fields: {},
    requester: { user: REQUESTER, reason: 'incident 42' },
    origin: { channel: 'C0INCIDENT', threadTs: '1700000000.000100' },
    ...over,
  });

  const recordsOf = async (vhost: string) => (await trail.list({ vhost })).filter(isChange);

  it('create, edit, delete: the broker changed as previewed, one audit record each, objects report it', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putQueue(vhost, 'orders.audit', { kind: 'classic' });
        await admin.putQueue(vhost, 'payments', { kind: 'quorum' });
        await admin.putPolicy('user', {
          vhost,
          name: 'base',
          pattern: '.*',
          applyTo: 'queues',
          priority: 0,
          definition: { 'max-length': 1000 },
        });
        await fx.worker(admin);
        const wf = fx.workflow();

        // create
        const c = await wf.file(
          input(vhost, {
            fields: { pattern: '^orders\\.', priority: 5, definition: { 'message-ttl': 60000 } },
          }),
        );
        await wf.decide(c.request.id, { kind: 'approve', user: APPROVER, reason: 'ok for the incident' });
        const created = await settled(wf, c.request.id);
        expect(created.state).toBe('applied');
        expect(created.verification?.matched).toBe(true);
        expect(await admin.getPolicy('user', vhost, 'ttl')).toMatchObject({
          pattern: '^orders\\.',
          priority: 5,
          definition: { 'message-ttl': 60000 },
        });
        const [createRecord] = await recordsOf(vhost);
        expect(createRecord).toMatchObject({
          id: created.auditId,
          env: 'test',
          vhost,
          policy: 'ttl',
          operator: false,
          action: 'create',
          requester: { user: REQUESTER, reason: 'incident 42' },
          approver: { user: APPROVER, reason: 'ok for the incident' },
          requestedAt: created.createdAt,
          approvedAt: created.decision?.at,
          before: null,
          after: { pattern: '^orders\\.', applyTo: 'all', priority: 5, definition: { 'message-ttl': 60000 } },
          matchedPreview: true,
        });
        // orders.audit moved from base to ttl: lost max-length, gained message-ttl
        expect(createRecord?.objects).toEqual([
          expect.objectContaining({
            name: 'orders.audit',
            before: 'base',
            after: 'ttl',
            lost: { 'max-length': 1000 },
            gained: { 'message-ttl': 60000 },
          }),
        ]);
        const applied = fx.notifier.told.applied.find((a) => a.request.id === c.request.id);
        expect(applied?.record.id).toBe(created.auditId);
        const states = fx.notifier.told.states.filter((s) => s.id === c.request.id).map((s) => s.state);
        expect(states).toEqual(['approved', 'applying', 'applied']);

        // edit: only the priority given; the rest kept
        const e = await wf.file(
          input(vhost, { action: 'edit', fields: { definition: { 'message-ttl': 5000 } } }),
        );
        await wf.decide(e.request.id, { kind: 'approve', user: APPROVER_2, reason: 'shorter' });
        expect((await settled(wf, e.request.id)).state).toBe('applied');
        expect((await admin.getPolicy('user', vhost, 'ttl'))?.definition).toEqual({ 'message-ttl': 5000 });

        // delete: orders.audit falls back to base and gets max-length back
        const d = await wf.file(input(vhost, { action: 'delete' }));
        await wf.decide(d.request.id, { kind: 'approve', user: APPROVER, reason: 'incident over' });
        const deleted = await settled(wf, d.request.id);
        expect(deleted.state).toBe('applied');
        expect(await admin.getPolicy('user', vhost, 'ttl')).toBeNull();
        const records = await recordsOf(vhost);
        expect(records.map((r) => r.action)).toEqual(['delete', 'edit', 'create']); // newest first
        expect(records[0]?.objects).toEqual([
          expect.objectContaining({
            name: 'orders.audit',
            before: 'ttl',
            after: 'base',
            lost: { 'message-ttl': 5000 },
          }),
        ]);
        expect((await trail.verify()).ok).toBe(true);

        // revert of the delete: a new request restoring the policy, with its own approval
        const revert = await wf.revertRequestFor(
          deleted.auditId as string,
          APPROVER_2,
          { channel: 'C0APPROVALS' },
          'too early',
        );
        expect(revert.request).toMatchObject({
          action: 'revert',
          revertOf: deleted.auditId,
          state: 'pending',
          before: null,
        });
        expect(revert.request.after?.definition).toEqual({ 'message-ttl': 5000 });
        await wf.decide(revert.request.id, { kind: 'approve', user: APPROVER, reason: 'back' });
        expect((await settled(wf, revert.request.id)).state).toBe('applied');
        expect((await admin.getPolicy('user', vhost, 'ttl'))?.definition).toEqual({ 'message-ttl': 5000 });
        expect((await recordsOf(vhost))[0]).toMatchObject({ action: 'revert', revertOf: deleted.auditId });
      },
      { client: admin },
    );
  });

  it('an operator policy: applied, and the objects verified through the statistics, which lag', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putQueue(vhost, 'orders.1', { kind: 'classic' });
        await fx.worker(admin, { verifyDeadlineMs: 45_000 });
        const wf = fx.workflow();
        const { request } = await wf.file(
          input(vhost, {
            layer: 'operator',
            policy: 'ceiling',
            fields: { pattern: '^orders\\.', applyTo: 'queues', definition: { 'max-length': 100 } },
          }),
        );
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'cap it' });
        const r = await settled(wf, request.id);
        expect(r.state).toBe('applied');
        expect(r.verification).toEqual({ matched: true, mismatches: [], unchecked: 0 });
        expect(await admin.getPolicy('operator', vhost, 'ceiling')).toMatchObject({
          definition: { 'max-length': 100 },
        });
        const [record] = await recordsOf(vhost);
        expect(record).toMatchObject({ operator: true, policy: 'ceiling', matchedPreview: true });
        expect(record?.objects).toEqual([
          expect.objectContaining({
            name: 'orders.1',
            before: null,
            after: 'ceiling',
            gained: { 'max-length': 100 },
          }),
        ]);
      },
      { client: admin },
    );
  }, 90_000);

  it('two replicas approving the same request at once: one decision, one apply, one record', async () => {
    await withVhost(
      async (vhost) => {
        const calls: string[] = [];
        const counting = (label: string) =>
          new ManagementClient({
            url: broker.url,
            ...brokerCredentials(),
            onCall: (c) => {
              if (c.method !== 'GET') calls.push(`${label} ${c.method} ${c.path}`);
            },
          });
        const clientA = counting('a');
        const clientB = counting('b');
        try {
          await fx.worker(clientA);
          await fx.worker(clientB);
          const a = fx.workflow();
          const b = fx.workflow();
          const { request } = await a.file(
            input(vhost, { fields: { pattern: '^x', definition: { 'max-length': 3 } } }),
          );
          const results = await Promise.all([
            a.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' }),
            b.decide(request.id, { kind: 'approve', user: APPROVER_2, reason: 'ok too' }),
            a.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'double click' }),
          ]);
          expect(results.filter((r) => r.outcome === 'decided')).toHaveLength(1);
          expect((await settled(a, request.id)).state).toBe('applied');
          expect(calls.filter((c) => c.includes('PUT'))).toHaveLength(1);
          expect(await recordsOf(vhost)).toHaveLength(1);
          expect(fx.notifier.told.applied.filter((x) => x.request.id === request.id)).toHaveLength(1);
        } finally {
          await clientA.close();
          await clientB.close();
        }
      },
      { client: admin },
    );
  });

  it('stale: the policy changed on the broker after the request: not applied, told, with a fresh preview', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putPolicy('user', {
          vhost,
          name: 'ttl',
          pattern: '^a',
          applyTo: 'all',
          priority: 0,
          definition: { 'message-ttl': 1000 },
        });
        await fx.worker(admin);
        const wf = fx.workflow();
        const { request } = await wf.file(input(vhost, { action: 'edit', fields: { priority: 7 } }));
        // someone changes the policy outside the bot before the approval
        await admin.putPolicy('user', {
          vhost,
          name: 'ttl',
          pattern: '^a',
          applyTo: 'all',
          priority: 0,
          definition: { 'message-ttl': 2000 },
        });
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        const r = await settled(wf, request.id);
        expect(r.state).toBe('stale');
        expect(await admin.getPolicy('user', vhost, 'ttl')).toMatchObject({
          priority: 0,
          definition: { 'message-ttl': 2000 },
        });
        expect(await recordsOf(vhost)).toEqual([]);
        const told = fx.notifier.told.stale.find((s) => s.request.id === request.id);
        expect(told?.fresh).toMatchObject({
          status: 'answered',
          change: { before: { definition: { 'message-ttl': 2000 } } },
        });
      },
      { client: admin },
    );
  });

  it('stale: a create whose name was taken meanwhile is not applied', async () => {
    await withVhost(
      async (vhost) => {
        await fx.worker(admin);
        const wf = fx.workflow();
        const { request } = await wf.file(
          input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 1 } } }),
        );
        await admin.putPolicy('user', {
          vhost,
          name: 'ttl',
          pattern: '^b',
          applyTo: 'all',
          priority: 0,
          definition: { 'max-length': 2 },
        });
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        expect((await settled(wf, request.id)).state).toBe('stale');
        expect((await admin.getPolicy('user', vhost, 'ttl'))?.pattern).toBe('^b');
      },
      { client: admin },
    );
  });

  it('a 4xx from the broker is final: failed with the broker reason, tried once', async () => {
    await withVhost(
      async (vhost) => {
        // The identity lost its policy rights after filing: it reads, but the PUT gets 401/403.
        await withUser({ tags: ['monitoring'], vhost, url: broker.url }, async ({ user, password }) => {
          const client = new ManagementClient({ url: broker.url, user, password });
          try {
            await fx.worker(client);
            const wf = fx.workflow();
            const { request } = await wf.file(
              input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 1 } } }),
            );
            await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
            const r = await settled(wf, request.id);
            expect(r.state).toBe('failed');
            expect(r.failure).toMatchObject({
              code: expect.stringMatching(/^(unauthorized|forbidden)$/),
              attempts: 1,
            });
            expect(r.failure?.message).not.toBe('');
            expect(fx.notifier.told.failed.map((f) => f.id)).toContain(request.id);
            expect(await admin.getPolicy('user', vhost, 'ttl')).toBeNull();
            expect(await recordsOf(vhost)).toEqual([]);
          } finally {
            await client.close();
          }
        });
      },
      { client: admin },
    );
  });

  it('the audit append failing past the job’s last try: the write stands, the request waits applying, then applied with its record', async () => {
    await withVhost(
      async (vhost) => {
        const outage = auditDown(fx);
        // The job's tries, then the ending waits 100 ms at a time without spending any.
        await fx.worker(admin, { audit: outage.audit, rollbackRetryMs: 100 });
        const wf = fx.workflow();
        const { request } = await wf.file(
          input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 1 } } }),
        );
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        await waitFor(() => outage.tries >= APPLY_DEFAULTS.attempts + 2, {
          what: 'the append tried past the job’s tries',
        });
        // Written, so not failed as if it were not: applying, its record still to come.
        expect((await wf.get(request.id))?.state).toBe('applying');
        expect((await admin.getPolicy('user', vhost, 'ttl'))?.definition).toEqual({ 'max-length': 1 });
        expect(await recordsOf(vhost)).toEqual([]);
        outage.down = false;
        const r = await settled(wf, request.id);
        expect(r.state).toBe('applied');
        expect(r.failure).toBeUndefined();
        const records = await recordsOf(vhost);
        expect(records).toHaveLength(1);
        expect(r.auditId).toBe(records[0]?.id);
        expect(fx.notifier.told.states.filter((s) => s.id === request.id).map((s) => s.state)).toEqual([
          'approved',
          'applying',
          'applied',
        ]);
        expect(fx.notifier.told.failed).toEqual([]);
      },
      { client: admin },
    );
  });

  it('the broker down during the job: retried with backoff and applied once when it returns', async () => {
    await withVhost(
      async (vhost) => {
        const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        const client = new ManagementClient({
          url: fake.url,
          ...brokerCredentials(),
          getRetries: 0,
          timeouts: { connectMs: 500, headersMs: 2000, bodyMs: 2000 },
        });
        try {
          await fx.worker(client, { backoffMs: 300 });
          const wf = fx.workflow();
          const { request } = await wf.file(
            input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 1 } } }),
          );
          fake.setFallback({ kind: 'drop' });
          const down = fake.requests.length;
          await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
          // at least two tries met the broker down
          await waitFor(() => fake.requests.length >= down + 2, { what: 'tries while the broker is down' });
          fake.setFallback({ kind: 'proxy', target: broker.url });
          const r = await settled(wf, request.id);
          expect(r.state).toBe('applied');
          expect(fake.requests.filter((q) => q.method === 'PUT')).toHaveLength(1);
          expect(await recordsOf(vhost)).toHaveLength(1);
          expect((await admin.getPolicy('user', vhost, 'ttl'))?.definition).toEqual({ 'max-length': 1 });
        } finally {
          await client.close();
          await fake.close();
        }
      },
      { client: admin },
    );
  });

  it('a write that went through but whose answer was lost: the retry finds it done, records it once', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putQueue(vhost, 'a.1', { kind: 'classic' });
        const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        const client = new ManagementClient({ url: fake.url, ...brokerCredentials() });
        try {
          fake.setRoute((url, method) => method === 'PUT' && url.includes('/api/policies/'), {
            kind: 'proxy-drop',
            target: broker.url,
          });
          await fx.worker(client);
          const wf = fx.workflow();
          const { request } = await wf.file(
            input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 7 } } }),
          );
          await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
          const r = await settled(wf, request.id);
          expect(r.state).toBe('applied');
          expect(fake.requests.filter((q) => q.method === 'PUT')).toHaveLength(1);
          const records = await recordsOf(vhost);
          expect(records).toHaveLength(1);
          // what the objects lost was saved before the write, so the record has it after the retry
          expect(records[0]?.objects).toContainEqual(
            expect.objectContaining({ name: 'a.1', before: null, after: 'ttl', gained: { 'max-length': 7 } }),
          );
        } finally {
          await client.close();
          await fake.close();
        }
      },
      { client: admin },
    );
  });

  it('a write that went through on the last try, its answer lost: read back and undone with the same write, failed, both in the trail', async () => {
    await withVhost(
      async (vhost) => {
        const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        const client = new ManagementClient({ url: fake.url, ...brokerCredentials() });
        try {
          fake.setRoute((url, method) => method === 'PUT' && url.includes('/api/policies/'), {
            kind: 'proxy-drop',
            target: broker.url,
          });
          const wf = fx.workflow();
          const { request } = await wf.file(
            input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 5 } } }),
          );
          await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
          // Its job's last try (queued, no worker yet): the lost answer is final, so the rollback
          // walks what was written.
          const jobKey = `${fx.keyPrefix}:bull:apply:${request.id}`;
          const opts = JSON.parse((await fx.redis.hget(jobKey, 'opts')) ?? '{}');
          await fx.redis.hset(jobKey, 'opts', JSON.stringify({ ...opts, attempts: 1 }));
          await fx.worker(client);
          const r = await settled(wf, request.id);
          expect(r.state).toBe('failed');
          expect(fake.requests.filter((q) => q.method === 'PUT')).toHaveLength(1);
          expect(fake.requests.filter((q) => q.method === 'DELETE')).toHaveLength(1);
          expect(await admin.getPolicy('user', vhost, 'ttl')).toBeNull();
          const records = await recordsOf(vhost);
          // (newest first)
          expect(records.map((x) => [x.id, x.action, x.revertOf]).reverse()).toEqual([
            [`a-${request.id}`, 'create', undefined],
            [`a-${request.id}-undo`, 'revert', `a-${request.id}`],
          ]);
        } finally {
          await client.close();
          await fake.close();
        }
      },
      { client: admin },
    );
  });

  it('two nodes, a write that timed out on the first after it was done: read back through the second, never sent again, recorded once', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putQueue(vhost, 'a.1', { kind: 'classic' });
        // Two "nodes" of one broker: the first does the write and never answers it.
        const first = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        const second = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        first.setRoute((url, method) => method === 'PUT' && url.includes('/api/policies/'), {
          kind: 'proxy-hang',
          target: broker.url,
        });
        const client = new ManagementClient({
          url: [first.url, second.url],
          ...brokerCredentials(),
          timeouts: { headersMs: 1_500 },
        });
        const puts = () =>
          [...first.requests, ...second.requests].filter((q) => q.method === 'PUT').map((q) => q.url);
        try {
          await fx.worker(client);
          const wf = fx.workflow();
          const { request } = await wf.file(
            input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 6 } } }),
          );
          await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
          const r = await settled(wf, request.id);
          expect(r.state).toBe('applied');
          // One PUT in all, to the first node; the retry read the policy back through the second.
          expect(puts()).toHaveLength(1);
          expect(first.requests.filter((q) => q.method === 'PUT')).toHaveLength(1);
          expect(second.requests.some((q) => q.method === 'GET' && q.url.includes('/api/policies/'))).toBe(
            true,
          );
          expect(client.node).toBe(second.url);
          expect(await recordsOf(vhost)).toHaveLength(1);
          expect((await admin.getPolicy('user', vhost, 'ttl'))?.definition).toEqual({ 'max-length': 6 });
        } finally {
          await client.close(0);
          await first.close();
          await second.close();
        }
      },
      { client: admin },
    );
  });

  it('a bot stopped between the approval and the apply applies it once after restart', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow();
        const { request } = await wf.file(
          input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 9 } } }),
        );
        // no worker runs: the approval is queued and waits
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        expect((await wf.get(request.id))?.state).toBe('approved');
        expect(await admin.getPolicy('user', vhost, 'ttl')).toBeNull();
        // "restart": a worker comes up (two, as two replicas would)
        await fx.worker(admin);
        await fx.worker(admin);
        expect((await settled(wf, request.id)).state).toBe('applied');
        expect(await recordsOf(vhost)).toHaveLength(1);
      },
      { client: admin },
    );
  });

  it('one apply path: a single change is a set of one, its cursor in the job data; a job saved in the shape before it (no cursor) still applies, never writing twice', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putQueue(vhost, 'a.1', { kind: 'classic' });
        const wf = fx.workflow();
        const fields = { pattern: '^a', applyTo: 'all', priority: 0, definition: { 'max-length': 3 } };
        const { request } = await wf.file(input(vhost, { fields }));
        // No worker yet: the approval waits in the queue.
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        // As a try of the job before this change left it: what it prepared saved in today's
        // ApplyJobData shape (no `set` cursor), the policy written, then the worker gone.
        const jobKey = `${fx.keyPrefix}:bull:apply:${request.id}`;
        const saved = {
          name: 'a.1',
          kind: 'classic',
          before: null,
          after: 'ttl',
          lost: {},
          gained: { 'max-length': 3 },
          changed: {},
        };
        await fx.redis.hset(
          jobKey,
          'data',
          JSON.stringify({
            requestId: request.id,
            objects: [saved],
            unpredictable: 0,
            watch: { watched: [], unwatched: 0, sampledBefore: null },
            writtenAt: new Date().toISOString(),
          }),
        );
        await admin.putPolicy('user', { vhost, name: 'ttl', ...fields });
        const puts: string[] = [];
        const client = policyWritesCounted(broker, puts);
        try {
          await fx.worker(client);
          const r = await settled(wf, request.id);
          expect(r.state).toBe('applied');
          expect(puts).toEqual([]);
          const records = await recordsOf(vhost);
          expect(records).toHaveLength(1);
          // The record as a single change's always was: its id, no `set`, what the try prepared.
          expect(records[0]).toMatchObject({ id: `a-${request.id}`, action: 'create', objects: [saved] });
          expect(records[0]?.set).toBeUndefined();
          expect(r.auditId).toBe(`a-${request.id}`);
          // The step machinery's cursor, in the job's data beside what was prepared.
          const data = JSON.parse((await fx.redis.hget(jobKey, 'data')) ?? '{}');
          expect(data.set).toMatchObject({ phase: 'writing', written: 1, undone: 0 });
          expect(data.objects).toEqual([saved]);
        } finally {
          await client.close();
        }
      },
      { client: admin },
    );
  });

  it('an approval whose job was lost (Redis blip on enqueue) is queued by the worker sweep', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow();
        const { request } = await wf.file(
          input(vhost, { fields: { pattern: '^a', definition: { 'max-length': 4 } } }),
        );
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        // the job disappears as if the enqueue never happened
        const job = `${fx.keyPrefix}:bull:apply:${request.id}`;
        expect(await fx.redis.exists(job)).toBe(1);
        expect(await fx.redis.lrem(`${fx.keyPrefix}:bull:apply:wait`, 0, request.id)).toBe(1);
        await fx.redis.del(job);
        await fx.worker(admin, { sweepIntervalMs: 500 });
        expect((await settled(wf, request.id)).state).toBe('applied');
      },
      { client: admin },
    );
  });
});
