import { WebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/broker.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';

/**
 * The fake Slack's Socket Mode side, against a bare WebSocket client (undici's, which
 * @slack/socket-mode uses): it hands out connections to the app-level token only, says hello,
 * keeps the acks, and notices what Slack would not make sense of.
 */

let slack: FakeSlack;
beforeAll(async () => {
  slack = await startFakeSlack();
});
afterAll(async () => {
  await slack.close();
});

async function connectionsOpen(token?: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${slack.apiUrl}apps.connections.open`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: '',
  });
  return (await res.json()) as Record<string, unknown>;
}

/** A client that keeps every text frame it receives. */
function client(url: string): {
  ws: WebSocket;
  received: Record<string, unknown>[];
  opened: Promise<boolean>;
} {
  const ws = new WebSocket(url);
  const received: Record<string, unknown>[] = [];
  ws.addEventListener('message', (e) => received.push(JSON.parse(String(e.data)) as Record<string, unknown>));
  const opened = new Promise<boolean>((resolve) => {
    ws.addEventListener('open', () => resolve(true));
    ws.addEventListener('close', () => resolve(false));
  });
  return { ws, received, opened };
}

describe('apps.connections.open', () => {
  it('takes the app-level token and no other; the app-level token calls nothing else', async () => {
    expect(await connectionsOpen()).toEqual({ ok: false, error: 'not_authed' });
    expect(await connectionsOpen(slack.botToken)).toEqual({ ok: false, error: 'invalid_auth' });
    expect(await connectionsOpen('xapp-1-A0RMQ-1-wrong')).toEqual({ ok: false, error: 'invalid_auth' });
    const opened = await connectionsOpen(slack.appToken);
    expect(opened).toMatchObject({ ok: true });
    expect(String(opened.url)).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/link\/\?ticket=[0-9a-f]+&app_id=A0RMQ$/);

    const post = await fetch(`${slack.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${slack.appToken}` },
      body: JSON.stringify({ channel: 'C1', text: 'hi' }),
    });
    expect(await post.json()).toEqual({ ok: false, error: 'invalid_auth' });
  });
});

describe('the WebSocket', () => {
  it('says hello, delivers envelopes, keeps acks and what Slack would not make sense of', async () => {
    const url = String((await connectionsOpen(slack.appToken)).url);
    const app = client(url);
    expect(await app.opened).toBe(true);
    await waitFor(() => app.received.length > 0, { intervalMs: 10, what: 'hello' });
    expect(app.received[0]).toMatchObject({ type: 'hello', connection_info: { app_id: 'A0RMQ' } });
    const connection = await slack.socket.waitForConnection();

    const envelope = slack.socket.slashCommand({ command: '/rmq', text: 'help' });
    slack.socket.deliver(envelope);
    await waitFor(() => app.received.length > 1, { intervalMs: 10, what: 'the envelope' });
    expect(app.received[1]).toEqual({
      envelope_id: envelope.envelope_id,
      type: 'slash_commands',
      payload: { command: '/rmq', text: 'help' },
      accepts_response_payload: true,
    });

    app.ws.send(JSON.stringify({ envelope_id: envelope.envelope_id, payload: {} }));
    const [ack] = await slack.socket.waitForAcks(envelope.envelope_id);
    expect(ack).toMatchObject({ connection: connection.id, envelope_id: envelope.envelope_id, payload: {} });
    expect(slack.socket.problems()).toEqual([]);

    app.ws.send(JSON.stringify({ envelope_id: envelope.envelope_id }));
    app.ws.send(JSON.stringify({ envelope_id: 'never-sent' }));
    app.ws.send('not json');
    await waitFor(() => slack.socket.problems().length === 3, { intervalMs: 10, what: 'three problems' });
    expect(slack.socket.problems()).toEqual([
      expect.stringMatching(/ack 2 for envelope .*, sent 1 time/),
      expect.stringMatching(/an ack for envelope never-sent, never sent on it/),
      expect.stringMatching(/not JSON/),
    ]);
    slack.socket.problems().length = 0;

    slack.socket.disconnect('refresh_requested');
    await waitFor(() => app.received.length > 2, { intervalMs: 10, what: 'disconnect' });
    expect(app.received[2]).toMatchObject({ type: 'disconnect', reason: 'refresh_requested' });
    app.ws.close(1000);
    const closed = await waitFor(() => connection.closed, { intervalMs: 10, what: 'the close' });
    expect(closed).toMatchObject({ code: 1000, by: 'app' });
    expect(() => slack.socket.deliver(slack.socket.event({}))).toThrow(/no open Socket Mode connection/);
  });

  it('opens one connection per ticket, and none without one', async () => {
    const url = String((await connectionsOpen(slack.appToken)).url);
    const before = slack.socket.connections().length;
    const first = client(url);
    expect(await first.opened).toBe(true);
    expect(await client(url).opened).toBe(false);
    expect(await client(url.replace(/ticket=[0-9a-f]+/, 'ticket=guessed')).opened).toBe(false);
    expect(slack.socket.connections()).toHaveLength(before + 1);
    first.ws.close(1000);
    await waitFor(() => slack.socket.open().length === 0, { intervalMs: 10, what: 'the close' });
  });
});
