/**
 * A change set (one request for many policies) under the same approval rules as one change, on
 * the real Redis and broker: N distinct approvers, none the requester; the requesters' list;
 * expiry; a freeze holding it until lifted; break-glass applying it at once, to be reviewed.
 * Nothing of the set is written before the rules allow it.
 */
import { describe, expect, it } from 'vitest';
import type { LabClient } from '../../src/rabbit/lab.ts';
import type { SetStep } from '../../src/workflow/changeSet.ts';
import type { FileSetInput } from '../../src/workflow/types.ts';
import { waitFor, withVhost } from '../support/broker.ts';
import { brokersUp } from '../support/brokers.ts';
import {
  APPROVER,
  APPROVER_2,
  refusalCode as codeOf,
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

const CAP = { pattern: '^x', applyTo: 'queues', priority: 1, definition: { 'max-length': 3 } };

/** Two creates, `a` then `b`. */
const twoCreates = (vhost: string): SetStep[] => [
  { layer: 'user', vhost, name: 'a', before: null, after: CAP },
  { layer: 'user', vhost, name: 'b', before: null, after: { ...CAP, priority: 2 } },
];

const setInput = (vhost: string, over: Partial<FileSetInput> = {}): FileSetInput => ({
  source: 'definitions.json',
  steps: twoCreates(vhost),
  brokerVersion: broker.label,
  requester: { user: REQUESTER, reason: 'policies as code' },
  origin: { channel: 'C0CI' },
  ...over,
});

const written = async (vhost: string) => (await admin.listPolicies(vhost)).map((p) => p.name).sort();

describe(`a change set under the approval rules (${broker.label})`, () => {
  it('two approvals required: the requester cannot approve, one approver counts once, the second applies the set', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow({ env: { approvalsRequired: 2 } });
        await fx.worker(admin);
        const { request } = await wf.fileSet(setInput(vhost));
        expect(request.approvalsRequired).toBe(2);
        expect(
          await codeOf(wf.decide(request.id, { kind: 'approve', user: REQUESTER, reason: 'mine' })),
        ).toBe('self-approval');
        const first = await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'read it' });
        expect(first).toMatchObject({ outcome: 'counted', request: { state: 'pending' } });
        expect(
          await codeOf(wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'again' })),
        ).toBe('already-approved');
        expect(await written(vhost)).toEqual([]);
        await wf.decide(request.id, { kind: 'approve', user: APPROVER_2, reason: 'read it too' });
        expect((await settled(wf, request.id)).state).toBe('applied');
        expect(await written(vhost)).toEqual(['a', 'b']);
      },
      { client: admin },
    );
  });

  it('someone not among the requesters files no set', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow({ requesters: ['U0ONCALL'] });
        expect(await codeOf(wf.fileSet(setInput(vhost)))).toBe('not-requester');
        expect(await wf.listOpen()).toEqual([]);
      },
      { client: admin },
    );
  });

  it('a set past its deadline expires: approving it says so, nothing written', async () => {
    await withVhost(
      async (vhost) => {
        let clock = new Date('2026-12-02T12:00:00Z');
        const wf = fx.workflow({ env: { requestTtlMs: 60_000 }, now: () => clock });
        await fx.worker(admin);
        const { request } = await wf.fileSet(setInput(vhost));
        clock = new Date('2026-12-02T12:01:00Z');
        const late = await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        expect(late.outcome).toBe('expired');
        expect((await wf.get(request.id))?.state).toBe('expired');
        expect(await written(vhost)).toEqual([]);
      },
      { client: admin },
    );
  });

  it('approved while frozen: held, nothing written; the freeze lifted: the set applied whole', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow();
        await fx.worker(admin);
        await wf.freeze({ user: APPROVER, forMs: 3_600_000, reason: 'deploy window' });
        const { request } = await wf.fileSet(setInput(vhost));
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        // The job holds it once it runs (the worker may be slow to pick it up under load).
        const held = await waitFor(
          async () => {
            const r = await wf.get(request.id);
            return r?.held && r;
          },
          { what: 'the set held by the freeze' },
        );
        expect(held.state).toBe('approved');
        expect(await written(vhost)).toEqual([]);
        const lifted = await wf.unfreeze({ user: APPROVER_2, reason: 'window over' });
        expect(lifted).toMatchObject({ released: 1 });
        expect((await settled(wf, request.id)).state).toBe('applied');
        expect(await written(vhost)).toEqual(['a', 'b']);
      },
      { client: admin },
    );
  }, 60_000);

  it('break-glass where the environment allows it: applied at once without approval, to be reviewed; refused where it does not', async () => {
    await withVhost(
      async (vhost) => {
        const closed = fx.workflow();
        expect(await codeOf(closed.fileSet(setInput(vhost, { breakGlass: true })))).toBe(
          'break-glass-not-allowed',
        );
        expect(await written(vhost)).toEqual([]);
        const wf = fx.workflow({ env: { breakGlass: { reviewWithinMs: 3_600_000 } } });
        await fx.worker(admin);
        const { request } = await wf.fileSet(setInput(vhost, { breakGlass: true }));
        expect(request.breakGlass).toMatchObject({ by: REQUESTER, reason: 'policies as code' });
        expect((await settled(wf, request.id)).state).toBe('applied');
        expect(await written(vhost)).toEqual(['a', 'b']);
        expect((await wf.listUnreviewed()).map((r) => r.id)).toContain(request.id);
      },
      { client: admin },
    );
  });

  it('a break-glass set reverted on review: the revert is the whole set, planned like any set; approved, nothing of it is left', async () => {
    await withVhost(
      async (vhost) => {
        const wf = fx.workflow({ env: { breakGlass: { reviewWithinMs: 3_600_000 } } });
        await fx.worker(admin);
        const { request } = await wf.fileSet(setInput(vhost, { breakGlass: true }));
        expect((await settled(wf, request.id)).state).toBe('applied');
        const reviewed = await wf.review(request.id, {
          user: APPROVER,
          reason: 'not without an approval',
          outcome: 'reverted',
        });
        const revert = reviewed.revert?.request;
        expect(revert).toMatchObject({ action: 'revert', state: 'pending' });
        expect(revert?.set?.steps.map((s) => [s.name, s.after])).toEqual(
          expect.arrayContaining([
            ['a', null],
            ['b', null],
          ]),
        );
        await wf.decide(revert?.id as string, { kind: 'approve', user: APPROVER_2, reason: 'revert it' });
        expect((await settled(wf, revert?.id as string)).state).toBe('applied');
        expect(await written(vhost)).toEqual([]);
      },
      { client: admin },
    );
  });
});
