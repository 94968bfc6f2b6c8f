/**
 * The approval rules on the real Redis and broker: several approvals counted in one atomic move
 * across replicas (the N-th queues the apply once), one approver counted once, a rejection ending
 * a partly approved request, and who may file.
 */
import { type AuditRecord, type FreezeRecord, isChange } from '../../src/audit/types.ts';

const isFreeze = (r: AuditRecord): r is FreezeRecord => r.action === 'freeze' || r.action === 'unfreeze';

import { describe, expect, it, onTestFinished } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { isWorkflowError } from '../../src/workflow/errors.ts';
import type { FileInput } from '../../src/workflow/types.ts';
import { brokerCredentials, waitFor, withVhost } from '../support/broker.ts';
import { brokersUp } from '../support/brokers.ts';
import { startFakeBroker } from '../support/fakeBroker.ts';
import {
  APPROVER,
  APPROVER_2,
  refusalCode as codeOf,
  GROUP,
  policyWritesCounted,
  REQUESTER,
  settled,
  type WorkflowFixture,
  workflowHooks,
} from '../support/workflow.ts';

const { up } = await brokersUp();
const broker = up[0];
if (!broker) throw new Error('no broker up');

let admin: LabClient;
let fx: WorkflowFixture;

workflowHooks(broker, (a, f) => {
  admin = a;
  fx = f;
});

const input = (vhost: string, policy = 'cap'): FileInput => ({
  vhost,
  layer: 'user',
  action: 'create',
  policy,
  fields: { pattern: '^x', definition: { 'max-length': 3 } },
  requester: { user: REQUESTER, reason: 'incident 42' },
  origin: { channel: 'C0INCIDENT' },
});

describe(`two approvals required (${broker.label})`, () => {
  it('two approvers on two replicas at once: one apply, one record, both approvals listed', async () => {
    await withVhost(
      async (vhost) => {
        const puts: string[] = [];
        const clientA = policyWritesCounted(broker, puts);
        const clientB = policyWritesCounted(broker, puts);
        try {
          await fx.worker(clientA);
          await fx.worker(clientB);
          const a = fx.workflow({ env: { approvalsRequired: 2 } });
          const b = fx.workflow({ env: { approvalsRequired: 2 } });
          const { request } = await a.file(input(vhost));
          expect(request.approvalsRequired).toBe(2);
          const results = await Promise.allSettled([
            a.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok from A' }),
            b.decide(request.id, { kind: 'approve', user: APPROVER_2, reason: 'ok from B' }),
            // The same approver again, on the other replica, at the same moment: never counted twice.
            b.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'double click' }),
          ]);
          const outcomes = results.map((x) =>
            x.status === 'fulfilled' ? x.value.outcome : isWorkflowError(x.reason) ? x.reason.code : 'error',
          );
          expect(outcomes.slice(0, 2).sort()).toEqual(['counted', 'decided']);
          // Refused before or inside the move (already approved), or after the request left pending.
          expect(['already-approved', 'already-decided']).toContain(outcomes[2]);

          const done = await settled(a, request.id);
          expect(done.state).toBe('applied');
          expect(done.approvals?.map((x) => x.by).sort()).toEqual([APPROVER, APPROVER_2].sort());
          expect(puts).toHaveLength(1);
          const records = (await new AuditTrail(fx.redis, fx.keyPrefix).list({ vhost })).filter(isChange);
          expect(records).toHaveLength(1);
          const [record] = records;
          expect(record?.approvers?.map((x) => [x.user, x.reason]).sort()).toEqual(
            [
              [APPROVER, 'ok from A'],
              [APPROVER_2, 'ok from B'],
            ].sort(),
          );
          expect(record?.approver).toEqual(record?.approvers?.[0]);
          expect(fx.notifier.told.applied.filter((x) => x.request.id === request.id)).toHaveLength(1);
          expect((await admin.getPolicy('user', vhost, 'cap'))?.definition).toEqual({ 'max-length': 3 });
        } finally {
          await clientA.close();
          await clientB.close();
        }
      },
      { client: admin },
    );
  });

  it('one approval waits for the next; the same approver again is refused; a rejection ends it', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow({ env: { approvalsRequired: 2 } });
        const { request } = await wf.file(input(vhost));
        const first = await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'fine' });
        expect(first.outcome).toBe('counted');
        expect(first.request.state).toBe('pending');
        expect(first.request.approvals).toEqual([{ by: APPROVER, reason: 'fine', at: expect.any(String) }]);
        expect(
          await codeOf(wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'again' })),
        ).toBe('already-approved');
        expect(
          await codeOf(wf.decide(request.id, { kind: 'approve', user: REQUESTER, reason: 'mine' })),
        ).toBe('self-approval');
        expect((await wf.get(request.id))?.approvals).toHaveLength(1);
        const rejected = await wf.decide(request.id, { kind: 'reject', user: APPROVER_2, reason: 'not now' });
        expect(rejected.outcome).toBe('decided');
        expect(rejected.request.state).toBe('rejected');
        expect(rejected.request.decision).toMatchObject({ kind: 'reject', by: APPROVER_2 });
        const late = await wf.decide(request.id, {
          kind: 'approve',
          user: APPROVER_2,
          reason: 'changed my mind',
        });
        expect(late.outcome).toBe('already-decided');
        expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();
      },
      { client: admin },
    );
  });
});

