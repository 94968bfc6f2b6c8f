import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, type Metrics } from '../../src/bot/metrics/metrics.ts';
import { createLogger } from '../../src/log/log.ts';
import { createDelivery, type Delivery } from '../../src/slack/delivery.ts';
import { retryAfterMs } from '../../src/slack/slackCalls.ts';
import { type FakeSlack, renderedText, startFakeSlack } from '../support/fakeSlack.ts';

/**
 * The one way the bot posts to Slack (`src/slack/delivery.ts`), against the fake Slack made to
 * fail: 429 with Retry-After, 5xx, a response URL or Web API that never answers. Budgets are
 * shortened so that giving up happens within the test; the retry counts and outcomes are asserted,
 * never the time taken.
 */

let slack: FakeSlack;
const logs: string[] = [];
const logger = createLogger('debug', { write: (line: string) => void logs.push(line) });

beforeAll(async () => {
  slack = await startFakeSlack();
});
afterAll(async () => {
  await slack?.close();
});
afterEach(() => {
  slack.clearFaults();
  expect(slack.rejections().filter((c) => c.error !== 'expired_url')).toEqual([]);
});

function fresh(options: { budgetMs?: number; attemptMs?: number; signal?: AbortSignal } = {}): {
  delivery: Delivery;
  metrics: Metrics;
} {
  const metrics = createMetrics({ defaultMetrics: false });
  const delivery = createDelivery({
    token: slack.botToken,
    slackApiUrl: slack.apiUrl,
    metrics,
    logger,
    retryBaseMs: 20,
    budgetMs: options.budgetMs ?? 5_000,
    attemptMs: options.attemptMs ?? 2_000,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { delivery, metrics };
}

const message = (text: string) => ({
  text,
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }],
});
const answer = (text: string) => ({
  message: message(text),
  audience: 'channel' as const,
  outcome: 'answered' as const,
});
const request = (requestId: string) => ({
  via: 'command' as const,
  command: 'which',
  started: performance.now(),
  logger,
  requestId,
});

async function counted(metrics: Metrics, outcome: string): Promise<number> {
  const m = await metrics.requests.get();
  return m.values.filter((v) => v.labels.outcome === outcome).reduce((n, v) => n + v.value, 0);
}

const callsTo = (path: string) => slack.calls.filter((c) => c.path === path);

