/**
 * The RabbitMQ management HTTP API, as the bot needs it. One keep-alive connection pool per
 * client; every answer parsed with zod; every failure a RabbitError with a stable code.
 * GETs are retried (network, timeout, 5xx); writes never are: a PUT whose answer was lost may
 * have been applied, and the caller must decide.
 *
 * Nothing here waits or grows without bound: every request has a total deadline (headers and
 * body), every body a size limit (a listing: per item and in all), and `forQuestion(ms)` gives a
 * view of the client whose calls share one budget, retries included. Callers with other needs
 * (the apply job) pass other `timeouts`, `limits` and `getRetries`.
 */
import { setMaxListeners } from 'node:events';
import { type Dispatcher, Pool } from 'undici';
import type { z } from 'zod';
import { type BrokerVersion, type Policy, type PolicyLayer, parseVersion } from '../policy/types.ts';
import { errorFromFailure, errorFromResponse, RabbitError, type RabbitErrorCode } from './errors.ts';
import { ElementTooLarge, parseJsonArrayStream } from './jsonArrayStream.ts';
import {
  describeIssues,
  type ExchangeDetail,
  type ExchangeListing,
  exchangeSchema,
  type FederationState,
  federationLinksSchema,
  nameOnlySchema,
  overviewSchema,
  type Permission,
  pagedQueuesSchema,
  parameterNamesSchema,
  permissionSchema,
  policyListSchema,
  policySchema,
  type QueueDetail,
  type QueueKind,
  type QueueListing,
  type QueueStats,
  queueDetailSchema,
  queueListItemSchema,
  queueStatsSchema,
  toExchange,
  toLiveQueue,
  toPolicy,
  toQueueDetail,
  toQueueListing,
  toWhoAmI,
  vhostListSchema,
  type WhoAmI,
  whoamiSchema,
} from './responses.ts';
import { pathSegment } from './segment.ts';

export type HttpMethod = 'GET' | 'PUT' | 'DELETE';

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
}

