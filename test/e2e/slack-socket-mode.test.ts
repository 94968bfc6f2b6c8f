import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/broker.ts';
import type { RecordedCall } from '../support/fakeSlack.ts';
import type { SocketConnection } from '../support/fakeSlackSocket.ts';
import {
  commandForm,
  type Harness,
  mentionEnvelope,
  renderedText,
  signed,
  startHarness,
} from '../support/harness.ts';

/**
 * Socket Mode end to end: the app built as createBot builds it, with SLACK_APP_TOKEN set and no
 * signing secret, against the fake Slack's WebSocket and the real broker holding the policies
 * lab. It opens its connection with the app-level token, takes `/rmq` and `@rmq` as envelopes,
 * acknowledges each on the socket and answers through the Web API and the response URL as in HTTP
 * mode, keeps the heartbeat, comes back after Slack's `disconnect`, still serves /healthz and
 * /metrics on PORT, and on stop() closes the socket with a normal closure.
 */

let h: Harness;
let thread = 0;
/** A thread of its own for each test, so its posts are told apart from the others'. */
const newThread = () => `1700000100.${String(++thread).padStart(6, '0')}`;

beforeAll(async () => {
  // The fake pings often, so the app's answers to Slack's pings are seen within the test.
  h = await startHarness({ socketMode: true, socketPingIntervalMs: 200 });
});
afterAll(async () => {
  await h?.stop();
});
afterEach(() => {
  expect(h.slack.rejections()).toEqual([]);
  expect(h.slack.socket.problems()).toEqual([]);
});

const connectionsOpened = (): RecordedCall[] =>
  h.slack.calls.filter((c) => c.method === 'apps.connections.open');

const postsIn = (threadTs: string): RecordedCall[] =>
  h.slack.calls.filter(
    (c) => c.kind === 'api' && c.method.startsWith('chat.post') && c.args.thread_ts === threadTs,
  );

function duplicates(): Promise<number> {
  return h.metrics.duplicateEvents.get().then((m) => m.values[0]?.value ?? 0);
}

/** `/rmq <text>` as Slack sends it over the socket: the command's fields as JSON, in an envelope. */
function slashCommand(text: string): { envelopeId: string; responseUrl: string } {
  const responseUrl = h.slack.responseUrl();
  const payload = Object.fromEntries(new URLSearchParams(commandForm({ text, responseUrl })));
  const envelopeId = h.slack.socket.deliver(h.slack.socket.slashCommand(payload));
  return { envelopeId, responseUrl };
}