describe('an answer through a response URL', () => {
  it('is delivered after two 500s', async () => {
    const { delivery, metrics } = fresh();
    const responseUrl = slack.responseUrl();
    slack.faultNext('response_url', { status: 500 }, { status: 503 });
    const reply = delivery.toResponseUrl({ responseUrl, channel: 'C1', user: 'U1' });
    const result = await delivery.deliver(reply, answer('two 500s then ok'), request('r500'));
    expect(result).toMatchObject({ delivered: true, outcome: 'answered' });
    const calls = callsTo(new URL(responseUrl).pathname);
    expect(calls.map((c) => c.error ?? 'ok')).toEqual(['http-500', 'http-503', 'ok']);
    expect(await counted(metrics, 'answered')).toBe(1);
    expect((await metrics.deliveryRetries.get()).values.reduce((n, v) => n + v.value, 0)).toBe(2);
  });

  it('waits for the Retry-After of a 429, then delivers', async () => {
    const { delivery } = fresh();
    const responseUrl = slack.responseUrl();
    slack.faultNext('response_url', { status: 429, retryAfter: 1 });
    const reply = delivery.toResponseUrl({ responseUrl, channel: 'C1', user: 'U1' });
    const result = await delivery.deliver(reply, answer('after a 429'), request('r429'));
    expect(result.delivered).toBe(true);
    const [limited, ok] = callsTo(new URL(responseUrl).pathname);
    expect(limited?.error).toBe('ratelimited');
    // Slack asked for one second: the retry did not come sooner (the fake's clock, not a timing goal).
    expect((ok?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('lost to 500s until the budget ends is counted lost, and the asker is told ephemerally by the Web API', async () => {
    const { delivery, metrics } = fresh({ budgetMs: 1_500 });
    const responseUrl = slack.responseUrl();
    slack.faultNext('response_url', ...Array.from({ length: 200 }, () => ({ status: 500 as const })));
    const reply = delivery.toResponseUrl({ responseUrl, channel: 'C0LOST', user: 'U0ASKER' });
    const result = await delivery.deliver(reply, answer('never gets there'), request('rlost'));
    expect(result).toEqual({ delivered: false, outcome: 'lost' });
    expect(await counted(metrics, 'answered')).toBe(0);
    expect(await counted(metrics, 'lost')).toBe(1);
    const told = slack.calls.find((c) => c.method === 'chat.postEphemeral' && c.args.channel === 'C0LOST');
    expect(told?.ok).toBe(true);
    expect(told?.args.user).toBe('U0ASKER');
    expect(renderedText(told?.args ?? {})).toMatch(
      /could not be delivered: Slack answered `http-500`[\s\S]*rlost/,
    );
  });

  it('that never answers does not hold the answer beyond the budget', async () => {
    const { delivery, metrics } = fresh({ budgetMs: 1_200, attemptMs: 400 });
    const responseUrl = slack.responseUrl();
    slack.faultNext('response_url', ...Array.from({ length: 10 }, () => ({ hang: true as const })));
    const reply = delivery.toResponseUrl({ responseUrl, channel: 'C0HANG', user: 'U0ASKER' });
    const result = await delivery.deliver(reply, answer('into a black hole'), request('rhang'));
    expect(result.outcome).toBe('lost');
    expect(await counted(metrics, 'lost')).toBe(1);
    const told = slack.calls.find((c) => c.method === 'chat.postEphemeral' && c.args.channel === 'C0HANG');
    expect(renderedText(told?.args ?? {})).toMatch(/Slack answered `timeout`/);
  });

  it('refused for good (an expired URL) is not retried', async () => {
    const { delivery } = fresh();
    const gone = `${slack.url}/response/never-handed-out`;
    const sent = await delivery
      .toResponseUrl({ responseUrl: gone, channel: 'C1', user: 'U1' })
      .send(message('x'), 'channel');
    expect(sent).toEqual({ ok: false, error: 'expired_url' });
    expect(callsTo('/response/never-handed-out')).toHaveLength(1);
  });
});

describe('Web API calls', () => {
  it('chat.postMessage after a 429 with Retry-After: 1 is retried, not dropped', async () => {
    const { delivery, metrics } = fresh();
    slack.faultNext('chat.postMessage', { status: 429, retryAfter: 1 });
    const reply = delivery.toChannel({ channel: 'C0RATE', threadTs: '1700000000.000001', user: 'U1' });
    const result = await delivery.deliver(reply, answer('rate limited once'), {
      ...request('rrate'),
      via: 'mention',
    });
    expect(result.delivered).toBe(true);
    const posts = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === 'C0RATE');
    expect(posts.map((c) => c.error ?? 'ok')).toEqual(['ratelimited', 'ok']);
    expect(posts[1]?.args.thread_ts).toBe('1700000000.000001');
    expect(await counted(metrics, 'answered')).toBe(1);
  });

  it('5xx and a retryable platform error are retried; a refusal is not', async () => {
    const { delivery } = fresh();
    slack.faultNext('chat.update', { status: 502 });
    slack.failNext('chat.update', 'internal_error');
    const updated = await delivery.call('chat.update', { channel: 'C0UPD', ts: '1.2', text: 'approved' });
    expect(updated.ok).toBe(true);
    slack.failNext('chat.update', 'message_not_found');
    const refused = await delivery.call('chat.update', { channel: 'C0UPD', ts: '1.3', text: 'approved' });
    expect(refused).toEqual({ ok: false, error: 'message_not_found' });
    const updates = slack.calls.filter((c) => c.method === 'chat.update' && c.args.channel === 'C0UPD');
    expect(updates.map((c) => c.error ?? 'ok')).toEqual([
      'http-502',
      'internal_error',
      'ok',
      'message_not_found',
    ]);
  });

  it('a mention answer lost for good is counted lost and the asker told in the thread', async () => {
    const { delivery, metrics } = fresh({ budgetMs: 800 });
    slack.faultNext('chat.postMessage', ...Array.from({ length: 100 }, () => ({ status: 503 as const })));
    const reply = delivery.toChannel({ channel: 'C0MLOST', threadTs: '1700000000.000002', user: 'U0ASKER' });
    const result = await delivery.deliver(reply, answer('lost'), { ...request('rmention'), via: 'mention' });
    expect(result.outcome).toBe('lost');
    expect(await counted(metrics, 'lost')).toBe(1);
    const told = slack.calls.find((c) => c.method === 'chat.postEphemeral' && c.args.channel === 'C0MLOST');
    expect(told).toMatchObject({ ok: true, args: { user: 'U0ASKER', thread_ts: '1700000000.000002' } });
  });

  it('a file Slack refuses is reported to the asker; the answer stands', async () => {
    const { delivery, metrics } = fresh();
    slack.failNext('files.getUploadURLExternal', 'not_in_channel');
    const responseUrl = slack.responseUrl();
    const reply = delivery.toResponseUrl({ responseUrl, channel: 'C0FILE', user: 'U1' });
    const withFile = { ...answer('summary'), file: { filename: 'x.csv', title: 'x', content: 'a,b\n' } };
    const result = await delivery.deliver(reply, withFile, request('rfile'));
    expect(result).toEqual({ delivered: true, outcome: 'answered', fileAttached: false });
    const [first, notice] = slack.responsesTo(responseUrl);
    expect(first?.args.response_type).toBe('in_channel');
    expect(notice?.args).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(renderedText(notice?.args ?? {})).toMatch(/not_in_channel/);
    expect((await metrics.deliveryErrors.get()).values[0]?.value).toBe(1);
  });

  it('gives up at once when shutdown aborts, without telling anyone', async () => {
    const stop = new AbortController();
    const { delivery, metrics } = fresh({ budgetMs: 30_000, attemptMs: 30_000, signal: stop.signal });
    const responseUrl = slack.responseUrl();
    slack.faultNext('response_url', { hang: true });
    const reply = delivery.toResponseUrl({ responseUrl, channel: 'C0STOP', user: 'U1' });
    const pending = delivery.deliver(reply, answer('cut short'), request('rstop'));
    await slack.waitForCall((c) => c.path === new URL(responseUrl).pathname);
    stop.abort();
    expect(await pending).toEqual({ delivered: false, outcome: 'lost' });
    expect(await counted(metrics, 'lost')).toBe(1);
    expect(slack.calls.some((c) => c.args.channel === 'C0STOP' && c.method === 'chat.postEphemeral')).toBe(
      false,
    );
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, and nothing else', () => {
    expect(retryAfterMs('1')).toBe(1000);
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
  });
});

describe('a modal', () => {
  it('is opened with the trigger, and the asker is told in a DM when there is no channel', async () => {
    const { delivery } = fresh();
    slack.faultNext('views.open', { status: 503 });
    const reply = delivery.toModal({ triggerId: '1.2.3', title: 'Change request', user: 'U0MODAL' });
    const opened = await reply.send(message('a form'), 'asker');
    expect(opened).toMatchObject({ ok: true, viewId: expect.stringMatching(/^V/) });
    const views = slack.calls.filter((c) => c.method === 'views.open' && c.args.trigger_id === '1.2.3');
    expect(views.map((c) => c.error ?? 'ok')).toEqual(['http-503', 'ok']);
    expect(await reply.attach({ filename: 'x.csv', title: 'x', content: 'x' })).toEqual({
      ok: false,
      error: 'no_channel',
    });
    const told = await reply.tellAsker(message('your request was filed'));
    expect(told.ok).toBe(true);
    expect(slack.calls.some((c) => c.method === 'chat.postMessage' && c.args.channel === 'U0MODAL')).toBe(
      true,
    );
  });
});
