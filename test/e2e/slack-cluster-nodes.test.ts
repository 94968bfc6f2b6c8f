/**
 * The bot as main.ts composes it (signed Slack requests, the fake Web API, the real broker and
 * Redis) with environment `lab` given as a cluster's nodes whose first is down (nothing listens
 * there): `which` answers through the second node; a change is filed, approved and applied once
 * through it, and audited once.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { isChange } from '../../src/audit/types.ts';
import { adminClient, waitFor } from '../support/broker.ts';
import { APPROVER, type Harness, renderedText, startHarness } from '../support/harness.ts';
import { requestFlow } from '../support/requestFlow.ts';

let h: Harness;
let flow: ReturnType<typeof requestFlow>;
const admin = adminClient();

beforeAll(async () => {
  h = await startHarness({
    lab: true,
    changes: true,
    labFirstNodeDown: true,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'warn',
  });
  flow = requestFlow(h);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await admin.close();
});

describe("environment lab's first node down", () => {
  it('which answers through the second node', async () => {
    const { responseUrl } = await h.command(`which orders.audit --vhost ${h.vhost}`);
    const text = renderedText((await h.answerTo(responseUrl)).args);
    expect(text).toContain('orders.audit');
    expect(text).toMatch(/In force/);
    expect(h.proxy.requests.length).toBeGreaterThan(0);
  });

  it('a change filed, approved and applied once through the second node, audited once', async () => {
    const mark = h.slack.calls.length;
    const { responseUrl } = await h.command(
      `create cluster-cap --pattern ^billing\\. --definition {"max-length":50} --vhost ${h.vhost} --reason INC-27`,
      { userId: 'U0REQUESTER' },
    );
    expect(renderedText((await h.answerTo(responseUrl)).args)).toMatch(/is filed by <@U0REQUESTER>/);
    const request = await flow.approvalMessage(mark);
    expect(await flow.decide(APPROVER, 'approve', request, 'ok')).toEqual({ status: 200, body: '' });
    const trail = new AuditTrail(h.redis as never, h.keyPrefix);
    const records = await waitFor(
      async () => {
        const r = (await trail.list({ vhost: h.vhost })).filter(isChange);
        return r.length > 0 && r;
      },
      { deadlineMs: 60_000, what: 'the audit record of the apply' },
    );
    expect(records.map((r) => [r.action, r.policy])).toEqual([['create', 'cluster-cap']]);
    expect(await admin.getPolicy('user', h.vhost, 'cluster-cap')).toMatchObject({
      definition: { 'max-length': 50 },
    });
    const writes = h.proxy.requests.filter((q) => q.method === 'PUT' && q.url.includes('/cluster-cap'));
    expect(writes).toHaveLength(1);
  });
});
