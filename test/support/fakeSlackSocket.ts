/**
 * The Socket Mode side of the fake Slack (`fakeSlack.ts` serves it on its own port): what a Bolt
 * app with an app-level token talks to instead of receiving HTTP requests.
 *
 *   1. The app calls `apps.connections.open` with its app-level token (`xapp-…`); the fake Slack
 *      answers `{ ok: true, url: 'ws://127.0.0.1:<port>/link/?ticket=…&app_id=…' }`. A ticket
 *      opens one connection: a second upgrade with it, or one without a known ticket, is refused.
 *   2. On connect the fake sends Slack's `hello`; @slack/socket-mode resolves `start()` on it.
 *   3. The test pushes envelopes (`slashCommand`, `event`, or any `deliver`), as Slack does:
 *      `{ envelope_id, type, payload, accepts_response_payload, retry_attempt?, retry_reason? }`.
 *   4. The app acknowledges each with `{ envelope_id, payload? }`; `acks()` holds them.
 *
 * Heartbeat as Slack keeps it: the fake pings the app every `pingIntervalMs` (the client drops a
 * connection that goes `serverPingTimeout` without one) and answers the app's pings with pongs
 * (the client drops one whose pongs stop). `disconnect(reason)` sends Slack's `disconnect`
 * message, after which the client closes the socket and opens a new one.
 *
 * What Slack would not make sense of is kept in `problems()`: a frame that is not a JSON object
 * with an `envelope_id`, a binary frame, an ack for an envelope never sent on that connection,
 * more acks for an envelope than deliveries of it. A test asserts it stays empty.
 *
 * Shapes from docs.slack.dev (Socket Mode: hello, disconnect, envelopes and acknowledgements) and
 * @slack/socket-mode 3.x (SocketModeClient.onWebSocketMessage, SlackWebSocket's ping monitors).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { waitFor } from './broker.ts';

export type EnvelopeType = 'slash_commands' | 'events_api' | 'interactive';

export interface SocketEnvelope {
  readonly envelope_id: string;
  readonly type: EnvelopeType;
  readonly payload: Record<string, unknown>;
  readonly accepts_response_payload: boolean;
  readonly retry_attempt?: number;
  readonly retry_reason?: string;
}

export interface SocketAck {
  /** The connection it came on (`SocketConnection.id`). */
  readonly connection: number;
  readonly envelope_id: string;
  /** What the app put in the ack; Bolt sends `{}` when its listener acked without a body. */
  readonly payload?: unknown;
  readonly at: number;
}

export interface SocketConnection {
  readonly id: number;
  readonly ticket: string;
  readonly openedAt: number;
  /** Envelopes sent on it, in order (a redelivery appears twice). */
  readonly delivered: SocketEnvelope[];
  /** Heartbeat frames from the app. */
  pingsFromApp: number;
  pongsFromApp: number;
  /** Set when the socket has closed: the close code, its reason, and which side began closing. */
  closed?: {
    readonly code: number;
    readonly reason: string;
    readonly by: 'app' | 'fake';
    readonly at: number;
  };
}

export interface FakeSlackSocket {
  readonly appId: string;
  /** Every connection made with a valid ticket, oldest first. */
  connections(): readonly SocketConnection[];
  /** The connections still open. */
  open(): SocketConnection[];
  /** Waits until a connection matching `match` (default: any open one) exists, and returns it. */
  waitForConnection(
    match?: (c: SocketConnection) => boolean,
    options?: { deadlineMs?: number; what?: string },
  ): Promise<SocketConnection>;
  /** Sends an envelope on the newest open connection (or `connection`); returns its envelope id. */
  deliver(envelope: SocketEnvelope, options?: { connection?: number }): string;
  /** A `slash_commands` envelope (accepts a response payload, as Slack's do). */
  slashCommand(payload: Record<string, unknown>, options?: { envelopeId?: string }): SocketEnvelope;
  /** An `events_api` envelope; give `retryAttempt` for a redelivery. */
  event(
    payload: Record<string, unknown>,
    options?: { envelopeId?: string; retryAttempt?: number; retryReason?: string },
  ): SocketEnvelope;
  /** Every acknowledgement received, in arrival order. */
  acks(): SocketAck[];
  /** Waits until `count` (default 1) acks for the envelope id have arrived; returns them. */
  waitForAcks(envelopeId: string, options?: { count?: number; deadlineMs?: number }): Promise<SocketAck[]>;
  /** Slack's `disconnect` message (it recycles connections now and then): the client reconnects. */
  disconnect(
    reason?: 'refresh_requested' | 'warning' | 'link_disabled',
    options?: { connection?: number },
  ): void;
  /** Frames Slack would not make sense of; see the module comment. */
  problems(): string[];
}