describe('who may file', () => {
  it('someone not among the requesters is refused, told who may ask, and nothing is filed', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow({ requesters: ['U0ONCALL', 'S0ONCALL'] });
        try {
          await wf.file(input(vhost));
          expect.unreachable('filed');
        } catch (err) {
          expect(isWorkflowError(err, 'not-requester')).toBe(true);
          if (isWorkflowError(err)) {
            expect(err.refusal).toEqual({
              code: 'not-requester',
              env: 'test',
              requesters: ['U0ONCALL', 'S0ONCALL'],
              approvers: [APPROVER, 'S0APPROVERS'],
            });
          }
        }
        expect(await codeOf(wf.mayRequest(undefined, REQUESTER))).toBe('not-requester');
        expect(await codeOf(wf.mayRequest(undefined, 'U0ONCALL'))).toBe('no refusal');
        expect(await wf.listOpen()).toEqual([]);
        // Among them: filed.
        const ok = fx.workflow({ requesters: [REQUESTER] });
        expect((await ok.file(input(vhost))).request.state).toBe('pending');
      },
      { client: admin },
    );
  });
});

describe(`change freeze (${broker.label})`, () => {
  it('a second freeze while one runs is refused, at once on many replicas too; one past its end is replaced and its end recorded (issue 28, item 11)', async () => {
    let clock = Date.parse('2026-03-01T10:00:00.000Z');
    const now = () => new Date(clock);
    const replicas = Array.from({ length: 8 }, () => fx.workflow({ now }));
    const results = await Promise.all(
      replicas.map((wf, i) =>
        wf.freeze({ user: APPROVER, forMs: 7 * 86_400_000, reason: `INC-${i}` }).then(
          (r) => ({ frozen: r.freeze.reason }),
          (err: unknown) =>
            isWorkflowError(err, 'already-frozen') ? { refused: err.message } : { other: String(err) },
        ),
      ),
    );
    const frozen = results.filter((r) => 'frozen' in r);
    expect(frozen).toHaveLength(1);
    const refused = results.filter((r) => 'refused' in r);
    expect(refused).toHaveLength(7);
    expect(refused[0]).toEqual({
      refused:
        'Environment test is frozen already (by U0APPROVER, until 2026-03-08T10:00:00.000Z): `unfreeze` it first, or freeze again when it ends. Nothing changed.',
    });
    const first = (await replicas[0]?.frozen())?.freeze;
    expect(first?.reason).toBe((frozen[0] as { frozen: string }).frozen);

    // A week and a minute later, before any sweep took its end: a new freeze replaces it, and the
    // first one's end is in the audit trail, before the new freeze.
    clock += 7 * 86_400_000 + 60_000;
    const { freeze } = await (replicas[1] as (typeof replicas)[number]).freeze({
      user: APPROVER,
      forMs: 3_600_000,
      reason: 'INC-99',
    });
    expect((await replicas[2]?.frozen())?.freeze).toEqual(freeze);
    const trail = (await new AuditTrail(fx.redis, fx.keyPrefix).list({})).filter(isFreeze);
    expect(trail.map((e) => [e.action, e.freeze.reason, e.freeze.endedBecause])).toEqual([
      ['freeze', 'INC-99', undefined],
      ['unfreeze', first?.reason, 'its time ran out'],
      ['freeze', first?.reason, undefined],
    ]);
    await replicas[0]?.unfreeze({ user: APPROVER, reason: 'done' });
  });

  it('filed and approved while frozen, not applied; the freeze survives a restart; lifted: applied, all recorded', async () => {
    await withVhost(
      async (vhost) => {
        const first = fx.workflow();
        const worker = await fx.worker(admin);
        expect(await codeOf(first.freeze({ user: REQUESTER, forMs: 3_600_000, reason: 'INC-9' }))).toBe(
          'freeze-not-approver',
        );
        expect(await codeOf(first.freeze({ user: APPROVER, forMs: 8 * 86_400_000, reason: 'INC-9' }))).toBe(
          'freeze-too-long',
        );
        const { freeze } = await first.freeze({
          user: APPROVER,
          forMs: 3_600_000,
          reason: 'INC-9 in progress',
        });
        const { request } = await first.file(input(vhost));
        const approved = await first.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        expect(approved.outcome).toBe('decided');
        const held = await waitFor(
          async () => (await first.get(request.id))?.held && (await first.get(request.id)),
          {
            what: 'the request held by the freeze',
          },
        );
        expect(held.state).toBe('approved');
        expect(held.held).toEqual(freeze);
        expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();

        // A restart: this replica's worker and workflow go; new ones find the freeze and the held request.
        await worker.close();
        const second = fx.workflow();
        await fx.worker(admin);
        expect((await second.frozen()).freeze).toEqual(freeze);
        expect((await second.get(request.id))?.state).toBe('approved');

        const lifted = await second.unfreeze({ user: APPROVER_2, reason: 'INC-9 resolved' });
        expect(lifted).toMatchObject({ lifted: freeze, released: 1 });
        expect((await settled(second, request.id)).state).toBe('applied');
        expect((await admin.getPolicy('user', vhost, 'cap'))?.definition).toEqual({ 'max-length': 3 });
        expect((await second.frozen()).freeze).toBeUndefined();

        const trail = await new AuditTrail(fx.redis, fx.keyPrefix).list({});
        const actions = trail.map((r) => [r.action, ('actor' in r ? r.actor : undefined) ?? null]);
        expect(actions).toEqual(
          expect.arrayContaining([
            ['freeze', APPROVER],
            ['unfreeze', APPROVER_2],
            ['create', null],
          ]),
        );
        expect(trail.filter(isFreeze).find((r) => r.action === 'unfreeze')?.freeze).toMatchObject({
          reason: 'INC-9 in progress',
          endedBecause: 'INC-9 resolved',
        });
        expect(await new AuditTrail(fx.redis, fx.keyPrefix).verify()).toMatchObject({ ok: true });
      },
      { client: admin },
    );
  }, 90_000);

  it('held requests are applied in approval order when the freeze is lifted, on two workers at once', async () => {
    await withVhost(
      async (vhost) => {
        // The workers ask the broker through a fake that can answer late: the first call after the
        // unfreeze (the first job's) waits 2 s, and the jobs beside it must still wait their turn.
        const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: broker.url } });
        const client = new ManagementClient({ url: fake.url, ...brokerCredentials() });
        onTestFinished(async () => {
          await client.close();
          await fake.close();
        });
        const wf = fx.workflow();
        await fx.worker(client);
        await fx.worker(client);
        await wf.freeze({ user: APPROVER, forMs: 3_600_000, reason: 'deploy window' });
        const names = ['held-1', 'held-2', 'held-3', 'held-4'];
        const ids: string[] = [];
        for (const [i, name] of names.entries()) {
          const { request } = await wf.file({
            ...input(vhost, name),
            fields: { pattern: `^held${i}`, definition: { 'max-length': i + 1 } },
          });
          await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: `ok ${i}` });
          ids.push(request.id);
        }
        await waitFor(
          async () => {
            const all = await Promise.all(ids.map((id) => wf.get(id)));
            return all.every((r) => r?.held) || undefined;
          },
          { what: 'every request held' },
        );
        fake.enqueue({ kind: 'proxy', target: broker.url, delayMs: 2_000 });
        await wf.unfreeze({ user: APPROVER, reason: 'window over' });
        for (const id of ids) expect((await settled(wf, id)).state).toBe('applied');
        const order = (await new AuditTrail(fx.redis, fx.keyPrefix).list({ vhost }))
          .filter(isChange)
          .reverse()
          .map((r) => r.policy);
        expect(order).toEqual(names);
      },
      { client: admin },
    );
  }, 90_000);

  it('a freeze that runs out releases what it held, and its end is recorded once', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow();
        await fx.worker(admin, { sweepIntervalMs: 300 });
        await fx.worker(admin, { sweepIntervalMs: 300 });
        await wf.freeze({ user: APPROVER, forMs: 3_000, reason: 'deploy window' });
        const { request } = await wf.file(input(vhost, 'short'));
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        expect((await settled(wf, request.id)).state).toBe('applied');
        const done = await wf.get(request.id);
        expect(Date.parse(done?.appliedAt ?? '')).toBeGreaterThanOrEqual(
          Date.parse(done?.held?.until ?? 'x'),
        );
        const ends = await waitFor(
          async () => {
            const e = (await new AuditTrail(fx.redis, fx.keyPrefix).list({}))
              .filter(isFreeze)
              .filter((r) => r.action === 'unfreeze');
            return e.length > 0 && e;
          },
          { what: 'the end of the freeze recorded' },
        );
        expect(ends).toHaveLength(1);
        expect(ends[0]?.freeze.endedBecause).toBe('its time ran out');
        expect(ends[0]?.actor).toBeUndefined();
      },
      { client: admin },
    );
  }, 90_000);
});

