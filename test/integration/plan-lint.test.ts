/**
 * `plan`'s findings (issue 29 item 2): beside the impact, what `lint` would find in the end state
 * and does not find now. Proven on 3.10.8, 4.0.5 and 4.3.6: the file's policies are then written
 * to the broker and the vhost linted again; the plan's findings are exactly what that lint finds
 * and the lint before did not (a finding already there, an unanchored pattern on the broker, is
 * not new), and the broker reports the policy the new shadowing names on the object.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LintResult, lint } from '../../src/commands/lint/lint.ts';
import { planJson } from '../../src/commands/plan/plan.ts';
import { readDefinitions } from '../../src/definitions/read.ts';
import { type PlanResult, planFile } from '../../src/plan/plan.ts';
import { findingId } from '../../src/policy/lint/lintDigest.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { planText } from '../../src/terminal/plan.ts';
import { uniqueName } from '../support/broker.ts';
import { brokersUp, clientFor, type TestBroker } from '../support/brokers.ts';

const { up } = await brokersUp();

const filePolicies = (vhost: string) => [
  // Beside billing-a at its priority: a tie on billing.invoices.
  {
    vhost,
    name: 'billing-b',
    pattern: '^billing\\.',
    'apply-to': 'queues',
    priority: 5,
    definition: { 'max-length': 1000 },
  },
  // Unanchored, and above old-cap on retry.orders.dlq: old-cap governs nothing any more.
  {
    vhost,
    name: 'orders-cap',
    pattern: 'orders',
    'apply-to': 'queues',
    priority: 2,
    definition: { 'max-length': 100 },
  },
];

describe.each(up.map((b) => [b.label, b] as const))(
  'plan shows the new findings on %s',
  (_label, broker: TestBroker) => {
    const vhost = uniqueName('plan-lint');
    let client: LabClient;
    let before: LintResult;
    let planned: PlanResult;

    beforeAll(async () => {
      client = clientFor(broker);
      await client.putVhost(vhost);
      await client.putQueue(vhost, 'billing.invoices', { kind: 'classic' });
      await client.putQueue(vhost, 'retry.orders.dlq', { kind: 'classic' });
      await client.putQueue(vhost, 'orders.q', { kind: 'classic' });
      const put = (name: string, pattern: string, priority: number, definition: Record<string, unknown>) =>
        client.putPolicy('user', { vhost, name, pattern, applyTo: 'queues', priority, definition });
      await put('billing-a', '^billing\\.', 5, { 'max-length': 500 });
      // Already a finding now: unanchored, it catches retry.orders.dlq.
      await put('old-cap', 'dlq', 1, { 'max-length': 10 });
      before = await lint({ vhost }, client, { env: 'test' });
      const read = readDefinitions(JSON.stringify({ policies: filePolicies(vhost) }));
      if (!read.ok) throw new Error(read.problem);
      planned = await planFile(read.file, client);
    }, 60_000);

    afterAll(async () => {
      await client.deleteVhost(vhost);
      await client.close();
    });

    it('the end state’s findings that are not there now, beside the impact, in --json and the text', () => {
      expect(before.findings.map((f) => [f.kind, f.policy])).toEqual([['unanchored', 'old-cap']]);
      expect(planned.status).toBe('planned');
      if (planned.status !== 'planned') return;
      expect(planned.plan.findings.map((f) => [f.kind, f.policy, f.vhost, f.objects])).toEqual([
        ['tie', 'billing-a', vhost, ['billing.invoices']],
        ['unanchored', 'orders-cap', vhost, ['retry.orders.dlq']],
        ['shadowed', 'old-cap', vhost, ['retry.orders.dlq']],
      ]);
      const json = planJson(planned) as { impact: unknown; findings: { kind: string; why: string }[] };
      expect(json.impact).toBeDefined();
      expect(json.findings.map((f) => f.kind)).toEqual(['tie', 'unanchored', 'shadowed']);
      expect(json.findings[0]?.why).toMatch(/^Policies "billing-a" and "billing-b" share priority 5/);
      const text = planText(planned);
      const loses = text.indexOf('What the set loses:');
      const found = text.indexOf('What lint would find in the end state and does not find now (3):');
      expect(loses).toBeGreaterThanOrEqual(0);
      expect(found).toBeGreaterThan(loses);
      expect(text).toContain('WARNING  unanchored');
    });

    it('written to the broker: lint then finds exactly those beside what it found before; the broker agrees', async () => {
      if (planned.status !== 'planned') throw new Error('not planned');
      for (const p of filePolicies(vhost)) {
        await client.putPolicy('user', {
          vhost,
          name: p.name,
          pattern: p.pattern,
          applyTo: p['apply-to'],
          priority: p.priority,
          definition: p.definition,
        });
      }
      const after = await lint({ vhost }, client, { env: 'test' });
      const was = new Set(before.findings.map(findingId));
      expect(after.findings.filter((f) => !was.has(findingId(f))).map(findingId)).toEqual(
        planned.plan.findings.map(findingId),
      );
      // shadowed: the broker reports orders-cap, not old-cap, on the one object old-cap matches.
      expect(await client.queuePolicyFromRecord(vhost, 'retry.orders.dlq')).toBe('orders-cap');
      // tie: both match billing.invoices at priority 5; the broker reports one of them.
      expect(['billing-a', 'billing-b']).toContain(
        await client.queuePolicyFromRecord(vhost, 'billing.invoices'),
      );
    });

    it('a file that changes nothing: no findings claimed, however many there are now', async () => {
      const read = readDefinitions(JSON.stringify({ policies: filePolicies(vhost) }));
      if (!read.ok) throw new Error(read.problem);
      const again = await planFile(read.file, client);
      expect(again.status === 'planned' && again.plan.findings).toEqual([]);
    });
  },
);
