// Over 400 lines: whole and streamed answers share one attempt (`send`): deadlines, size limits, retry rule.
/**
 * How the management client talks HTTP: one keep-alive connection pool, basic auth, a total
 * deadline per attempt (headers and body), a size limit per body (a listing: per item and in
 * all), GETs retried (network, timeout, 5xx; backoff with jitter from src/core/retry.ts), writes
 * never: a PUT whose answer was lost may have been applied, and the caller must decide.
 * `forQuestion(ms)` gives a view whose calls share one budget, retries included.
 *
 * A cluster's nodes (`url` a list): every call goes to the node that answered last (the first at
 * start), and a node that cannot be reached (refused, timed out, 5xx) is left for the next one,
 * inside the same budget and without a backoff, so a stopped node costs one failed connect and is
 * then remembered, by every view of the transport. An HTTP answer of 4xx is an answer. A write
 * moves to another node only when it was never sent (the connection was refused): after a timeout
 * or a lost answer it may have been applied, so it fails as before, the next call goes elsewhere,
 * and the caller reads back before any retry (the apply job does).
 *
 * What the broker's endpoints mean is not here: `client.ts` (one-answer endpoints) and
 * `listings.ts` (streamed listings) build paths and read answers through this.
 */
import { setMaxListeners } from 'node:events';
import { type Dispatcher, Pool } from 'undici';
import type { z } from 'zod';
import { type RetryPolicy, retryDelay, sleep } from '../core/index.ts';
import {
  type CredentialsFrom,
  errorFromFailure,
  errorFromResponse,
  RabbitError,
  type RabbitErrorCode,
} from './errors.ts';
import { ElementTooLarge, parseJsonArrayStream } from './jsonArrayStream.ts';
import { describeIssues } from './responses.ts';
import { pathSegment } from './segment.ts';

/**
 * Milliseconds on a monotonic clock, for deadlines and call times. Not `performance.now()`: the
 * global `performance` loads perf_hooks on first use, ~1 ms of every terminal command (bench/cli).
 */
