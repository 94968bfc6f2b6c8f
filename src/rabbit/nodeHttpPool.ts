/**
 * The terminal command's HTTP client: what `transport.ts` uses of undici's `Pool` (`request`
 * with a string body and an abort signal, `close`, `destroy`), on Node's own `http`/`https`.
 * `scripts/build.ts` puts it in place of undici in `dist/cli.cjs` only; the bot keeps undici.
 *
 * Why: a CLI process sends four requests and exits. undici's parser is WebAssembly compiled on
 * the first connection, and its JavaScript is ~290 KB compiled at start: together ~60 ms of CPU
 * of a `which` that should cost no more than `rabbitmqadmin` (bench/cli). Node's parser is built in.
 *
 * What stays as undici did it, so `errors.ts` maps failures the same way: the timeouts fail with
 * undici's codes (`UND_ERR_CONNECT_TIMEOUT`, `UND_ERR_HEADERS_TIMEOUT`, `UND_ERR_BODY_TIMEOUT`),
 * an abort fails the request (or the body being read) with the signal's reason, network errors
 * pass as Node raises them (`ECONNREFUSED`, ...), and `close()` waits for requests under way
 * while `destroy()` ends them. The CLI suites run both builds of these paths
 * (test/integration/cli-faults.test.ts).
 */
import http from 'node:http';
import type https from 'node:https';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';

/** `node:https` (and TLS, crypto) loaded only for an https: broker: ~3 ms of every start (bench/cli). */
const httpsModule = (): typeof https => createRequire(import.meta.url)('node:https') as typeof https;

export interface NodeHttpPoolOptions {
  readonly connections?: number;
  readonly connect?: { readonly timeout?: number };
  readonly headersTimeout?: number;
  readonly bodyTimeout?: number;
}

export interface NodeHttpRequest {
  readonly path: string;
  readonly method: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | undefined;
  readonly signal?: AbortSignal;
  readonly headersTimeout?: number;
  readonly bodyTimeout?: number;
}

export interface NodeHttpResponse {
  readonly statusCode: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Readable;
}

const failure = (message: string, code: string): Error => Object.assign(new Error(message), { code });

export class Pool {
  private readonly url: URL;
  private readonly agent: http.Agent;
  private readonly lib: typeof http | typeof https;
  private readonly options: NodeHttpPoolOptions;
  private readonly inFlight = new Set<http.ClientRequest>();
  private closed = false;
  private drained: (() => void) | undefined;

  constructor(origin: string, options: NodeHttpPoolOptions = {}) {
    this.url = new URL(origin);
    this.lib = this.url.protocol === 'https:' ? httpsModule() : http;
    this.agent = new this.lib.Agent({ keepAlive: true, maxSockets: options.connections ?? 8 });
    this.options = options;
  }

  request(req: NodeHttpRequest): Promise<NodeHttpResponse> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(failure('The client is destroyed', 'UND_ERR_DESTROYED'));
        return;
      }
      const { signal } = req;
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const headers: Record<string, string | number> = { ...req.headers };
      if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
      const out = this.lib.request({
        protocol: this.url.protocol,
        hostname: this.url.hostname.replace(/^\[|\]$/g, ''),
        port: this.url.port || undefined,
        path: req.path,
        method: req.method,
        headers,
        agent: this.agent,
      });
      this.inFlight.add(out);
      let response: http.IncomingMessage | undefined;
      let connectTimer: NodeJS.Timeout | undefined;
      const headersMs = req.headersTimeout ?? this.options.headersTimeout;
      const headersTimer =
        headersMs && headersMs > 0
          ? setTimeout(
              () => out.destroy(failure('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT')),
              headersMs,
            )
          : undefined;
      const onAbort = () => {
        if (response) response.destroy(signal?.reason);
        else out.destroy(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(headersTimer);
        clearTimeout(connectTimer);
        signal?.removeEventListener('abort', onAbort);
        this.inFlight.delete(out);
        if (this.inFlight.size === 0) this.drained?.();
      };
      out.on('socket', (socket) => {
        const connectMs = this.options.connect?.timeout;
        if (!socket.connecting || !connectMs) return;
        connectTimer = setTimeout(
          () => out.destroy(failure('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT')),
          connectMs,
        );
        socket.once('connect', () => clearTimeout(connectTimer));
      });
      out.on('response', (res) => {
        response = res;
        clearTimeout(headersTimer);
        const bodyMs = req.bodyTimeout ?? this.options.bodyTimeout;
        if (bodyMs && bodyMs > 0) {
          res.setTimeout(bodyMs, () => res.destroy(failure('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT')));
        }
        res.once('close', done);
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      out.on('error', (err) => {
        if (!response) {
          done();
          reject(err);
        }
      });
      out.end(req.body);
    });
  }

  /** No new requests; resolves once those under way have finished. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight.size > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.agent.destroy();
  }

  /** Ends every request under way, and their connections. */
  async destroy(): Promise<void> {
    this.closed = true;
    for (const out of this.inFlight) out.destroy(failure('The client is destroyed', 'UND_ERR_DESTROYED'));
    this.agent.destroy();
  }
}
