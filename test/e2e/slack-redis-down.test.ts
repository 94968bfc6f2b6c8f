import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/broker.ts';
import { type Harness, mentionEnvelope, renderedText, startHarness } from '../support/harness.ts';

/**
 * Redis down (nothing listens where REDIS_URL points): reading needs no Redis, so questions are
 * still answered — at worst twice, never not at all — and /healthz says what is down.
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ redisUrl: 'redis://127.0.0.1:1' });
});
afterAll(async () => {
  await h?.stop();
});

describe('with Redis down', () => {
  it('a mention is still answered in its thread', async () => {
    const threadTs = '1700000999.000001';
    const res = await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.audit --vhost ${h.vhost}`,
        channel: 'C0INCIDENT',
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    expect(res.status).toBe(200);
    const post = await h.slack.waitForCall(
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs,
    );
    expect(renderedText(post.args)).toMatch(/\*In force:\* `audit-retention`/);
    expect(h.logs.join('\n')).toMatch(/event dedupe unavailable; answering anyway/);
    expect(h.slack.rejections()).toEqual([]);
  });

  it('a slash command is still answered', async () => {
    const { response, responseUrl } = await h.command(`which orders.events --vhost ${h.vhost}`);
    expect(response.status).toBe(200);
    const answer = await h.answerTo(responseUrl);
    expect(renderedText(answer.args)).toMatch(/Nothing governs this object/i);
  });

  it('/healthz is 503 and names Redis', async () => {
    // Answered from the background check: once its first round has been to Redis.
    const body = await waitFor(
      async () => {
        const res = await fetch(`${h.url}/healthz`);
        const doc = (await res.json()) as { redis: { state: string; ok: boolean; error?: string } };
        expect(res.status).toBe(503);
        return doc.redis.state === 'failing' && doc;
      },
      { what: '/healthz to have checked Redis' },
    );
    expect(body.redis.ok).toBe(false);
    // Named, not a bare "error".
    expect(body.redis.error).toBe('unreachable');
  });
});
