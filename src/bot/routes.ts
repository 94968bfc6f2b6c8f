import type { ServerResponse } from 'node:http';
import type { CustomRoute } from '@slack/bolt';
import { jsonText } from '../text/index.ts';
import type { HealthMonitor } from './health.ts';
import type { Metrics } from './metrics/metrics.ts';

/**
 * The routes beside `POST /slack/events`, on the same port and not signature-checked: the probes
 * (`GET /livez`, `GET /readyz`, `GET /healthz`, answered from src/bot/health.ts) and `GET /metrics`.
 */

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/** `GET /livez`: 200 while the process serves, 503 once it drains; from the process alone. */
export function livezRoute(health: Pick<HealthMonitor, 'draining'>): CustomRoute {
  return {
    path: '/livez',
    method: ['GET'],
    handler: (_req, res) => {
      const ok = !health.draining;
      send(res, ok ? 200 : 503, 'application/json', jsonText({ ok, draining: !ok }));
    },
  };
}

/**
 * `GET /readyz`, and `GET /healthz` (kept for compatibility, the same answer): 200 when ready,
 * 503 otherwise, at once from the last background check (src/bot/health.ts), never waiting.
 */
export function readinessRoutes(health: Pick<HealthMonitor, 'readiness'>): CustomRoute[] {
  return ['/readyz', '/healthz'].map((path) => ({
    path,
    method: ['GET'],
    handler: (_req, res) => {
      const readiness = health.readiness();
      send(res, readiness.ok ? 200 : 503, 'application/json', jsonText(readiness));
    },
  }));
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
