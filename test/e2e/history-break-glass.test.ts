/**
 * `history` through the package's `bin/rmq.js` on a change applied by break-glass after one of
 * the two approvals it needed (issue 28, item 10): the record made as the real flow makes it
 * (filed, approved once, broken by its requester, applied by the apply job), read back by the
 * built CLI from a Redis of this suite's own (the compiled CLI reads the production prefix `rmq:`).
 * It says applied by break-glass, by whom and why, and lists the one approval as given before
 * break-glass, never as "approved by"; Slack's `history` says the same.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { history, parseHistory } from '../../src/commands/history/history.ts';
import { historyView } from '../../src/slack/views/history.ts';
import { adminClient, brokerCredentials, brokerUrl, uniqueName } from '../support/broker.ts';
import { type Built, built } from '../support/built.ts';
import { runBuiltRmq } from '../support/cli.ts';
import { type RedisServer, startRedisServer } from '../support/redisServer.ts';
import { APPROVER, REQUESTER, settled, type WorkflowFixture, workflowFixture } from '../support/workflow.ts';

const vhost = uniqueName('history-bg');
const client = adminClient();
const cwd = mkdtempSync(join(tmpdir(), 'rmq-history-bg-'));
let pkg: Built;
let redis: RedisServer;
let fx: WorkflowFixture;

beforeAll(async () => {
  [pkg, redis] = await Promise.all([built(), startRedisServer()]);
  await client.putVhost(vhost);
  fx = workflowFixture(client, { redisUrl: redis.url, keyPrefix: 'rmq' });
});

afterAll(async () => {
  await fx?.close();
  await client.deleteVhost(vhost);
  await client.close();
  await redis?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

const BECAUSE = 'INC-9: the second approver is asleep';

describe('history of a break-glass change after one of two approvals (issue 28, item 10)', () => {
  it('bin/rmq.js history says applied by break-glass, by whom and why, and the one approval as such', async () => {
    await fx.worker(client);
    const wf = fx.workflow({ env: { approvalsRequired: 2, breakGlass: { reviewWithinMs: 3_600_000 } } });
    const { request } = await wf.file({
      vhost,
      layer: 'user',
      action: 'create',
      policy: 'cap',
      fields: { pattern: '^x', definition: { 'max-length': 3 } },
      requester: { user: REQUESTER, reason: 'incident 9' },
      origin: { channel: 'C0INCIDENT' },
    });
    expect(
      (await wf.decide(request.id, { kind: 'approve', user: APPROVER, reason: 'looks right' })).outcome,
    ).toBe('counted');
    expect((await wf.breakGlass(request.id, { user: REQUESTER, reason: BECAUSE })).outcome).toBe('decided');
    expect((await settled(wf, request.id)).state).toBe('applied');

    const { user, password } = brokerCredentials();
    const run = await runBuiltRmq(
      pkg.bin,
      ['history', 'cap', '--vhost', vhost],
      { RMQ_URL: brokerUrl(), RMQ_USER: user, RMQ_PASSWORD: password, REDIS_URL: redis.url },
      cwd,
    );
    expect(run.code, run.err).toBe(0);
    expect(run.out).not.toContain('approved by');
    expect(run.out).toContain(
      `BREAK GLASS: applied by break-glass by ${REQUESTER}, with only 1 approval (fewer than needed): "${BECAUSE}"`,
    );
    expect(run.out).toContain(
      `approval given before break-glass (not enough to apply) by ${APPROVER}: "looks right"`,
    );

    const shown = await history(parseHistory(['cap', '--vhost', vhost]), new AuditTrail(fx.redis, 'rmq'));
    const slack = JSON.stringify(historyView(shown));
    expect(slack).not.toContain('approved by');
    expect(slack).toContain(
      `applied by break-glass by <@${REQUESTER}>, with only 1 approval (fewer than needed)`,
    );
    expect(slack).toContain(`approval given before break-glass (not enough to apply) by <@${APPROVER}>`);
  });
});
