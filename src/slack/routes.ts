import type { ServerResponse } from 'node:http';
import type { CustomRoute } from '@slack/bolt';
import { codeOf } from '../errors.ts';
import type { Metrics } from './metrics.ts';
import type { SlackRedis } from './redis.ts';

/**
 * The two routes beside `POST /slack/events`, on the same port and not signature-checked:
 * `GET /healthz` (can the bot reach each broker and Redis, as JSON) and `GET /metrics`.
 */

export interface CheckResult {
  readonly ok: boolean;
  readonly ms: number;
  /** An error code (`unreachable`, `timeout`, `unauthorized`…), never a message with details. */
  readonly error?: string;
}

export interface Health {
  readonly ok: boolean;
  readonly redis: CheckResult;
  readonly brokers: Record<string, CheckResult>;
  /**
   * By environment: how changes made outside the bot are caught (`events`, or `interval` with
   * the reason). Comparing on an interval is a fallback, not a failure: `ok` does not depend on it.
   */
  readonly watch?: Record<string, unknown>;
}

export interface HealthDeps {
  /**
   * By environment name; `whoami` asks the broker something small that needs valid credentials,
   * through `forQuestion` when there is one, so that a check given up is also a request ended.
   */
  readonly brokers: ReadonlyMap<
    string,
    { whoami(): Promise<unknown>; forQuestion?(budgetMs: number): { whoami(): Promise<unknown> } }
  >;
  readonly redis: Pick<SlackRedis, 'ping'>;
  readonly timeoutMs?: number;
  /** How each environment's changes outside the bot are being caught, when they are. */
  readonly watch?: () => Record<string, unknown>;
}

/**
 * A failure's name for the health document: the error's own short code (the broker client's
 * `unreachable`, `timeout`…), else what ioredis's errors mean (they carry no code), else `error`.
 */
function healthCode(err: unknown): string {
  const code = codeOf(err);
  if (code !== undefined && /^[a-z0-9_-]{1,40}$/i.test(code)) {
    return /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ENETUNREACH)$/.test(code) ? 'unreachable' : code;
  }
  const e = err as { name?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : '';
  if (e?.name === 'MaxRetriesPerRequestError' || /connection is closed|ECONNREFUSED|connect/i.test(message))
    return 'unreachable';
  if (/timed? ?out/i.test(message)) return 'timeout';
  return 'error';
}

async function timed(work: () => Promise<unknown>, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      work(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(Object.assign(new Error('timed out'), { code: 'timeout' })),
          timeoutMs,
        );
      }),
    ]);
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { ok: false, ms: Math.round(performance.now() - started), error: healthCode(err) };
  } finally {
    clearTimeout(timer);
  }
}

export async function checkHealth(deps: HealthDeps): Promise<Health> {
  const timeoutMs = deps.timeoutMs ?? 2500;
  const [redis, brokers] = await Promise.all([
    timed(() => deps.redis.ping(), timeoutMs),
    Promise.all(
      [...deps.brokers].map(
        async ([env, broker]) =>
          [env, await timed(() => (broker.forQuestion?.(timeoutMs) ?? broker).whoami(), timeoutMs)] as const,
      ),
    ),
  ]);
  const byEnv = Object.fromEntries(brokers);
  return {
    ok: redis.ok && brokers.every(([, b]) => b.ok),
    redis,
    brokers: byEnv,
    ...(deps.watch ? { watch: deps.watch() } : {}),
  };
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/** 200 when everything answers, 503 otherwise; the JSON says which part did not. */
export function healthRoute(deps: HealthDeps): CustomRoute {
  return {
    path: '/healthz',
    method: ['GET'],
    handler: (_req, res) => {
      checkHealth(deps).then(
        (health) => send(res, health.ok ? 200 : 503, 'application/json', JSON.stringify(health)),
        () => send(res, 500, 'application/json', JSON.stringify({ ok: false })),
      );
    },
  };
}

export function metricsRoute(metrics: Metrics): CustomRoute {
  return {
    path: '/metrics',
    method: ['GET'],
    handler: (_req, res) => {
      metrics.registry.metrics().then(
        (text) => send(res, 200, metrics.registry.contentType, text),
        () => send(res, 500, 'text/plain', 'metrics unavailable\n'),
      );
    },
  };
}
