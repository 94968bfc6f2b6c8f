import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/bot/health.ts';
import { brokerCredentials, brokerUrl, uniqueName, waitFor } from '../support/broker.ts';
import { commandForm, type Harness, mentionEnvelope, signed, startHarness } from '../support/harness.ts';

/**
 * What operators see: GET /healthz and /readyz (broker and Redis reachability, from the last check), GET /metrics (requests by
 * command and outcome, latencies, broker call errors), and logs that never hold a secret.
 */

/** A broker user of its own, so its password is a string that appears nowhere else. */
const user = uniqueName('slackuser');
const password = `pw-${randomBytes(12).toString('hex')}`;

async function management(method: 'PUT' | 'DELETE', path: string, body?: unknown): Promise<void> {
  const { user: admin, password: adminPassword } = brokerCredentials();
  const res = await fetch(new URL(path, brokerUrl()), {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`${admin}:${adminPassword}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok && !(method === 'DELETE' && res.status === 404))
    throw new Error(`${method} ${path}: ${res.status}`);
}

let h: Harness;
let healthy: Harness;

beforeAll(async () => {
  h = await startHarness({
    withDownEnvironment: true,
    logLevel: 'debug',
    credentials: async (vhost) => {
      await management('PUT', `/api/users/${encodeURIComponent(user)}`, { password, tags: 'administrator' });
      await management('PUT', `/api/permissions/${encodeURIComponent(vhost)}/${encodeURIComponent(user)}`, {
        configure: '.*',
        write: '.*',
        read: '.*',
      });
      return { user, password };
    },
  });
  healthy = await startHarness({ lab: false });
});
afterAll(async () => {
  await Promise.allSettled([h?.stop(), healthy?.stop()]);
  await management('DELETE', `/api/users/${encodeURIComponent(user)}`);
});

/** The probe's document once its background check has been round every part. */
async function checked(
  url: string,
  path = '/healthz',
): Promise<{ status: number; body: Readiness; type: string | null }> {
  return waitFor(
    async () => {
      const res = await fetch(`${url}${path}`);
      const body = (await res.json()) as Readiness;
      const parts = [body.redis, ...Object.values(body.brokers)];
      return (
        parts.every((p) => p.state !== 'unknown') && {
          status: res.status,
          body,
          type: res.headers.get('content-type'),
        }
      );
    },
    { what: `${path} to have checked every part` },
  );
}

describe('GET /healthz, /readyz', () => {
  it('is 200 with every broker and Redis reachable', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const { status, body, type } = await checked(healthy.url, path);
      expect(status).toBe(200);
      expect(type).toBe('application/json');
      expect(body).toMatchObject({ ok: true, redis: { ok: true }, brokers: { lab: { ok: true } } });
    }
  });

  it('names the broker that cannot be reached, and stays ready (Redis answers)', async () => {
    const { status, body } = await checked(h.url);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ok: true,
      redis: { ok: true },
      brokers: { lab: { ok: true }, down: { ok: false, state: 'failing', error: 'unreachable' } },
    });
  });

  it('needs no signature, and POST /slack/events still does', async () => {
    for (const path of ['/healthz', '/readyz', '/livez'])
      expect((await fetch(`${h.url}${path}`)).status).not.toBe(401);
    expect((await fetch(`${h.url}/slack/events`, { method: 'POST', body: 'x' })).status).toBe(401);
  });
});

describe('GET /metrics', () => {
  it('counts requests by command and outcome, their latency, and broker call errors', async () => {
    for (const text of [
      `which orders.audit --vhost ${h.vhost}`,
      `which orders.audit --env down --vhost ${h.vhost}`,
      'which',
      'nonsense',
    ]) {
      const { responseUrl } = await h.command(text);
      await h.answerTo(responseUrl);
    }
    const threadTs = '1700000000.009000';
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.events --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    await h.slack.waitForCall((c) => c.args.thread_ts === threadTs);

    const res = await fetch(`${h.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const value = (line: RegExp) =>
      Number(new RegExp(`^${line.source} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

    expect(
      value(/rmq_slack_requests_total\{command="which",outcome="answered",via="command"\}/),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(/rmq_slack_requests_total\{command="which",outcome="not-asked",via="command"\}/),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(/rmq_slack_requests_total\{command="which",outcome="refused",via="command"\}/),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(/rmq_slack_requests_total\{command="unknown",outcome="usage",via="command"\}/),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(/rmq_slack_requests_total\{command="which",outcome="answered",via="mention"\}/),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(/rmq_slack_request_duration_seconds_count\{command="which",via="command"\}/),
    ).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(
      /^rmq_slack_request_duration_seconds_bucket\{le="0\.5",command="which",via="command"\} \d+$/m,
    );
    expect(value(/rmq_broker_calls_total\{env="lab",method="GET"\}/)).toBeGreaterThanOrEqual(4);
    expect(
      value(/rmq_broker_call_errors_total\{env="down",method="GET",code="unreachable"\}/),
    ).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^rmq_broker_call_duration_seconds_count\{env="lab",method="GET"\} \d+$/m);
    // What a user typed never becomes a label.
    expect(text).not.toContain('nonsense');
  });
});

describe('the logs of a full request', () => {
  it('hold no signing secret, bot token or broker password', async () => {
    const { responseUrl } = await h.command(`which orders.audit --vhost ${h.vhost}`);
    await h.answerTo(responseUrl);
    const threadTs = '1700000000.009100';
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.audit --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    await h.slack.waitForCall((c) => c.args.thread_ts === threadTs);
    await h.post(
      '/slack/events',
      signed(
        'wrong-secret',
        commandForm({ text: 'which x', responseUrl: h.slack.responseUrl() }),
        'application/x-www-form-urlencoded',
      ),
    );
    await fetch(`${h.url}/healthz`);

    const logs = h.logs.join('');
    // The capture is not empty: the request, Bolt's Web API calls and the refused signature are in it.
    expect(logs).toContain('which answered');
    expect(logs).toContain('auth.test');
    expect(logs).toMatch(/verify|signature/i);
    for (const secret of [h.signingSecret, h.slack.botToken, h.brokerPassword]) {
      expect(secret.length).toBeGreaterThan(10);
      expect(logs).not.toContain(secret);
    }
    expect(logs).not.toContain(Buffer.from(`${user}:${password}`).toString('base64'));
  });
});
