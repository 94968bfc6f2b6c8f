import type { ServerResponse } from 'node:http';
import type { CustomRoute } from '@slack/bolt';
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
}

/**
 * A failure's name for the JSON: the error's own code when it has a short one (the broker
 * client's `unreachable`, `timeout`…), else what ioredis's errors mean (they carry no code).
 */
function codeOf(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && /^[a-z0-9_-]{1,40}$/i.test(e.code)) {
    return /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ENETUNREACH)$/.test(e.code) ? 'unreachable' : e.code;
  }
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
    return { ok: false, ms: Math.round(performance.now() - started), error: codeOf(err) };
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
  return { ok: redis.ok && brokers.every(([, b]) => b.ok), redis, brokers: byEnv };
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
