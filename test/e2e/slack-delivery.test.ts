import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/broker.ts';
import { type Harness, mentionEnvelope, renderedText, signed, startHarness } from '../support/harness.ts';

/**
 * The running app answering through a Slack that fails (429 with Retry-After, 5xx, a response
 * URL that never answers): the answer is retried within the delivery budget and arrives; when it
 * cannot, it is counted `lost` (never `answered`) and the asker is told ephemerally. Buttons and
 * forms no handler claims are acknowledged at once.
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ delivery: { budgetMs: 2_500, attemptMs: 800, retryBaseMs: 50 } });
});
afterAll(async () => {
  await h?.stop();
});
afterEach(() => {
  h.slack.clearFaults();
  expect(h.slack.rejections()).toEqual([]);
});

async function requests(outcome: string, via: string): Promise<number> {
  const m = await h.metrics.requests.get();
  return m.values
    .filter((v) => v.labels.outcome === outcome && v.labels.via === via)
    .reduce((n, v) => n + v.value, 0);
}

describe('a slash command', () => {
  it('answered despite a 500 and a 429 at its response URL', async () => {
    h.slack.faultNext('response_url', { status: 500 }, { status: 429, retryAfter: 1 });
    const before = await requests('answered', 'command');
    const { responseUrl } = await h.command(`which orders.audit --vhost ${h.vhost}`);
    const answer = await h.answerTo(responseUrl);
    expect(renderedText(answer.args)).toMatch(/\*In force:\* `audit-retention`/);
    const path = new URL(responseUrl).pathname;
    expect(h.slack.calls.filter((c) => c.path === path).map((c) => c.error ?? 'ok')).toEqual([
      'http-500',
      'ratelimited',
      'ok',
    ]);
    await waitFor(async () => (await requests('answered', 'command')) === before + 1, {
      what: 'the answer counted',
    });
  });

  it('whose response URL keeps failing is counted lost, and the asker is told by an ephemeral message', async () => {
    h.slack.faultNext('response_url', ...Array.from({ length: 100 }, () => ({ status: 503 as const })));
    const answeredBefore = await requests('answered', 'command');
    const { response } = await h.command(`which orders.audit --vhost ${h.vhost}`);
    expect(response.status).toBe(200);
    const told = await h.slack.waitForCall(
      (c) => c.method === 'chat.postEphemeral' && c.args.user === 'U0ONCALL',
      {
        what: 'the asker told',
      },
    );
    expect(told.ok).toBe(true);
    expect(told.args.channel).toBe('C0INCIDENT');
    expect(renderedText(told.args)).toMatch(/could not be delivered: Slack answered `http-503`/);
    await waitFor(async () => (await requests('lost', 'command')) >= 1, { what: 'the answer counted lost' });
    expect(await requests('answered', 'command')).toBe(answeredBefore);
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(/rmq_slack_requests_total\{command="which",outcome="lost",via="command"\} 1/);
  });
});

describe('a mention', () => {
  it('answered in its thread after chat.postMessage was rate limited (Retry-After: 1)', async () => {
    const threadTs = '1700000000.900001';
    h.slack.faultNext('chat.postMessage', { status: 429, retryAfter: 1 });
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.audit --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    const post = await h.slack.waitForCall(
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs && c.ok,
    );
    expect(renderedText(post.args)).toMatch(/\*In force:\* `audit-retention`/);
  });
});

describe('an interaction no handler claims', () => {
  it('is acknowledged at once with 200 and logged at info', async () => {
    const payload = {
      type: 'block_actions',
      team: { id: 'T0TEST', domain: 'test' },
      user: { id: 'U0ONCALL', username: 'oncall', team_id: 'T0TEST' },
      api_app_id: 'A0RMQ',
      token: 'deprecated-verification-token',
      trigger_id: '1.2.3',
      container: { type: 'message', message_ts: '1.2', channel_id: 'C0INCIDENT', is_ephemeral: false },
      channel: { id: 'C0INCIDENT', name: 'incident-42' },
      response_url: h.slack.responseUrl(),
      actions: [
        {
          type: 'button',
          action_id: 'no-such-button',
          block_id: 'b1',
          value: 'x',
          action_ts: '1.3',
          text: { type: 'plain_text', text: 'X' },
        },
      ],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const res = await h.post(
      '/slack/events',
      signed(h.signingSecret, body, 'application/x-www-form-urlencoded'),
    );
    expect(res.status).toBe(200);
    await waitFor(
      () =>
        h.logs
          .map((l) => JSON.parse(l) as { level: number; msg: string; id?: string })
          .find(
            (l) =>
              l.msg.startsWith('interaction nobody handles') && l.id === 'no-such-button' && l.level === 30,
          ),
      { what: 'the info log line' },
    );
  });
});