export interface ManagementClientOptions {
  /** Management root, e.g. `http://127.0.0.1:15672` (a path prefix is kept). No credentials in it. */
  readonly url: string;
  readonly user: string;
  readonly password: string;
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

export interface BrokerOverview {
  readonly version: BrokerVersion;
  /** `rabbitmq_version` as sent, e.g. "3.10.8". */
  readonly versionText: string;
  readonly clusterName?: string;
}

export interface PutQueueOptions {
  readonly kind: QueueKind;
  readonly arguments?: Readonly<Record<string, unknown>>;
}

/** A management API response as received: status and body text, before parsing. */
interface HttpReply {
  readonly status: number;
  readonly text: string;
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

const LAYER_PATH: Readonly<Record<PolicyLayer, string>> = {
  user: 'policies',
  operator: 'operator-policies',
};

const QUEUE_COLUMNS_NO_STATS = 'name,type,arguments,policy';
const QUEUE_COLUMNS_STATS = 'name,type,arguments,policy,operator_policy,effective_policy_definition';
const EXCHANGE_COLUMNS = 'name,type,arguments,policy';
const QUEUE_COLUMNS_LIVE =
  'name,messages,messages_ready,message_bytes_ready,messages_unacknowledged,consumers,idle_since';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class ManagementClient {
  private readonly origin: string;
  private readonly prefix: string;
  private readonly authorization: string;
  private readonly timeouts: Timeouts;
  private readonly getRetries: number;
  private readonly retryBaseMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly onCall: ((info: CallInfo) => void) | undefined;
  private readonly limits: BodyLimits;
  /** Aborted by `close()` once its grace period is over: every request still under way ends. */
  private readonly closing: AbortController;
  /** `performance.now()` by which every call of this view must be done (`forQuestion`). */
  private deadlineAt: number | undefined;
  private overviewCache: Promise<BrokerOverview> | undefined;

  constructor(options: ManagementClientOptions) {
    const url = new URL(options.url);
    if (url.username || url.password) {
      throw new TypeError('ManagementClient: pass credentials as user/password, not inside the URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`ManagementClient: url must be http(s), got ${url.protocol}`);
    }
    const getRetries = options.getRetries ?? 2;
    if (!Number.isInteger(getRetries) || getRetries < 0) {
      throw new TypeError('ManagementClient: getRetries must be a whole number >= 0');
    }
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
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
    if (options.dispatcher) {
      this.dispatcher = options.dispatcher;
      this.ownsDispatcher = false;
    } else {
      this.dispatcher = new Pool(this.origin, {
        connections: options.connections ?? 8,
        connect: { timeout: this.timeouts.connectMs },
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      });
      this.ownsDispatcher = true;
    }
  }

  /**
   * The same client (pool, settings, cached overview) with one budget for every call made
   * through it from now on, retries included: a call that cannot finish in what is left fails
   * as `timeout`, and no retry starts that could not. One question, one budget.
   */
  forQuestion(budgetMs: number): ManagementClient {
    const view = Object.create(this) as ManagementClient;
    view.deadlineAt = Math.min(this.deadlineAt ?? Number.POSITIVE_INFINITY, performance.now() + budgetMs);
    // The pool stays the parent's: closing the view closes nothing. Writes to the overview cache
    // land on the view; reads fall through to the parent's.
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
    const closed = this.dispatcher.close().then(() => 'closed' as const);
    try {
      if ((await Promise.race([closed, graceOver])) === 'late') {
        this.closing.abort(deadlineError(graceMs, 'the client was closed'));
        await this.dispatcher.destroy();
      }
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- broker ---------------------------------------------------------------------------

  /** Cached per client: the version decides which keys and apply-to values exist. */
  overview(): Promise<BrokerOverview> {
    if (!this.overviewCache) {
      const path = this.path('overview');
      this.overviewCache = this.getJson(path, overviewSchema).then((o) => {
        const version = parseVersion(o.rabbitmq_version);
        if (!version) {
          throw new RabbitError({
            code: 'bad-response',
            method: 'GET',
            path,
            message: `unreadable rabbitmq_version ${JSON.stringify(o.rabbitmq_version)}`,
          });
        }
        return {
          version,
          versionText: o.rabbitmq_version,
          ...(o.cluster_name === undefined ? {} : { clusterName: o.cluster_name }),
        };
      });
      this.overviewCache.catch(() => {
        this.overviewCache = undefined;
      });
    }
    return this.overviewCache;
  }

  async whoami(): Promise<WhoAmI> {
    return toWhoAmI(await this.getJson(this.path('whoami'), whoamiSchema));
  }

  /**
   * `user`'s permissions in `vhost`, `null` when it has none (the broker's 404). Policy writes
   * need some permission in the vhost plus the `policymaker` (or `administrator`) tag.
   */
  async permissions(vhost: string, user: string): Promise<Permission | null> {
    return this.getJsonOrNull(this.path('permissions', vhost, user), permissionSchema);
  }

  async listVhosts(): Promise<string[]> {
    const vhosts = await this.getJson(this.path('vhosts'), vhostListSchema);
    return vhosts.map((v) => v.name);
  }

  // ---- policies -------------------------------------------------------------------------

  async listPolicies(vhost: string): Promise<Policy[]> {
    return (await this.getJson(this.path('policies', vhost), policyListSchema)).map(toPolicy);
  }

  async listOperatorPolicies(vhost: string): Promise<Policy[]> {
    return (await this.getJson(this.path('operator-policies', vhost), policyListSchema)).map(toPolicy);
  }

  /** The policies of one layer in every vhost (one request; what the bot compares on an interval). */
  async listAllPolicies(layer: PolicyLayer): Promise<Policy[]> {
    return (await this.getJson(this.path(LAYER_PATH[layer]), policyListSchema)).map(toPolicy);
  }

  /** `null` when there is no such policy (or no such vhost). */
  async getPolicy(layer: PolicyLayer, vhost: string, name: string): Promise<Policy | null> {
    const p = await this.getJsonOrNull(this.path(LAYER_PATH[layer], vhost, name), policySchema);
    return p && toPolicy(p);
  }

  /**
   * Replaces the whole policy (the broker has no partial update and no compare-and-set).
   * 201 -> created, 204 -> updated, also when nothing changed.
   */
  async putPolicy(layer: PolicyLayer, policy: Policy): Promise<'created' | 'updated'> {
    const reply = await this.call('PUT', this.path(LAYER_PATH[layer], policy.vhost, policy.name), {
      pattern: policy.pattern,
      definition: policy.definition,
      priority: policy.priority,
      'apply-to': policy.applyTo,
    });
    return reply.status === 201 ? 'created' : 'updated';
  }

  /** Throws RabbitError 'not-found' when there is no such policy. */
  async deletePolicy(layer: PolicyLayer, vhost: string, name: string): Promise<void> {
    await this.call('DELETE', this.path(LAYER_PATH[layer], vhost, name));
  }

  // ---- objects --------------------------------------------------------------------------

  /**
   * One queue, `null` when it does not exist.
   *
   * Trap: on this endpoint `policy`, `operator_policy` and `effective_policy_definition` come
   * from queue statistics, not from the queue record. Seen on 3.10.8: the keys are ABSENT for the
   * first seconds after a queue is declared (no stats emitted yet), then `null` ("" also occurs)
   * when there is none, and they trail a policy change by one stats interval or more (3–16 s).
   * So `undefined` = not reported (unknown), `null` = reported none. With `disable_stats=true`
   * this endpoint leaves them out altogether, so we never ask for that here.
   */
  async getQueue(vhost: string, name: string): Promise<QueueDetail | null> {
    const q = await this.getJsonOrNull(this.path('queues', vhost, name), queueDetailSchema);
    return q && toQueueDetail(q);
  }

  /**
   * One exchange, `null` when it does not exist. Unlike queues, `policy` here is read from the
   * exchange record: current, and the key is simply absent when no user policy applies.
   * Exchanges never report an operator policy (one may still match them: compute it).
   * The default exchange is "" in listings and `amq.default` in the path.
   */
  async getExchange(vhost: string, name: string): Promise<ExchangeDetail | null> {
    const e = await this.getJsonOrNull(this.path('exchanges', vhost, name || 'amq.default'), exchangeSchema);
    return e && toExchange(vhost, e);
  }

  /**
   * Every queue of a vhost, in ONE request parsed as a stream. Never paged: the broker builds
   * and sorts the whole list for each page, so paging costs (queues / page size) whole lists.
   *
   * - `stats: false` asks with `disable_stats=true` (7–10x cheaper). Checked on 3.10.8 (and
   *   4.0.5): this listing's `policy` is read from the queue record, so it changes the instant a
   *   policy is set or deleted, and the key is left out when there is none (mapped to `null`).
   *   It never carries operator_policy or effective_policy_definition.
   * - `stats: true` adds `operator_policy` and `effective_policy_definition`; all three fields
   *   are then stats-derived: absent (`undefined`) until first reported, and lagging changes.
   */
  async *streamQueues(vhost: string, opts: { stats: boolean }): AsyncIterable<QueueListing> {
    const query = opts.stats
      ? `?columns=${QUEUE_COLUMNS_STATS}`
      : `?disable_stats=true&columns=${QUEUE_COLUMNS_NO_STATS}`;
    for await (const q of this.streamList(this.path('queues', vhost) + query, queueListItemSchema)) {
      yield toQueueListing(vhost, q, opts.stats);
    }
  }

  /**
   * The user policy the broker applies to one queue, read from the queue record (current), for
   * when the detail GET's stats-derived fields are not published yet (a queue declared seconds
   * ago: up to ~10 s for a quorum queue). `undefined` when no such queue exists.
   *
   * The detail GET with `disable_stats=true` omits the policy fields, so this asks the listing,
   * narrowed with its `name` filter. That filter is the management UI's search: case-insensitive,
   * and honoured only with `page` — so the regex is anchored and escaped, and the exact name is
   * picked out here. The broker still builds the vhost's whole list to answer (O(queues)): use it
   * only when the cheap GET did not report.
   */
  async queuePolicyFromRecord(vhost: string, name: string): Promise<string | null | undefined> {
    const regex = `^${name.replace(/[^A-Za-z0-9\u0080-\uffff]/g, (c) => `\\${c}`)}$`;
    const query = `?disable_stats=true&use_regex=true&page=1&page_size=500&name=${encodeURIComponent(regex)}&columns=${QUEUE_COLUMNS_NO_STATS}`;
    const page = await this.getJson(this.path('queues', vhost) + query, pagedQueuesSchema);
    const hit = page.items.find((q) => q.name === name);
    return hit ? (toQueueListing(vhost, hit, false).policy ?? null) : undefined;
  }

  /**
   * Every queue's live statistics (ready, their bytes, unacknowledged, consumers, idle since),
   * one request, streamed: the preview's reading of what is there now. A separate listing from
   * `streamQueues({ stats: false })` because the policy must come from the queue record (current)
   * while these columns exist only as statistics (seconds behind); it runs beside it.
   */
  async *streamQueueStats(vhost: string): AsyncIterable<QueueStats> {
    const path = `${this.path('queues', vhost)}?columns=${QUEUE_COLUMNS_LIVE}`;
    for await (const q of this.streamList(path, queueStatsSchema))
      yield { name: q.name, live: toLiveQueue(q) };
  }

  /**
   * The vhost's federation upstreams and upstream sets, and the objects whose links run.
   * `links: null` when the federation plugin is not enabled (its endpoint answers 404).
   */
  async federation(vhost: string): Promise<FederationState> {
    // Every path first: a vhost the API cannot address refuses before any request starts.
    const paths = {
      upstreams: this.path('parameters/federation-upstream', vhost),
      sets: this.path('parameters/federation-upstream-set', vhost),
      links: this.path('federation-links', vhost),
    };
    const names = async (path: string) =>
      new Set(((await this.getJsonOrNull(path, parameterNamesSchema)) ?? []).map((p) => p.name));
    const [upstreams, upstreamSets, links] = await Promise.all([
      names(paths.upstreams),
      names(paths.sets),
      this.getJsonOrNull(paths.links, federationLinksSchema),
    ]);
    return {
      upstreams,
      upstreamSets,
      links:
        links && new Set(links.filter((l) => l.status === 'running').map((l) => l.exchange ?? l.queue ?? '')),
    };
  }

  /** Every exchange of a vhost (the default one named ""), one request, streamed. */
  async *streamExchanges(vhost: string): AsyncIterable<ExchangeListing> {
    const path = `${this.path('exchanges', vhost)}?columns=${EXCHANGE_COLUMNS}`;
    for await (const e of this.streamList(path, exchangeSchema)) yield toExchange(vhost, e);
  }

  /**
   * Only the names of a vhost's queues or exchanges, one request, streamed: what "did you mean"
   * folds over (never a call per name). `columns=name` and no statistics keep the body to about
   * 30 bytes a queue: 100,000 queues are ~3 MB, read as they arrive.
   */
  streamNames(what: 'queues' | 'exchanges', vhost: string): AsyncIterable<{ name: string }> {
    // The listing's own iterator, not a generator over it: at 100,000 names each hop counts.
    return this.streamList(`${this.path(what, vhost)}?disable_stats=true&columns=name`, nameOnlySchema);
  }

  // ---- lab and test helpers -------------------------------------------------------------

  /** Creates the vhost (the creating user gets full permissions in it). */
  async putVhost(name: string): Promise<void> {
    await this.call('PUT', this.path('vhosts', name), {});
  }

  /** Deletes the vhost and everything in it; no error if it is already gone. */
  async deleteVhost(name: string): Promise<void> {
    await this.ignoreNotFound(this.call('DELETE', this.path('vhosts', name)));
  }

  /** Durable queue; quorum queues and streams get their `x-queue-type`. */
  async putQueue(vhost: string, name: string, opts: PutQueueOptions): Promise<void> {
    const args: Record<string, unknown> = { ...opts.arguments };
    if (opts.kind !== 'classic') args['x-queue-type'] = opts.kind;
    await this.call('PUT', this.path('queues', vhost, name), {
      durable: true,
      auto_delete: false,
      arguments: args,
    });
  }

  async deleteQueue(vhost: string, name: string): Promise<void> {
    await this.call('DELETE', this.path('queues', vhost, name));
  }

  async putExchange(vhost: string, name: string, type: string): Promise<void> {
    await this.call('PUT', this.path('exchanges', vhost, name), {
      type,
      durable: true,
      auto_delete: false,
      internal: false,
      arguments: {},
    });
  }

  // ---- plumbing -------------------------------------------------------------------------

  /**
   * `/api/` + each segment through `pathSegment`: percent-encoded (vhost "/" -> `%2F`), and
   * refused when the HTTP API cannot address it ("." and ".." are normalised away by the broker).
   */
  private path(resource: string, vhost?: string, name?: string): string {
    let path = `${this.prefix}/api/${resource}`;
    if (vhost !== undefined) path += `/${pathSegment(vhost, 'vhost')}`;
    if (name !== undefined) path += `/${pathSegment(name)}`;
    return path;
  }

  private async ignoreNotFound(p: Promise<unknown>): Promise<void> {
    try {
      await p;
    } catch (e) {
      if (!(e instanceof RabbitError && e.code === 'not-found')) throw e;
    }
  }

  /** What is left of this view's budget, in ms; `Infinity` without one. */
  private left(): number {
    return this.deadlineAt === undefined ? Number.POSITIVE_INFINITY : this.deadlineAt - performance.now();
  }

  /**
   * Sends one attempt. The returned `release` must be called once the body is consumed (or
   * dropped): until then the attempt's deadline stays armed, so a body that drips is cut too.
   */
  private async send(
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
    const totalMs = Math.min(this.timeouts.requestMs, left);
    const total = setTimeout(
      () =>
        controller.abort(
          deadlineError(totalMs, left < this.timeouts.requestMs ? "the question's budget" : 'requestMs'),
        ),
      totalMs,
    );
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
      const res = await this.dispatcher.request({
        origin: this.origin,
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

  private backoffMs(attempt: number): number {
    const step = this.retryBaseMs * 2 ** attempt;
    return step / 2 + Math.random() * (step / 2);
  }

  /** Whether a retry after `wait` ms could still finish inside the question's budget. */
  private canRetryAfter(wait: number): boolean {
    return this.left() - wait > 0;
  }

  /** One request with its whole body; 2xx or a thrown RabbitError. Retries GETs only. */
  private async call(method: HttpMethod, path: string, json?: unknown): Promise<HttpReply> {
    const retries = method === 'GET' ? this.getRetries : 0;
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      let status: number | null = null;
      let wait = 0;
      try {
        const { res, release } = await this.send(method, path, json);
        try {
          status = res.statusCode;
          const text = await this.readBody(res, path, this.limits.bodyBytes);
          if (status < 200 || status > 299) throw errorFromResponse(method, path, status, text);
          this.report({ method, path, status, ms: performance.now() - started, attempt });
          return { status, text };
        } finally {
          release();
        }
      } catch (e) {
        const error = errorFromFailure(method, path, e);
        this.report({ method, path, status, ms: performance.now() - started, attempt, error: error.code });
        wait = this.backoffMs(attempt);
        if (attempt >= retries || !error.isRetryable || !this.canRetryAfter(wait)) throw error;
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
    if (!parsed.success) {
      throw new RabbitError({
        code: 'bad-response',
        method: 'GET',
        path,
        message: describeIssues(parsed.error),
        cause: parsed.error,
      });
    }
    return parsed.data;
  }

  private async getJson<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    return this.parse(path, schema, (await this.call('GET', path)).text);
  }

  private async getJsonOrNull<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S> | null> {
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
  private async *streamList<S extends z.ZodType>(path: string, schema: S): AsyncGenerator<z.output<S>, void> {
    let yielded = 0;
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      let status: number | null = null;
      let res: Dispatcher.ResponseData | undefined;
      let release = () => {};
      let finished = false;
      let failed = false;
      let wait = 0;
      try {
        ({ res, release } = await this.send('GET', path));
        status = res.statusCode;
        if (status < 200 || status > 299) {
          throw errorFromResponse('GET', path, status, await this.readBody(res, path, this.limits.bodyBytes));
        }
        let index = 0;
        const elements = parseJsonArrayStream(this.capped(res, path, this.limits.listingBytes), {
          maxElementChars: this.limits.itemBytes,
        });
        for await (const element of elements) {
          const parsed = schema.safeParse(element);
          if (!parsed.success) {
            throw new RabbitError({
              code: 'bad-response',
              method: 'GET',
              path,
              message: `item ${index}: ${describeIssues(parsed.error)}`,
              cause: parsed.error,
            });
          }
          index++;
          yielded++;
          yield parsed.data;
        }
        finished = true;
        this.report({ method: 'GET', path, status, ms: performance.now() - started, attempt });
        return;
      } catch (e) {
        failed = true;
        const error =
          e instanceof ElementTooLarge
            ? tooLarge(path, `item ${e.index}`, this.limits.itemBytes)
            : errorFromFailure('GET', path, e);
        this.report({
          method: 'GET',
          path,
          status,
          ms: performance.now() - started,
          attempt,
          error: error.code,
        });
        wait = this.backoffMs(attempt);
        if (yielded > 0 || attempt >= this.getRetries || !error.isRetryable || !this.canRetryAfter(wait))
          throw error;
      } finally {
        release();
        if (!finished) {
          // the consumer stopped early, or we failed: drop the rest of the body and its connection
          if (res && !res.body.destroyed) res.body.destroy();
          if (!failed) this.report({ method: 'GET', path, status, ms: performance.now() - started, attempt });
        }
      }
      await sleep(wait);
    }
  }
}