/** What fakeSlack.ts wires into its server; not for tests. */
export interface FakeSlackSocketServer extends FakeSlackSocket {
  /** A fresh single-use URL for `apps.connections.open`. */
  issueUrl(baseUrl: string): string;
  /** For the HTTP server's `upgrade` event. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): Promise<void>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function createFakeSlackSocket(
  options: { appId?: string; pingIntervalMs?: number } = {},
): FakeSlackSocketServer {
  const appId = options.appId ?? 'A0RMQ';
  const pingIntervalMs = options.pingIntervalMs ?? 5000;
  const wss = new WebSocketServer({ noServer: true });
  const tickets = new Set<string>();
  const connections: SocketConnection[] = [];
  const sockets = new Map<number, WebSocket>();
  const acks: SocketAck[] = [];
  const problems: string[] = [];
  const closedByFake = new Set<number>();

  const newestOpen = (): SocketConnection | undefined =>
    [...connections].reverse().find((c) => !c.closed && sockets.get(c.id)?.readyState === 1);

  const socketFor = (id: number | undefined): [SocketConnection, WebSocket] => {
    const connection = id === undefined ? newestOpen() : connections.find((c) => c.id === id);
    const ws = connection ? sockets.get(connection.id) : undefined;
    if (!connection || !ws || ws.readyState !== 1) {
      throw new Error(`fake Slack: no open Socket Mode connection${id === undefined ? '' : ` #${id}`}`);
    }
    return [connection, ws];
  };

  function onConnection(ws: WebSocket, ticket: string): void {
    const connection: SocketConnection = {
      id: connections.length + 1,
      ticket,
      openedAt: Date.now(),
      delivered: [],
      pingsFromApp: 0,
      pongsFromApp: 0,
    };
    connections.push(connection);
    sockets.set(connection.id, ws);
    const where = `connection #${connection.id}`;
    const pinger = setInterval(() => {
      if (ws.readyState === 1) ws.ping(Buffer.from(`ping from the fake Slack (${Date.now()})`));
    }, pingIntervalMs);
    pinger.unref();

    ws.on('ping', () => {
      connection.pingsFromApp += 1; // ws answers with a pong itself (autoPong)
    });
    ws.on('pong', () => {
      connection.pongsFromApp += 1;
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        problems.push(`${where}: a binary frame`);
        return;
      }
      const text = data.toString();
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        problems.push(`${where}: not JSON: ${text.slice(0, 200)}`);
        return;
      }
      if (!isObject(message) || typeof message.envelope_id !== 'string') {
        problems.push(`${where}: not an acknowledgement: ${text.slice(0, 200)}`);
        return;
      }
      const id = message.envelope_id;
      const sent = connection.delivered.filter((e) => e.envelope_id === id).length;
      const acked = acks.filter((a) => a.connection === connection.id && a.envelope_id === id).length;
      if (sent === 0) problems.push(`${where}: an ack for envelope ${id}, never sent on it`);
      else if (acked >= sent)
        problems.push(`${where}: ack ${acked + 1} for envelope ${id}, sent ${sent} time(s)`);
      acks.push({
        connection: connection.id,
        envelope_id: id,
        ...('payload' in message ? { payload: message.payload } : {}),
        at: Date.now(),
      });
    });
    ws.on('close', (code, reason) => {
      clearInterval(pinger);
      connection.closed = {
        code,
        reason: reason.toString(),
        by: closedByFake.has(connection.id) ? 'fake' : 'app',
        at: Date.now(),
      };
    });
    ws.on('error', (err) => problems.push(`${where}: ${err.message}`));

    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: [...sockets.values()].filter((s) => s.readyState === 1).length,
        debug_info: { host: 'applink-fake', build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: appId },
      }),
    );
  }

  const newEnvelopeId = () =>
    `${randomBytes(4).toString('hex')}-${randomBytes(2).toString('hex')}-${randomBytes(6).toString('hex')}`;

  const api: FakeSlackSocketServer = {
    appId,
    connections: () => connections,
    open: () => connections.filter((c) => !c.closed && sockets.get(c.id)?.readyState === 1),
    waitForConnection(match = (c) => !c.closed, opts = {}) {
      return waitFor(() => connections.find(match), {
        deadlineMs: opts.deadlineMs ?? 20_000,
        intervalMs: 25,
        what: opts.what ?? 'a Socket Mode connection',
      });
    },
    deliver(envelope, opts = {}) {
      const [connection, ws] = socketFor(opts.connection);
      connection.delivered.push(envelope);
      ws.send(JSON.stringify(envelope));
      return envelope.envelope_id;
    },
    slashCommand(payload, opts = {}) {
      return {
        envelope_id: opts.envelopeId ?? newEnvelopeId(),
        type: 'slash_commands',
        payload,
        accepts_response_payload: true,
      };
    },
    event(payload, opts = {}) {
      return {
        envelope_id: opts.envelopeId ?? newEnvelopeId(),
        type: 'events_api',
        payload,
        accepts_response_payload: false,
        retry_attempt: opts.retryAttempt ?? 0,
        retry_reason: opts.retryReason ?? '',
      };
    },
    acks: () => acks,
    waitForAcks(envelopeId, opts = {}) {
      const count = opts.count ?? 1;
      return waitFor(
        () => {
          const got = acks.filter((a) => a.envelope_id === envelopeId);
          return got.length >= count ? got : undefined;
        },
        { deadlineMs: opts.deadlineMs ?? 20_000, intervalMs: 25, what: `${count} ack(s) of ${envelopeId}` },
      );
    },
    disconnect(reason = 'refresh_requested', opts = {}) {
      const [, ws] = socketFor(opts.connection);
      ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'applink-fake' } }));
    },
    problems: () => problems,

    issueUrl(baseUrl) {
      const ticket = randomBytes(16).toString('hex');
      tickets.add(ticket);
      const ws = baseUrl.replace(/^http/, 'ws');
      return `${ws}/link/?ticket=${ticket}&app_id=${encodeURIComponent(appId)}`;
    },
    handleUpgrade(req, socket, head) {
      const url = new URL(req.url ?? '/', 'http://fake');
      const ticket = url.searchParams.get('ticket') ?? '';
      if (url.pathname !== '/link/' || !tickets.delete(ticket)) {
        // An unknown or already used ticket: Slack refuses the upgrade.
        socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, ticket));
    },
    async close() {
      for (const [id, ws] of sockets) {
        closedByFake.add(id);
        ws.terminate();
      }
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
  return api;
}
