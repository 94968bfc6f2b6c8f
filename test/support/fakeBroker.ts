/**
 * A local HTTP server that stands in for the management API when a test needs the network to
 * misbehave: answer late, never, with a 5xx, or drop the connection; send a body that never ends
 * (`endless`, as fast as the client reads) or one byte at a time (`drip`); or pass requests through
 * to the real broker, optionally late, or without passing its answer back (`proxy-drop`, `proxy-hang`). Behaviours are taken from a queue, then the default.
 * `startBlackHole()` (below) is a port that accepts connections and never reads nor answers.
 *
 *   const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
 *   fake.enqueue({ kind: 'respond', status: 503 });
 *   ... new ManagementClient({ url: fake.url, ... }) ...
 *   await fake.close();
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';

export type FakeBehavior =
  /** Answer with this status; `body` objects are sent as JSON. */
  | {
      readonly kind: 'respond';
      readonly status: number;
      readonly body?: unknown;
      readonly headers?: Readonly<Record<string, string>>;
      readonly delayMs?: number;
    }
  /** Close the socket without an answer. */
  | { readonly kind: 'drop'; readonly delayMs?: number }
  /** Never answer (until the client gives up or the fake closes). */
  | { readonly kind: 'hang' }
  /**
   * 200, then `head` (default `[`), then `item` followed by a comma, again and again, for as long
   * as the connection lasts: an endless JSON array (a listing) or, with `head: '"'`, an endless string.
   */
  | { readonly kind: 'endless'; readonly head?: string; readonly item?: string }
  /** 200 with a JSON content type, then `body` one byte every `intervalMs`, over and over, never ending. */
  | { readonly kind: 'drip'; readonly body: string; readonly intervalMs: number }
  /** Forward to `target`, let it act, then drop the connection instead of answering (did it happen?). */
  | { readonly kind: 'proxy-drop'; readonly target: string }
  /**
   * Forward to `target`, let it act, then never answer (a write that timed out after it was done);
   * `onAnswered` once `target` has answered (what happens to the node next is the test's).
   */
  | { readonly kind: 'proxy-hang'; readonly target: string; readonly onAnswered?: () => void }
  /** Forward to `target` (e.g. the real broker) after `delayMs`. */
  | { readonly kind: 'proxy'; readonly target: string; readonly delayMs?: number };

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export interface FakeBroker {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Behaviours for the next requests, one each, before the fallback applies again. */
  enqueue(...behaviors: FakeBehavior[]): void;
  setFallback(behavior: FakeBehavior): void;
  /**
   * Requests whose URL `match`es get `behavior` (before the queue and the fallback) until cleared
   * with `null`; a `match` that returns a behavior instead of true gives that one (the n-th such
   * request its own answer).
   */
  setRoute(
    match: ((url: string, method: string) => boolean | FakeBehavior) | null,
    behavior?: FakeBehavior,
  ): void;
  close(): Promise<void>;
}

export async function startFakeBroker(options: { fallback?: FakeBehavior } = {}): Promise<FakeBroker> {
  const queue: FakeBehavior[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let fallback: FakeBehavior = options.fallback ?? { kind: 'respond', status: 404, body: { error: 'fake' } };
  let route:
    | { match: (url: string, method: string) => boolean | FakeBehavior; behavior?: FakeBehavior }
    | undefined;

  const later = (ms: number | undefined, fn: () => void): void => {
    if (!ms) {
      fn();
      return;
    }
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const act = (behavior: FakeBehavior, req: IncomingMessage, body: Buffer, res: ServerResponse): void => {
    switch (behavior.kind) {
      case 'hang':
        break;
      case 'drop':
        later(behavior.delayMs, () => req.socket.destroy());
        break;
      case 'respond':
        later(behavior.delayMs, () => {
          const isText = typeof behavior.body === 'string' || behavior.body === undefined;
          const payload = isText
            ? ((behavior.body as string | undefined) ?? '')
            : JSON.stringify(behavior.body);
          res.writeHead(behavior.status, {
            ...(isText ? {} : { 'content-type': 'application/json' }),
            ...behavior.headers,
          });
          res.end(payload);
        });
        break;
      case 'proxy':
        later(behavior.delayMs, () => proxy(behavior.target, req, body, res));
        break;
      case 'proxy-drop':
      case 'proxy-hang': {
        const url = new URL(req.url ?? '/', behavior.target);
        const upstream = httpRequest(
          url,
          { method: req.method, headers: { ...req.headers, host: url.host } },
          (answer) => {
            answer.resume();
            answer.on('end', () => {
              if (behavior.kind === 'proxy-hang') behavior.onAnswered?.();
              else req.socket.destroy();
            });
          },
        );
        upstream.on('error', () => req.socket.destroy());
        upstream.end(body);
        break;
      }
      case 'endless':
        endless(res, behavior.head ?? '[', behavior.item ?? '{"name":"q","type":"classic","arguments":{}}');
        break;
      case 'drip': {
        res.writeHead(200, { 'content-type': 'application/json' });
        let i = 0;
        const t = setInterval(() => {
          if (res.destroyed) {
            clearInterval(t);
            timers.delete(t);
            return;
          }
          res.write(behavior.body[i % behavior.body.length] ?? ' ');
          i++;
        }, behavior.intervalMs);
        timers.add(t);
        break;
      }
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: body.toString(),
      });
      const hit = route?.match(req.url ?? '', req.method ?? '');
      const routed = hit === true ? route?.behavior : hit || undefined;
      act(routed ?? queue.shift() ?? fallback, req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...behaviors) => {
      queue.push(...behaviors);
    },
    setFallback: (behavior) => {
      fallback = behavior;
    },
    setRoute: (match, behavior) => {
      route = match ? { match, ...(behavior ? { behavior } : {}) } : undefined;
    },
    close: async () => {
      for (const t of timers) clearInterval(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes as fast as the reader takes it (backpressure respected), until the connection ends. */
function endless(res: ServerResponse, head: string, item: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(head);
  const block = `${item},`.repeat(Math.max(1, Math.floor(65_536 / (item.length + 1))));
  const pump = (): void => {
    while (!res.destroyed && res.write(block)) {
      // keep writing until the socket's buffer is full
    }
    if (!res.destroyed) res.once('drain', pump);
  };
  res.on('error', () => {});
  pump();
}

/** A TCP port that accepts connections and never reads, writes nor closes them: a black-holed broker. */
export async function startBlackHole(): Promise<{
  url: string;
  connections: () => number;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createNetServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.pause();
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function proxy(target: string, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', target);
  const upstream = httpRequest(
    url,
    { method: req.method, headers: { ...req.headers, host: url.host } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => req.socket.destroy());
  upstream.end(body);
}

/**
 * A TCP proxy to `target`: a stand-in for one node of a cluster (AMQP or HTTP) that can be
 * stopped as a node would be: its connections cut and its port closed (connects then refused).
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<{
  port: number;
  /** Connections accepted so far. */
  connections: () => number;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createNetServer((client) => {
    accepted++;
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    connections: () => accepted,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** A localhost port nothing listens on: a node that is down (connections refused at once). */
export async function closedPortUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
