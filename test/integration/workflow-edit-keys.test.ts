/**
 * `edit POLICY --set KEY=JSON --unset KEY` on the real Redis and broker: one key changed, one
 * removed, the others kept as the broker has them; and the stale guard kept: a policy changed
 * after the request is not overwritten with the patch applied to what was read before.
 */
import { describe, expect, it } from 'vitest';
import { parsePreview } from '../../src/commands/preview/preview.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import type { FileInput } from '../../src/workflow/types.ts';
import { withVhost } from '../support/broker.ts';
import { brokersUp } from '../support/brokers.ts';
import { APPROVER, REQUESTER, settled, type WorkflowFixture, workflowHooks } from '../support/workflow.ts';

let admin: LabClient;
let fx: WorkflowFixture;

const { up } = await brokersUp();

const POLICY = {
  name: 'limits',
  pattern: '^orders\\.',
  applyTo: 'queues',
  priority: 3,
  definition: { 'max-length': 1000, 'message-ttl': 60000, overflow: 'reject-publish' },
} as const;

describe.each(up)('edit --set/--unset on $label', (broker) => {
  workflowHooks(broker, (a, f) => {
    admin = a;
    fx = f;
  });

  const editOf = (vhost: string, words: string[]): FileInput => {
    const parsed = parsePreview(['edit', POLICY.name, ...words, '--vhost', vhost]);
    return {
      vhost,
      layer: 'user',
      action: 'edit',
      policy: POLICY.name,
      fields: parsed.fields,
      requester: { user: REQUESTER, reason: 'cap lower' },
      origin: { channel: 'C0INCIDENT' },
    };
  };

  it('one key set, one removed, the rest as the broker has them; preview and request agree', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putPolicy('user', { vhost, ...POLICY });
        await fx.worker(admin);
        const wf = fx.workflow();
        const filed = await wf.file(
          editOf(vhost, [
            '--set',
            'max-length=50',
            '--set',
            'dead-letter-exchange="dlx"',
            '--unset',
            'message-ttl',
          ]),
        );
        const expected = { 'max-length': 50, overflow: 'reject-publish', 'dead-letter-exchange': 'dlx' };
        expect(filed.request.before?.definition).toEqual(POLICY.definition);
        expect(filed.request.after).toEqual({
          pattern: POLICY.pattern,
          applyTo: POLICY.applyTo,
          priority: POLICY.priority,
          definition: expected,
        });
        await wf.decide(filed.request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        expect((await settled(wf, filed.request.id)).state).toBe('applied');
        expect((await admin.getPolicy('user', vhost, POLICY.name))?.definition).toEqual(expected);
      },
      { client: admin },
    );
  });

  it('the stale guard is kept: the policy changed after the request is left as it was changed', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putPolicy('user', { vhost, ...POLICY });
        await fx.worker(admin);
        const wf = fx.workflow();
        const { request } = await wf.file(editOf(vhost, ['--set', 'max-length=50']));
        const outside = { ...POLICY.definition, 'max-length': 7 };
        await admin.putPolicy('user', { vhost, ...POLICY, definition: outside });
        await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'ok' });
        expect((await settled(wf, request.id)).state).toBe('stale');
        expect((await admin.getPolicy('user', vhost, POLICY.name))?.definition).toEqual(outside);
      },
      { client: admin },
    );
  });

  it('--unset of a key the policy does not have is refused, nothing filed', async () => {
    await withVhost(
      async (vhost) => {
        await admin.putPolicy('user', { vhost, ...POLICY });
        const wf = fx.workflow();
        await expect(wf.file(editOf(vhost, ['--unset', 'expires']))).rejects.toMatchObject({
          refusal: { code: 'preview-refused', refusals: [expect.stringContaining('--unset expires')] },
        });
        expect(await wf.listOpen()).toEqual([]);
      },
      { client: admin },
    );
  });
});