function now(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

/** POST: the lab's publish only (src/rabbit/lab.ts); the bot itself never posts. */
export type HttpMethod = 'GET' | 'PUT' | 'DELETE' | 'POST';

export interface Timeouts {
  /** TCP connect. Only applies to the client's own pool, not to an injected dispatcher. */
  readonly connectMs: number;
  /**
   * Call -> response headers (waiting for a pool slot and connecting included). Precise to a few
   * ms. The broker builds a whole listing before it answers, so listings need a generous value.
   */
  readonly headersMs: number;
  /** Longest silence between two body chunks (undici's timer: up to ~1 s late). */
  readonly bodyMs: number;
  /**
   * One attempt from call to the body's last byte, however the broker paces it (a broker that
   * sends one byte a second never trips `bodyMs`). A streamed listing counts its consumer's time too.
   */
  readonly requestMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: 3_000,
  headersMs: 30_000,
  bodyMs: 30_000,
  requestMs: 60_000,
};

/** How much of the broker's answers the client reads before it gives up (`too-large`). */
export interface BodyLimits {
  /** One answer read whole (an object, the policies of a vhost, an error). */
  readonly bodyBytes: number;
  /** One element of a streamed listing (a queue with its arguments). */
  readonly itemBytes: number;
  /**
   * A streamed listing in all: about 200 bytes a queue without statistics, so 256 MiB is over a
   * million queues; an endless listing is cut in seconds rather than read for ever.
   */
  readonly listingBytes: number;
}

export const DEFAULT_LIMITS: BodyLimits = {
  bodyBytes: 32 * 1024 * 1024,
  itemBytes: 1024 * 1024,
  listingBytes: 256 * 1024 * 1024,
};

export interface CallInfo {
  readonly method: HttpMethod;
  /** Path and query, never credentials. */
  readonly path: string;
  /** `null` when no answer arrived (network error, timeout). */
  readonly status: number | null;
  /** Until the body was read completely (or the failure). */
  readonly ms: number;
  /** 0 for the first try. */
  readonly attempt: number;
  readonly error?: RabbitErrorCode;
  /** The node asked: its management URL as configured. */
  readonly node: string;
}

export interface TransportOptions {
  /**
   * Management root, e.g. `http://127.0.0.1:15672` (a path prefix is kept), or a cluster's nodes
   * (the same path prefix on each), asked in this order. No credentials in it.
   */
  readonly url: string | readonly string[];
  readonly user: string;
  readonly password: string;
  /**
   * The names of the variables the user and password came from (config: `RMQ_USER`/`RMQ_PASSWORD`,
   * or an environment's `userEnv`/`passwordEnv`): a refused login names them (`unauthorized`).
   */
  readonly credentialsFrom?: CredentialsFrom;
  readonly timeouts?: Partial<Timeouts>;
  readonly limits?: Partial<BodyLimits>;
  /** Extra tries for GETs after a retryable failure. Default 2; 0 where time is short (Slack's 3 s). */
  readonly getRetries?: number;
  /** First backoff step; doubles per retry, with jitter. Default 200 ms. */
  readonly retryBaseMs?: number;
  /** Connections in the client's own pool. Default 8. */
  readonly connections?: number;
  /** Use this instead of a pool of our own (not closed by `close()`). */
  readonly dispatcher?: Dispatcher;
  /** Called once per HTTP attempt, for metrics and benchmarks. Must not throw. */
  readonly onCall?: (info: CallInfo) => void;
}

/** A management API response as received: status and body text, before parsing. */
export interface HttpReply {
  readonly status: number;
  readonly text: string;
}

/** One node of the broker: its URL as configured, its origin, and the pool that talks to it. */
interface BrokerNode {
  readonly url: string;
  readonly origin: string;
  readonly dispatcher: Dispatcher;
}

/** Network codes that say the request never reached the node: a write may go to the next one. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

function neverSent(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; x && depth < 4; x = (x as { cause?: unknown }).cause, depth++) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
  }
  return false;
}

/** The reason an attempt is aborted with, mapped to `timeout` by errorFromFailure. */
function deadlineError(ms: number, what: string): Error {
  return Object.assign(new Error(`no complete answer within ${Math.round(ms)} ms (${what})`), {
    code: 'RMQ_DEADLINE',
  });
}

function tooLarge(path: string, what: string, limit: number): RabbitError {
  return new RabbitError({
    code: 'too-large',
    method: 'GET',
    path,
    message: `${what} is over the limit of ${limit} bytes`,
  });
}

/** An answer (or one `item` of a listing) that is not what its schema says. */
function notAsExpected(path: string, error: z.ZodError, item = ''): RabbitError {
  return new RabbitError({
    code: 'bad-response',
    method: 'GET',
    path,
    message: `${item}${describeIssues(error)}`,
    cause: error,
  });
}

export class Transport {
  private readonly nodes: readonly BrokerNode[];
  /** Which node is asked: the one that answered last. Shared by every view (`forQuestion`). */
  private readonly cursor: { index: number };
  private readonly prefix: string;
  private readonly authorization: string;
  private readonly timeouts: Timeouts;
  private readonly getRetries: number;
  private readonly retryBaseMs: number;
  private readonly ownsDispatcher: boolean;
  private readonly onCall: ((info: CallInfo) => void) | undefined;
  private readonly limits: BodyLimits;
  /** Aborted by `close()` once its grace period is over: every request still under way ends. */
  private readonly closing: AbortController;
  /** `now()` by which every call of this view must be done (`forQuestion`). */
  private deadlineAt: number | undefined;
  /** The latest a default budget may be stretched to (`stretch`); undefined: a budget set, not stretched. */
  private stretchableTo: number | undefined;
  private readonly options: TransportOptions;
  /** `onlyNode`'s transports, one per node, on that node's pool. */
  private readonly single = new Map<string, Transport>();

  constructor(options: TransportOptions) {
    const given = typeof options.url === 'string' ? [options.url] : options.url;
    if (given.length === 0) throw new TypeError('ManagementClient: url must name at least one node');
    const urls = given.map((u) => new URL(u));
    for (const url of urls) {
      if (url.username || url.password) {
        throw new TypeError('ManagementClient: pass credentials as user/password, not inside the URL');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new TypeError(`ManagementClient: url must be http(s), got ${url.protocol}`);
      }
    }
    const prefixOf = (url: URL) => url.pathname.replace(/\/+$/, '');
    if (new Set(urls.map(prefixOf)).size > 1) {
      throw new TypeError("ManagementClient: a cluster's nodes must share one path prefix");
    }
    const getRetries = options.getRetries ?? 2;
    if (!Number.isInteger(getRetries) || getRetries < 0) {
      throw new TypeError('ManagementClient: getRetries must be a whole number >= 0');
    }
    this.options = options;
    this.prefix = prefixOf(urls[0] as URL);
    this.cursor = { index: 0 };
    this.authorization = `Basic ${Buffer.from(`${options.user}:${options.password}`, 'utf8').toString('base64')}`;
    this.timeouts = {
      connectMs: options.timeouts?.connectMs ?? DEFAULT_TIMEOUTS.connectMs,
      headersMs: options.timeouts?.headersMs ?? DEFAULT_TIMEOUTS.headersMs,
      bodyMs: options.timeouts?.bodyMs ?? DEFAULT_TIMEOUTS.bodyMs,
      requestMs: options.timeouts?.requestMs ?? DEFAULT_TIMEOUTS.requestMs,
    };
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.closing = new AbortController();
    // Every request in flight listens to it: as many listeners as requests, by design.
    setMaxListeners(0, this.closing.signal);
    this.getRetries = getRetries;
    this.retryBaseMs = options.retryBaseMs ?? 200;
    this.onCall = options.onCall;
    this.ownsDispatcher = !options.dispatcher;
    this.nodes = urls.map((url, i) => ({
      url: given[i] as string,
      origin: url.origin,
      dispatcher:
        options.dispatcher ??
        new Pool(url.origin, {
          connections: options.connections ?? 8,
          connect: { timeout: this.timeouts.connectMs },
          headersTimeout: this.timeouts.headersMs,
          bodyTimeout: this.timeouts.bodyMs,
        }),
    }));
  }

  /** Every node's URL, as configured (one for a single broker). */
  get nodeUrls(): readonly string[] {
    return this.nodes.map((n) => n.url);
  }

  /** The URL of the node asked next: the one that answered last. */
  get node(): string {
    return this.current().url;
  }

  /**
   * The same settings on node `url` alone, through its pool (closed with this transport's): what
   * a check of each node asks through (/readyz). This transport itself when it has one node.
   */
  onlyNode(url: string): Transport {
    if (this.nodes.length === 1) return this;
    const node = this.nodes.find((n) => n.url === url);
    if (!node) throw new TypeError(`ManagementClient: ${url} is not one of its nodes`);
    let one = this.single.get(url);
    if (!one) {
      one = new Transport({ ...this.options, url, dispatcher: node.dispatcher });
      this.single.set(url, one);
    }
    return one;
  }

  private current(): BrokerNode {
    return this.nodes[this.cursor.index % this.nodes.length] as BrokerNode;
  }

  /** Leaves `node` for the next one, unless another call has already moved on. */
  private leave(node: BrokerNode): void {
    if (this.current() === node) this.cursor.index = (this.cursor.index + 1) % this.nodes.length;
  }

  /**
   * The same transport (pool, settings) with one budget for every call made
   * through it from now on, retries included: a call that cannot finish in what is left fails
   * as `timeout`, and no retry starts that could not. One question, one budget.
   */
  forQuestion(budgetMs: number, options: { stretchableToMs?: number } = {}): Transport {
    const view = Object.create(this) as Transport;
    view.deadlineAt = Math.min(this.deadlineAt ?? Number.POSITIVE_INFINITY, now() + budgetMs);
    view.stretchableTo =
      options.stretchableToMs === undefined
        ? undefined
        : Math.max(view.deadlineAt, now() + options.stretchableToMs);
    // The pool stays the parent's: closing the view closes nothing.
    Object.defineProperty(view, 'ownsDispatcher', { value: false });
    return view;
  }

  /**
   * Closes the client's own pool: requests in flight may finish for `graceMs`, then they are
   * aborted and the connections destroyed. Shutdown never waits on a broker that does not answer.
   */
  async close(graceMs = 5_000): Promise<void> {
    if (!this.ownsDispatcher) return;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), graceMs);
    });
    const closed = Promise.all(this.nodes.map((n) => n.dispatcher.close())).then(() => 'closed' as const);
    try {
      if ((await Promise.race([closed, graceOver])) === 'late') {
        this.closing.abort(deadlineError(graceMs, 'the client was closed'));
        await Promise.all(this.nodes.map((n) => n.dispatcher.destroy()));
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * `/api/` + each segment through `pathSegment`: percent-encoded (vhost "/" -> `%2F`), and
   * refused when the HTTP API cannot address it ("." and ".." are normalised away by the broker).
   */
  path(resource: string, vhost?: string, name?: string): string {
    let path = `${this.prefix}/api/${resource}`;
    if (vhost !== undefined) path += `/${pathSegment(vhost, 'vhost')}`;
    if (name !== undefined) path += `/${pathSegment(name)}`;
    return path;
  }

  /**
   * A default budget (no RMQ_TIMEOUT) made to fit the broker asked: what is left becomes at least
   * `ms`, up to where it may be stretched (`forQuestion`'s `stretchableToMs`); attempts in flight
   * get the time too. A budget the user set is never stretched.
   */
  /** Whether this view's budget is a default one, which `stretch` may stretch. */
  get stretchable(): boolean {
    return this.stretchableTo !== undefined && this.deadlineAt !== undefined;
  }

  stretch(ms: number): void {
    if (this.stretchableTo === undefined || this.deadlineAt === undefined) return;
    this.deadlineAt = Math.min(this.stretchableTo, Math.max(this.deadlineAt, now() + ms));
  }

  /** What is left of this view's budget, in ms; `Infinity` without one. */
  private left(): number {
    return this.deadlineAt === undefined ? Number.POSITIVE_INFINITY : this.deadlineAt - now();
  }

  /** GETs are retried, writes never; every retry inside this view's budget. */
  private retryPolicy(method: HttpMethod): RetryPolicy {
    return {
      retries: method === 'GET' ? this.getRetries : 0,
      baseMs: this.retryBaseMs,
      left: () => this.left(),
    };
  }

  /**
   * Sends one attempt. The returned `release` must be called once the body is consumed (or
   * dropped): until then the attempt's deadline stays armed, so a body that drips is cut too.
   */
  private async send(
    node: BrokerNode,
    method: HttpMethod,
    path: string,
    json?: unknown,
  ): Promise<{ res: Dispatcher.ResponseData; release: () => void }> {
    const headers: Record<string, string> = { authorization: this.authorization, accept: 'application/json' };
    let body: string | undefined;
    if (json !== undefined) {
      body = JSON.stringify(json);
      // the operator-policy endpoint refuses anything else
      headers['content-type'] = 'application/json';
    }
    // undici's own headers/body timers tick once a second (300 ms fires after ~1 s, 2.5 s after
    // ~3 s): too coarse for Slack's 3 s. Our own timers bound the wait for the answer's headers,
    // counted from the call (pool slot, connect and the broker's work included), and the whole
    // attempt, body included, by `requestMs` and what is left of the question's budget.
    const controller = new AbortController();
    const left = this.left();
    if (left <= 0) throw deadlineError(0, "the question's budget is spent");
    const startedAt = now();
    let totalMs = Math.min(this.timeouts.requestMs, left);
    let total: NodeJS.Timeout;
    const arm = (ms: number) => {
      const byBudget = this.left() < this.timeouts.requestMs - (now() - startedAt);
      total = setTimeout(() => {
        // The budget stretched meanwhile (`stretch`): the attempt is given the time.
        const more = Math.min(this.left(), this.timeouts.requestMs - (now() - startedAt));
        if (byBudget && more >= 1) {
          totalMs += more;
          arm(more);
          return;
        }
        // A timer fires on the event loop's millisecond clock, which may run a fraction of a
        // millisecond ahead of `now()`: once the budget has cut an attempt, it is spent for every
        // later call of the question, whatever `now()` says.
        if (byBudget) this.deadlineAt = Math.min(this.deadlineAt ?? Number.POSITIVE_INFINITY, now());
        controller.abort(deadlineError(totalMs, byBudget ? "the question's budget" : 'requestMs'));
      }, ms);
    };
    arm(totalMs);
    const headersTimer = setTimeout(() => {
      const ms = this.timeouts.headersMs;
      controller.abort(
        Object.assign(new Error(`no answer within ${ms} ms`), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
      );
    }, this.timeouts.headersMs);
    const onClosing = () => controller.abort(this.closing.signal.reason);
    this.closing.signal.addEventListener('abort', onClosing, { once: true });
    const release = () => {
      clearTimeout(total);
      clearTimeout(headersTimer);
      this.closing.signal.removeEventListener('abort', onClosing);
    };
    if (this.closing.signal.aborted) onClosing();
    try {
      const res = await node.dispatcher.request({
        origin: node.origin,
        path,
        method,
        headers,
        body,
        signal: controller.signal,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      });
      clearTimeout(headersTimer);
      return { res, release };
    } catch (e) {
      release();
      throw e;
    }
  }

  /** The body as text, refused past `limit` bytes (the connection is dropped, not drained). */
  private async readBody(res: Dispatcher.ResponseData, path: string, limit: number): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        res.body.destroy();
        throw tooLarge(path, 'the answer', limit);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  private report(info: CallInfo): void {
    if (!this.onCall) return;
    try {
      this.onCall(info);
    } catch {
      // a metrics hook must not break a request
    }
  }

  /**
   * After an attempt on `node` failed with `error` (`cause`: what was thrown): whether the next
   * attempt goes to another node at once (true), or waits its backoff (false). The node is left
   * for the next whenever it failed as a node (unreachable, timed out, 5xx), so the next call goes
   * elsewhere too; a failover is free of the backoff once per other node of the call.
   */
  private failover(
    node: BrokerNode,
    method: HttpMethod,
    error: RabbitError,
    cause: unknown,
    failovers: number,
  ): boolean {
    if (this.nodes.length < 2 || !error.isRetryable) return false;
    this.leave(node);
    if (method !== 'GET' && !neverSent(cause)) return false;
    return failovers < this.nodes.length - 1 && this.left() > 0;
  }

  /** One request with its whole body; 2xx or a thrown RabbitError. Retries GETs only. */
  async call(method: HttpMethod, path: string, json?: unknown): Promise<HttpReply> {
    const retry = this.retryPolicy(method);
    let failovers = 0;
    for (let attempt = 0; ; attempt++) {
      const started = now();
      const node = this.current();
      let status: number | null = null;
      let wait: number | undefined;
      try {
        const { res, release } = await this.send(node, method, path, json);
        try {
          status = res.statusCode;
          const text = await this.readBody(res, path, this.limits.bodyBytes);
          if (status < 200 || status > 299)
            throw errorFromResponse(method, path, status, text, this.options.credentialsFrom);
          this.report({ method, path, status, ms: now() - started, attempt, node: node.url });
          return { status, text };
        } finally {
          release();
        }
      } catch (e) {
        const error = errorFromFailure(method, path, e);
        this.report({
          method,
          path,
          status,
          ms: now() - started,
          attempt,
          error: error.code,
          node: node.url,
        });
        if (this.failover(node, method, error, e, failovers)) {
          failovers++;
          continue;
        }
        wait = retryDelay(retry, attempt - failovers, { retryable: error.isRetryable });
        if (wait === undefined) throw error;
      }
      await sleep(wait);
    }
  }

  private parse<S extends z.ZodType>(path: string, schema: S, text: string): z.output<S> {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new RabbitError({
        code: 'bad-response',
        method: 'GET',
        path,
        message: 'body is not JSON',
        cause: e,
      });
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw notAsExpected(path, parsed.error);
    return parsed.data;
  }

  async getJson<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    return this.parse(path, schema, (await this.call('GET', path)).text);
  }

  async getJsonOrNull<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S> | null> {
    try {
      return await this.getJson(path, schema);
    } catch (e) {
      if (e instanceof RabbitError && e.code === 'not-found') return null;
      throw e;
    }
  }

  /** The body's chunks, refused once they add up to more than `limit` bytes. */
  private async *capped(res: Dispatcher.ResponseData, path: string, limit: number): AsyncGenerator<Buffer> {
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(path, 'the listing', limit);
      yield chunk;
    }
  }

  /**
   * A GET whose body is a JSON array, yielded element by element as it arrives. Retried like
   * any GET as long as nothing has been yielded yet; after that a failure ends the listing.
   */
  async *streamList<S extends z.ZodType>(path: string, schema: S): AsyncGenerator<z.output<S>, void> {
    let yielded = 0;
    let failovers = 0;
    for (let attempt = 0; ; attempt++) {
      const started = now();
      const node = this.current();
      let status: number | null = null;
      let res: Dispatcher.ResponseData | undefined;
      let release = () => {};
      let finished = false;
      let failed = false;
      let wait: number | undefined;
      const reported = (error?: RabbitErrorCode) =>
        this.report({
          method: 'GET',
          path,
          status,
          ms: now() - started,
          attempt,
          node: node.url,
          ...(error ? { error } : {}),
        });
      try {
        ({ res, release } = await this.send(node, 'GET', path));
        status = res.statusCode;
        if (status < 200 || status > 299) {
          throw errorFromResponse(
            'GET',
            path,
            status,
            await this.readBody(res, path, this.limits.bodyBytes),
            this.options.credentialsFrom,
          );
        }
        let index = 0;
        const elements = parseJsonArrayStream(this.capped(res, path, this.limits.listingBytes), {
          maxElementChars: this.limits.itemBytes,
        });
        for await (const element of elements) {
          const parsed = schema.safeParse(element);
          if (!parsed.success) throw notAsExpected(path, parsed.error, `item ${index}: `);
          index++;
          yielded++;
          yield parsed.data;
        }
        finished = true;
        reported();
        return;
      } catch (e) {
        failed = true;
        const error =
          e instanceof ElementTooLarge
            ? tooLarge(path, `item ${e.index}`, this.limits.itemBytes)
            : errorFromFailure('GET', path, e);
        reported(error.code);
        if (yielded === 0 && this.failover(node, 'GET', error, e, failovers)) {
          failovers++;
          continue;
        }
        wait =
          yielded > 0
            ? undefined
            : retryDelay(this.retryPolicy('GET'), attempt - failovers, { retryable: error.isRetryable });
        if (wait === undefined) throw error;
      } finally {
        release();
        if (!finished) {
          // the consumer stopped early, or we failed: drop the rest of the body and its connection
          if (res && !res.body.destroyed) res.body.destroy();
          if (!failed) reported();
        }
      }
      await sleep(wait);
    }
  }
}
