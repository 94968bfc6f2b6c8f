/**
 * A local HTTP server that stands in for the management API when a test needs the network to
 * misbehave: answer late, never, with a 5xx, or drop the connection; or pass requests through
 * to the real broker, optionally late. Behaviours are taken from a queue, then the default.
 *
 *   const fake = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
 *   fake.enqueue({ kind: 'respond', status: 503 });
 *   ... new ManagementClient({ url: fake.url, ... }) ...
 *   await fake.close();
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  /** Every request whose path matches gets this behaviour, before the queue and the fallback. */
  route(path: RegExp, behavior: FakeBehavior): void;
  close(): Promise<void>;
}

export async function startFakeBroker(options: { fallback?: FakeBehavior } = {}): Promise<FakeBroker> {
  const queue: FakeBehavior[] = [];
  const requests: RecordedRequest[] = [];
  const routes: { path: RegExp; behavior: FakeBehavior }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let fallback: FakeBehavior = options.fallback ?? { kind: 'respond', status: 404, body: { error: 'fake' } };

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
      const routed = routes.find((r) => r.path.test(req.url ?? ''))?.behavior;
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
    route: (path, behavior) => {
      routes.push({ path, behavior });
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
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
