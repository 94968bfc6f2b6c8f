import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/broker.ts';
import type { RecordedCall } from '../support/fakeSlack.ts';
import { type Harness, mentionEnvelope, renderedText, startHarness } from '../support/harness.ts';

/**
 * `@rmq which …` in a channel is answered there, in a thread in that thread; an event Slack
 * delivers again is answered once (also across instances); the bot's own messages are ignored.
 */

let h: Harness;
let thread = 0;
/** A thread of its own for each test, so its posts are told apart from the others'. */
const newThread = () => `1700000000.${String(++thread).padStart(6, '0')}`;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});
afterEach(() => {
  expect(h.slack.rejections()).toEqual([]);
});

const postsIn = (threadTs: string): RecordedCall[] =>
  h.slack.calls.filter(
    (c) => c.kind === 'api' && c.method.startsWith('chat.post') && c.args.thread_ts === threadTs,
  );

function duplicates(metrics = h.metrics): Promise<number> {
  return metrics.duplicateEvents.get().then((m) => m.values[0]?.value ?? 0);
}

describe('a mention', () => {
  it('inside a thread is answered in that thread', async () => {
    const threadTs = newThread();
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
    expect(post.args.channel).toBe('C0INCIDENT');
    expect(post.headers.authorization).toBe(`Bearer ${h.slack.botToken}`);
    expect(renderedText(post.args)).toMatch(/\*In force:\* `audit-retention`/);
  });

  it('in a channel is answered in the channel, not in a new thread', async () => {
    const eventId = 'EvCHANNEL0001';
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.events --vhost ${h.vhost}`,
        channel: 'C0OPS',
        eventId,
        botUserId: h.slack.botUserId,
      }),
    );
    const post = await h.slack.waitForCall(
      (c) => c.method === 'chat.postMessage' && c.args.channel === 'C0OPS',
    );
    expect(post.args.thread_ts).toBeUndefined();
    expect(renderedText(post.args)).toMatch(/Nothing governs this object/);
  });

  it('with words the bot does not know gets usage, shown to the asker only, in the thread', async () => {
    const threadTs = newThread();
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> what is going on`,
        threadTs,
        user: 'U0CURIOUS',
        botUserId: h.slack.botUserId,
      }),
    );
    const post = await h.slack.waitForCall(
      (c) => c.method === 'chat.postEphemeral' && c.args.thread_ts === threadTs,
    );
    expect(post.args.user).toBe('U0CURIOUS');
    expect(renderedText(post.args)).toMatch(/I don't know the command `what`/);
  });
});

describe('the same event delivered twice', () => {
  it('is answered once when Slack retries it', async () => {
    const threadTs = newThread();
    const envelope = mentionEnvelope({
      text: `<@${h.slack.botUserId}> which billing.invoices --vhost ${h.vhost}`,
      threadTs,
      botUserId: h.slack.botUserId,
    });
    const before = await duplicates();
    expect((await h.mention(envelope)).status).toBe(200);
    await h.slack.waitForCall((c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs);
    const retry = await h.mention(envelope, {
      'x-slack-retry-num': '1',
      'x-slack-retry-reason': 'http_timeout',
    });
    expect(retry.status).toBe(200);
    await waitFor(async () => (await duplicates()) === before + 1, {
      deadlineMs: 10_000,
      intervalMs: 25,
      what: 'the retry to be recognised',
    });
    expect(postsIn(threadTs)).toHaveLength(1);
  });

  it('is answered once when both deliveries arrive together', async () => {
    const threadTs = newThread();
    const envelope = mentionEnvelope({
      text: `<@${h.slack.botUserId}> which orders.audit --vhost ${h.vhost}`,
      threadTs,
      botUserId: h.slack.botUserId,
    });
    const before = await duplicates();
    await Promise.all([h.mention(envelope), h.mention(envelope, { 'x-slack-retry-num': '1' })]);
    await h.slack.waitForCall((c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs);
    await waitFor(async () => (await duplicates()) === before + 1, {
      deadlineMs: 10_000,
      intervalMs: 25,
      what: 'the second delivery to be recognised',
    });
    expect(postsIn(threadTs)).toHaveLength(1);
  });

  it('is answered once when the deliveries reach two instances (Redis is shared)', async () => {
    const twin = await h.twin();
    try {
      const threadTs = newThread();
      const envelope = mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.audit --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      });
      const [here, there] = [await duplicates(), await duplicates(twin.metrics)];
      await Promise.all([h.mention(envelope), h.mention(envelope, { 'x-slack-retry-num': '1' }, twin.url)]);
      await h.slack.waitForCall((c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs);
      await waitFor(
        async () => (await duplicates()) + (await duplicates(twin.metrics)) === here + there + 1,
        {
          deadlineMs: 10_000,
          intervalMs: 25,
          what: 'one instance to recognise the delivery as seen',
        },
      );
      expect(postsIn(threadTs)).toHaveLength(1);
    } finally {
      await twin.stop();
    }
  });
});

describe('the bot’s own messages', () => {
  it('are not answered, whether marked by its user id or its bot id', async () => {
    const own = [
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> help`,
        threadTs: newThread(),
        user: h.slack.botUserId,
        botUserId: h.slack.botUserId,
      }),
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> help`,
        threadTs: newThread(),
        botId: h.slack.botId,
        botUserId: h.slack.botUserId,
      }),
    ];
    for (const e of own) expect((await h.mention(e)).status).toBe(200);
    // A person's question sent after them, which takes longer to answer (it asks the broker), is
    // answered: had the bot taken up its own `help`, that quicker answer would be there by now.
    const threadTs = newThread();
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.audit --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    await h.slack.waitForCall((c) => c.method.startsWith('chat.post') && c.args.thread_ts === threadTs);
    for (const e of own) expect(postsIn((e.event as { thread_ts: string }).thread_ts)).toHaveLength(0);
  });
});
