import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { brokerUrl } from '../support/broker.ts';
import { type Harness, mentionEnvelope, renderedText, startHarness } from '../support/harness.ts';

/**
 * Slack waits three seconds for the acknowledgement. With the broker made slow (a proxy that
 * holds every call longer than that), the command is still acknowledged at once and the answer
 * arrives later through the response URL. A broker that never answers costs one question's
 * budget (RMQ_TIMEOUT), retries included, not a retry loop.
 */

const SLOWER_THAN_SLACK_WAITS_MS = 4000;
let h: Harness;

beforeAll(async () => {
  // Long enough for the slow broker's answer, short enough that a silent one is given up quickly.
  h = await startHarness({ brokerTimeouts: { headersMs: 7000, bodyMs: 7000 } });
});
afterAll(async () => {
  await h?.stop();
});
afterEach(() => {
  h.proxy.setFallback({ kind: 'proxy', target: brokerUrl() });
  expect(h.slack.rejections()).toEqual([]);
});

describe('a slow broker', () => {
  it('a command is acknowledged before the broker answers; the answer follows at the response URL', async () => {
    h.proxy.setFallback({ kind: 'proxy', target: brokerUrl(), delayMs: SLOWER_THAN_SLACK_WAITS_MS });
    const callsBefore = h.proxy.requests.length;

    const { response, responseUrl } = await h.command(`which orders.audit --vhost ${h.vhost}`);
    const ackedAt = Date.now();
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    // Acknowledged with nothing posted yet: the answer cannot exist before the broker gave it.
    expect(h.slack.responsesTo(responseUrl)).toHaveLength(0);

    const answer = await h.answerTo(responseUrl);
    expect(answer.at).toBeGreaterThanOrEqual(ackedAt);
    expect(renderedText(answer.args)).toMatch(/\*In force:\* `audit-retention`/);
    // The broker was asked on this path, through the slow proxy.
    expect(h.proxy.requests.length).toBeGreaterThan(callsBefore);
  });

  it('a mention is acknowledged before the broker answers; the answer follows in the thread', async () => {
    h.proxy.setFallback({ kind: 'proxy', target: brokerUrl(), delayMs: SLOWER_THAN_SLACK_WAITS_MS });
    const threadTs = '1700000000.003000';
    const res = await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.processing --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    const ackedAt = Date.now();
    expect(res.status).toBe(200);
    expect(h.slack.calls.some((c) => c.args.thread_ts === threadTs)).toBe(false);
    const post = await h.slack.waitForCall(
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs,
    );
    expect(post.at).toBeGreaterThanOrEqual(ackedAt);
    expect(renderedText(post.args)).toMatch(/\*In force:\* `audit-fallback`/);
  });

  it('a broker that never answers costs one budget, and the answer says so', async () => {
    h.proxy.setFallback({ kind: 'hang' });
    const name = 'orders.silent';
    const { response, responseUrl } = await h.command(`which ${name} --vhost ${h.vhost}`);
    expect(response.status).toBe(200);
    const answer = await h.answerTo(responseUrl);
    expect(renderedText(answer.args)).toMatch(/Could not ask the broker.*did not answer in time/);
    // The 7 s header timeout, then a retry cut short at the question's 10 s budget: never a third.
    expect(h.proxy.requests.filter((r) => r.url.includes(name)).length).toBeLessThanOrEqual(2);
  });
});

describe('stopping (SIGTERM)', () => {
  it('lets an answer under way reach Slack before stop() resolves, and takes no new requests', async () => {
    h.proxy.setFallback({ kind: 'proxy', target: brokerUrl(), delayMs: 1500 });
    const { response, responseUrl } = await h.command(`which orders.audit --vhost ${h.vhost}`);
    expect(response.status).toBe(200);
    expect(h.slack.responsesTo(responseUrl)).toHaveLength(0);
    await h.bot.stop(15_000);
    expect(h.slack.responsesTo(responseUrl)).toHaveLength(1);
    await expect(h.command('help')).rejects.toThrow();
  });
});
