/**
 * A time-boxed change set (`import FILE --for 3s`) on the real broker and Redis, through the same
 * apply job as any set: a file of three changes (the rename of `keep`, an edit of `fallback`)
 * planned, filed with `fileImport` as the bot files it, approved and applied; at the deadline the
 * whole set is reverted as one approved request: every policy back as it was, written in the
 * order planned at the deadline (here, no queue holding messages, the reverse of the set's; where
 * that order would cut a queue: timebox-set-revert.test.ts), each record a revert of its step
 * naming the set it undoes. Changed outside the bot in between, nothing is written and the set's
 * revert waits for a new approval, restoring each policy from what it is now.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { fileImport } from '../../src/commands/import/import.ts';
import { createLogger } from '../../src/log/log.ts';
import type { Policy } from '../../src/policy/types.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import type { PolicySetStep } from '../../src/workflow/changeSet.ts';
import { derivedRequestId, revertRequestId } from '../../src/workflow/timebox/timebox.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { waitFor, withVhost } from '../support/broker.ts';
import { brokersUp, clientFor } from '../support/brokers.ts';
import { askingNotifier, timeBoxReplica } from '../support/timeBoxReplica.ts';
import {
  APPROVER,
  REQUESTER,
  settled,
  TEST_ENV,
  type WorkflowFixture,
  workflowFixture,
} from '../support/workflow.ts';

const { up } = await brokersUp();
const BOX_MS = 3_000;

describe.each(up)('a time-boxed change set on $label', (broker) => {
  let client: LabClient;
  let fx: WorkflowFixture;
  const notifier = askingNotifier();
  const { asked } = notifier;
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const dir = mkdtempSync(join(tmpdir(), 'rmq-tbset-'));

  beforeAll(() => {
    client = clientFor(broker);
    fx = workflowFixture(client);
  });
  afterAll(async () => {
    await fx.close();
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const KEEP = {
    pattern: '^orders\\.audit$',
    applyTo: 'queues',
    priority: 10,
    definition: { 'max-length': 1000 },
  };
  const FALLBACK = { pattern: '^orders\\.', applyTo: 'queues', priority: 1, definition: { 'max-length': 5 } };

  // Every replica allows break-glass: the file's tests share one queue, so whichever takes a
  // break-glass set's deadline must be configured as the one that applied it.
  const replica = () =>
    timeBoxReplica(fx, client, notifier, log, { env: { breakGlass: { reviewWithinMs: 3_600_000 } } });

  /** The file: `keep` renamed `keep-audit`, `fallback` edited to max-length 7 (three changes). */
  function file(vhost: string): string {
    const path = join(dir, `${vhost}.json`);
    const { applyTo: a, ...keep } = KEEP;
    const { applyTo: b, ...fallback } = FALLBACK;
    writeFileSync(
      path,
      JSON.stringify({
        policies: [
          { vhost, name: 'keep-audit', 'apply-to': a, ...keep },
          { vhost, name: 'fallback', 'apply-to': b, ...fallback, definition: { 'max-length': 7 } },
        ],
      }),
    );
    return path;
  }

  const policiesOf = async (vhost: string) =>
    Object.fromEntries(
      (await client.listPolicies(vhost))
        .map((p: Policy) => [p.name, { pattern: p.pattern, priority: p.priority, definition: p.definition }])
        .sort(),
    );

  /** A fresh vhost with `keep` and `fallback`, the set filed --for 3s, approved and applied. */
  async function boxedSet(
    prefix: string,
    fn: (
      vhost: string,
      applied: ChangeRequest,
      wf: Awaited<ReturnType<typeof replica>>['wf'],
      before: Awaited<ReturnType<typeof policiesOf>>,
    ) => Promise<void>,
    options: { breakGlass?: true } = {},
  ) {
    await withVhost(
      async (vhost) => {
        await client.putQueue(vhost, 'orders.audit', { kind: 'classic' });
        await client.putPolicy('user', { vhost, name: 'keep', ...KEEP });
        await client.putPolicy('user', { vhost, name: 'fallback', ...FALLBACK });
        const before = await policiesOf(vhost);
        const bot = await replica();
        try {
          const outcome = await fileImport(
            { workflow: bot.wf, broker: () => ({ name: TEST_ENV, broker: client }) },
            {
              source: 'definitions.json',
              file: readFileSync(file(vhost), 'utf8'),
              reason: 'try the rename for a while',
              prune: true,
              timeBoxMs: BOX_MS,
              ...options,
            },
            REQUESTER,
            { channel: 'C0CI', threadTs: '1700000000.000200' },
          );
          if (outcome.status !== 'filed') throw new Error(JSON.stringify(outcome));
          expect(outcome.request.timeBoxMs).toBe(BOX_MS);
          expect(outcome.request.set?.steps).toHaveLength(3);
          if (!options.breakGlass)
            await bot.wf.decide(outcome.request.id, {
              kind: 'approve',
              user: APPROVER,
              reason: 'for a while',
            });
          const applied = await waitFor(
            async () => {
              const r = await bot.wf.get(outcome.request.id);
              return r?.state === 'applied' && r;
            },
            { deadlineMs: 30_000, what: 'the set applied' },
          );
          expect(Object.keys(await policiesOf(vhost)).sort()).toContain('keep-audit');
          await fn(vhost, applied, bot.wf, before);
        } finally {
          await bot.stop();
        }
      },
      { client, prefix },
    );
  }

  it.concurrent('at the deadline the whole set is reverted as one approved request, in the planned order, audited with the set', async () => {
    await boxedSet('tbs-revert', async (vhost, applied, wf, before) => {
      const revertId = revertRequestId(applied.id);
      const revert = await waitFor(
        async () => {
          const r = await wf.get(revertId);
          return r?.state === 'applied' && r;
        },
        { deadlineMs: BOX_MS + 30_000, what: 'the set reverted' },
      );
      expect(Date.parse(revert.appliedAt ?? '')).toBeGreaterThanOrEqual(
        Date.parse(applied.appliedAt ?? '') + BOX_MS,
      );
      expect(revert).toMatchObject({
        action: 'revert',
        revertOf: applied.auditId,
        requester: { user: REQUESTER },
        decision: { kind: 'approve', by: APPROVER },
        origin: applied.origin,
      });
      // Back as before: keep as it was, keep-audit gone, fallback at 5.
      expect(await policiesOf(vhost)).toEqual(before);
      expect(await client.getPolicy('user', vhost, 'keep-audit')).toBeNull();
      expect((await client.getPolicy('user', vhost, 'keep'))?.definition).toEqual(KEEP.definition);
      expect((await client.getPolicy('user', vhost, 'fallback'))?.definition).toEqual(FALLBACK.definition);

      const steps = applied.set?.steps ?? [];
      const records = (await new AuditTrail(fx.redis, fx.keyPrefix).list())
        .filter(isChange)
        .filter((r) => r.requestId === revertId);
      expect(records).toHaveLength(steps.length);
      const inOrder = [...records].sort((a, b) => (a.set?.index ?? 0) - (b.set?.index ?? 0));
      // Written in the planned order (the reverse of the set's here), each the revert of its step, with the set.
      expect(inOrder.map((r) => [r.policy, r.action, r.revertOf, r.set])).toEqual(
        steps
          .map((s, i) => [s.name, 'revert', `a-${applied.id}-${i}`])
          .reverse()
          .map(([name, action, of], j) => [name, action, of, { id: revertId, index: j, size: steps.length }]),
      );
      for (const r of inOrder) {
        const i = Number(r.revertOf?.split('-').at(-1));
        expect([r.before, r.after]).toEqual([steps[i]?.after, steps[i]?.before]);
        expect(r.approver).toMatchObject({ user: APPROVER });
      }
    });
  });

  it.concurrent('a break-glass set --for 3s is reverted whole at its deadline, under the same break-glass', async () => {
    await boxedSet(
      'tbs-glass',
      async (vhost, applied, wf, before) => {
        expect(applied.decision).toBeUndefined();
        const revert = await waitFor(
          async () => {
            const r = await wf.get(revertRequestId(applied.id));
            return r?.state === 'applied' && r;
          },
          { deadlineMs: BOX_MS + 30_000, what: 'the set reverted' },
        );
        expect(revert.breakGlass).toMatchObject({
          by: REQUESTER,
          reason: expect.stringMatching(/^applied by break-glass with r-.*time-boxed to 3s: try the rename/),
        });
        expect(await policiesOf(vhost)).toEqual(before);
        const records = (await new AuditTrail(fx.redis, fx.keyPrefix).list())
          .filter(isChange)
          .filter((r) => r.requestId === revert.id);
        expect(records).toHaveLength(3);
        for (const r of records) {
          expect(r.breakGlass).toMatchObject({ user: REQUESTER });
          expect(r.approver).toBeUndefined();
        }
      },
      { breakGlass: true },
    );
  });

  it.concurrent('a policy of the set changed outside the bot in between: nothing reverted; the set’s revert asks for a new approval, and restores it from what it is now', async () => {
    await boxedSet('tbs-ask', async (vhost, applied, wf, before) => {
      await client.putPolicy('user', {
        vhost,
        name: 'fallback',
        ...FALLBACK,
        definition: { 'max-length': 500 },
      });
      const ask = await waitFor(() => asked.find((a) => a.request.id === applied.id), {
        deadlineMs: BOX_MS + 30_000,
        what: 'the revert asked for',
      });
      expect(ask.why).toBe(
        'policy fallback of the set (vhost ' + vhost + ') was changed again since the change',
      );
      expect(ask.revert).toMatchObject({
        id: derivedRequestId('timebox-ask', applied.id),
        state: 'pending',
        action: 'revert',
        revertOf: applied.auditId,
      });
      expect(ask.revert.set?.steps.map((s) => s.name)).toEqual(
        applied.set?.steps.map((s) => s.name).reverse(),
      );
      expect(await wf.get(revertRequestId(applied.id))).toBeUndefined();
      expect(await client.getPolicy('user', vhost, 'keep-audit')).not.toBeNull();
      expect((await client.getPolicy('user', vhost, 'fallback'))?.definition).toEqual({ 'max-length': 500 });
      // Planned from the broker now: `fallback` from the 500 it holds, so that, approved, it applies
      // (from the 7 the set left, its apply would find the policy changed and go stale).
      const fallback = ask.revert.set?.steps.find((s) => s.name === 'fallback') as PolicySetStep | undefined;
      expect(fallback?.before?.definition).toEqual({
        'max-length': 500,
      });
      await wf.decide(ask.revert.id, { kind: 'approve', user: APPROVER, reason: 'back as before' });
      expect((await settled(wf, ask.revert.id)).state).toBe('applied');
      expect(await policiesOf(vhost)).toEqual(before);
    });
    // The box, the ask, then an approval and a whole apply: more than one test's minute on a loaded machine.
  }, 120_000);
});