describe('Socket Mode', () => {
  it('connects with the app-level token and serves only /healthz and /metrics on PORT', async () => {
    expect(h.bot.mode).toBe('socket');
    // start() resolved, so the client took the fake's hello.
    const [open, ...more] = connectionsOpened();
    expect(more).toEqual([]);
    expect(open).toMatchObject({ ok: true });
    expect(open?.headers.authorization).toBe(`Bearer ${h.slack.appToken}`);
    expect(h.slack.socket.open()).toHaveLength(1);

    // PORT=0: start() says where the routes went.
    expect(Number(new URL(h.url).port)).toBeGreaterThan(0);
    // Answered from the background check: once its first round has been to every part.
    const health = await waitFor(
      async () => {
        const res = await fetch(`${h.url}/healthz`);
        return res.status === 200 && res;
      },
      { what: '/healthz 200' },
    );
    expect(await health.json()).toMatchObject({
      ok: true,
      redis: { ok: true },
      brokers: { lab: { ok: true } },
    });
    const metrics = await fetch(`${h.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('rmq_slack_requests_total');
    // Nothing takes Slack's requests over HTTP in Socket Mode, signed or not.
    const request = signed(
      'any-secret',
      JSON.stringify({ type: 'url_verification', challenge: 'c' }),
      'application/json',
    );
    const events = await fetch(`${h.url}/slack/events`, { method: 'POST', ...request });
    expect(events.status).toBe(404);

    // The heartbeat both ways: the app answers Slack's pings and sends its own.
    const [connection] = h.slack.socket.open();
    await waitFor(() => connection && connection.pongsFromApp > 0 && connection.pingsFromApp > 0, {
      deadlineMs: 20_000,
      intervalMs: 50,
      what: 'pings and pongs from the app',
    });
    expect(h.logs.join('\n')).not.toContain(h.slack.appToken);
  });

  it('acks /rmq which with its envelope id, then answers at the response URL', async () => {
    const { envelopeId, responseUrl } = slashCommand(`which orders.audit --vhost ${h.vhost}`);
    const [ack] = await h.slack.socket.waitForAcks(envelopeId);
    // An empty acknowledgement: Slack shows nothing for it; the answer comes on the response URL.
    expect(ack?.payload).toEqual({});
    const answer = await h.answerTo(responseUrl);
    expect(ack!.at).toBeLessThanOrEqual(answer.at);
    expect(answer.args.response_type).toBe('in_channel');
    const shown = renderedText(answer.args).replaceAll(h.vhost, 'VHOST');
    expect(shown).toMatch(/\*In force:\* `audit-retention` · priority 10/);
    expect(shown).toMatch(/`audit-fallback` · priority 1 — lower priority than the one in force/);
    expect(h.slack.responsesTo(responseUrl)).toHaveLength(1);
    expect(h.slack.socket.acks().filter((a) => a.envelope_id === envelopeId)).toHaveLength(1);
  });

  it('acks @rmq in a thread and answers with chat.postMessage in that thread', async () => {
    const threadTs = newThread();
    const envelope = h.slack.socket.event(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.audit --vhost ${h.vhost}`,
        channel: 'C0INCIDENT',
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    h.slack.socket.deliver(envelope);
    await h.slack.socket.waitForAcks(envelope.envelope_id);
    const post = await h.slack.waitForCall(
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs,
      { what: 'the answer in the thread' },
    );
    expect(post.args.channel).toBe('C0INCIDENT');
    expect(post.headers.authorization).toBe(`Bearer ${h.slack.botToken}`);
    expect(renderedText(post.args)).toMatch(/\*In force:\* `audit-retention`/);
  });

  it('answers once an event envelope Slack delivers twice, and acks both deliveries', async () => {
    const threadTs = newThread();
    const envelope = h.slack.socket.event(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.processing --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    const before = await duplicates();
    h.slack.socket.deliver(envelope);
    // Slack's redelivery: the same envelope, marked as a retry.
    h.slack.socket.deliver({ ...envelope, retry_attempt: 1, retry_reason: 'timeout' });
    await h.slack.socket.waitForAcks(envelope.envelope_id, { count: 2 });
    await waitFor(async () => (await duplicates()) === before + 1, {
      intervalMs: 25,
      what: 'the second delivery to be recognised',
    });
    await h.slack.waitForCall((c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs);
    // Both deliveries are accounted for (one answered, one counted as a duplicate): one answer.
    expect(postsIn(threadTs)).toHaveLength(1);
    const seenAgain = h.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find(
        (l) => l.msg === 'event delivered again; already answered' && l.eventId === envelope.payload.event_id,
      );
    expect(seenAgain).toMatchObject({ retryNum: 1 });
  });

  it('comes back after Slack’s disconnect message and answers on the new connection', async () => {
    const [first] = h.slack.socket.open();
    expect(first).toBeDefined();
    const opened = connectionsOpened().length;
    h.slack.socket.disconnect('refresh_requested');
    await waitFor(() => first?.closed, { intervalMs: 25, what: 'the app to close the old connection' });
    expect(first?.closed).toMatchObject({ code: 1000, by: 'app' });
    // @slack/socket-mode waits clientPingTimeout (5 s) before it reconnects.
    const second = await h.slack.socket.waitForConnection((c) => c.id > (first?.id ?? 0) && !c.closed, {
      what: 'a new connection',
    });
    expect(connectionsOpened().slice(opened)).toMatchObject([{ ok: true }]);

    const { envelopeId, responseUrl } = slashCommand(`which billing.invoices --vhost ${h.vhost}`);
    const [ack] = await h.slack.socket.waitForAcks(envelopeId);
    expect(ack?.connection).toBe(second.id);
    const answer = await h.answerTo(responseUrl);
    expect(renderedText(answer.args)).toMatch(/\*Ambiguous:\* `billing-a`, `billing-b` share priority 5/);
  });

  it('stop() closes the socket with a normal closure, and the routes with it', async () => {
    const [connection] = h.slack.socket.open() as [SocketConnection];
    expect(connection).toBeDefined();
    await h.bot.stop(5000);
    const closed = await waitFor(() => connection.closed, {
      intervalMs: 25,
      what: 'the app to close its connection',
    });
    expect(closed).toMatchObject({ code: 1000, by: 'app' });
    expect(h.slack.socket.open()).toEqual([]);
    await expect(fetch(`${h.url}/healthz`)).rejects.toThrow();
  });
});