describe(`an environment read-only since the request was filed (${broker.label}; issue 28, item 1)`, () => {
  const readOnly = (err: unknown) =>
    isWorkflowError(err, 'read-only-env') ? { code: err.code, message: err.message } : String(err);

  it('the second approval, and a break-glass, are refused, naming the environment; nothing is written', async () => {
    await withVhost(
      async (vhost) => {
        await fx.worker(admin);
        const before = fx.workflow({ env: { approvalsRequired: 2, breakGlass: { reviewWithinMs: 60_000 } } });
        const { request } = await before.file(input(vhost));
        expect(
          (await before.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' })).outcome,
        ).toBe('counted');
        const other = await before.file(input(vhost, 'other'));
        // The bot restarted with the environment read-only.
        const after = fx.workflow({
          env: { approvalsRequired: 2, mode: 'read-only', breakGlass: { reviewWithinMs: 60_000 } },
        });
        const second = await after
          .decide(request.id, { kind: 'approve', user: APPROVER_2, reason: 'ok too' })
          .catch(readOnly);
        expect(second).toEqual({
          code: 'read-only-env',
          message: 'The environment test is read-only: the bot changes no policy there. Nothing was decided.',
        });
        const glass = await after
          .breakGlass(other.request.id, { user: REQUESTER, reason: 'INC-1 now' })
          .catch(readOnly);
        expect(glass).toEqual({
          code: 'read-only-env',
          message: 'The environment test is read-only: the bot changes no policy there. Nothing was applied.',
        });
        expect((await after.get(request.id))?.state).toBe('pending');
        expect((await after.get(request.id))?.approvals).toHaveLength(1);
        expect((await after.get(other.request.id))?.state).toBe('pending');
        // A rejection writes nothing: still taken.
        expect(
          (await after.decide(request.id, { kind: 'reject', user: APPROVER_2, reason: 'not now' })).outcome,
        ).toBe('decided');
        expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();
        expect(await admin.getPolicy('user', vhost, 'other')).toBeNull();
      },
      { client: admin },
    );
  });

  it('the apply job refuses a request approved before: failed, saying so, nothing written', async () => {
    await withVhost(
      async (vhost) => {
        const puts: string[] = [];
        const client = policyWritesCounted(broker, puts);
        onTestFinished(() => client.close());
        // The worker's replica restarted read-only; the request was approved on one that was not.
        await fx.worker(client, { environments: [{ name: 'test', mode: 'read-only' }] });
        const wf = fx.workflow();
        const { request } = await wf.file(input(vhost));
        expect((await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' })).outcome).toBe(
          'decided',
        );
        const done = await settled(wf, request.id);
        expect(done.state).toBe('failed');
        expect(done.failure).toMatchObject({
          code: 'read-only-env',
          message: 'The environment test is read-only: the bot changes no policy there. Nothing was applied.',
        });
        expect(fx.notifier.told.failed.map((r) => r.id)).toContain(request.id);
        expect(puts).toEqual([]);
        expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();
      },
      { client: admin },
    );
  });

  it('read-only after the move to applying, before the first write: the check just before it refuses, nothing written', async () => {
    await withVhost(
      async (vhost) => {
        const puts: string[] = [];
        const client = policyWritesCounted(broker, puts);
        onTestFinished(() => client.close());
        // The worker's environments are its configuration now: switched to read-only as the
        // request's message says it is applying, i.e. past the check before the move, before any write.
        const env: { name: string; mode: 'normal' | 'read-only' } = { name: 'test', mode: 'normal' };
        await fx.worker(client, {
          environments: [env],
          notifier: {
            ...fx.notifier,
            async stateChanged(r) {
              if (r.state === 'applying') env.mode = 'read-only';
              await fx.notifier.stateChanged(r);
            },
          },
        });
        const wf = fx.workflow();
        const { request } = await wf.file(input(vhost));
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        const done = await settled(wf, request.id);
        expect(fx.notifier.told.states.filter((r) => r.id === request.id).map((r) => r.state)).toEqual([
          'approved',
          'applying',
          'failed',
        ]);
        expect(done.failure).toMatchObject({
          code: 'read-only-env',
          message: 'The environment test is read-only: the bot changes no policy there. Nothing was applied.',
        });
        expect(fx.notifier.told.failed.map((r) => r.id)).toEqual([request.id]);
        expect(puts).toEqual([]);
        expect(await admin.getPolicy('user', vhost, 'cap')).toBeNull();
      },
      { client: admin },
    );
  });
});

describe('a user group id as the user of a signed payload (issue 28, item 9)', () => {
  it('is refused for an approval, a filing, a break-glass, a review and a freeze, although the group is configured', async () => {
    await withVhost(
      async (vhost) => {
        // GROUP is among the approvers and the requesters: as itself it is nobody.
        const wf = fx.workflow({
          env: { breakGlass: { reviewWithinMs: 60_000 } },
          requesters: [REQUESTER, GROUP],
        });
        const { request } = await wf.file(input(vhost));
        expect(await codeOf(wf.decide(request.id, { kind: 'approve', user: GROUP, reason: 'ok' }))).toBe(
          'not-a-user',
        );
        expect(await codeOf(wf.decide(request.id, { kind: 'reject', user: GROUP, reason: 'no' }))).toBe(
          'not-a-user',
        );
        expect((await wf.get(request.id))?.approvals ?? []).toEqual([]);
        const asGroup = { ...input(vhost, 'other'), requester: { user: GROUP, reason: 'INC-1' } };
        expect(await codeOf(wf.file(asGroup))).toBe('not-a-user');
        expect(await codeOf(wf.file({ ...asGroup, breakGlass: true }))).toBe('not-a-user');
        expect(await codeOf(wf.mayRequest(undefined, GROUP))).toBe('not-a-user');
        expect(await codeOf(wf.breakGlass(request.id, { user: GROUP, reason: 'INC-1' }))).toBe('not-a-user');
        expect(await codeOf(wf.review(request.id, { user: GROUP, reason: 'x', outcome: 'reviewed' }))).toBe(
          'not-a-user',
        );
        expect(await codeOf(wf.freeze({ user: GROUP, forMs: 60_000, reason: 'x' }))).toBe('not-a-user');
        expect((await wf.listOpen()).map((r) => r.id)).toEqual([request.id]);
      },
      { client: admin },
    );
  });
});
