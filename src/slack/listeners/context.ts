import { randomBytes } from 'node:crypto';
import type { Logger } from '../../log.ts';
import type { PatternCache } from '../../policy/pattern.ts';
import type { Environments } from '../commands/types.ts';
import type { InFlight } from '../inflight.ts';
import type { Metrics, Via } from '../metrics.ts';
import type { EventDedupe } from '../redis.ts';

/** What the listeners are built from; assembled once by createApp. */
export interface ListenerDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly environments: Environments;
  readonly patterns: PatternCache;
  readonly inFlight: InFlight;
  readonly dedupe: EventDedupe;
}

/** Short enough to read out in a thread, long enough to find in the logs. */
export function newRequestId(): string {
  return randomBytes(6).toString('hex');
}

/** Counts the request and its latency once the answer was handed to Slack (or failed to be), and logs it. */
export function requestDone(
  metrics: Metrics,
  logger: Logger,
  via: Via,
  started: number,
  answer: { command: string; outcome: string },
): void {
  metrics.requests.inc({ command: answer.command, outcome: answer.outcome, via });
  metrics.requestSeconds.observe({ command: answer.command, via }, (performance.now() - started) / 1000);
  logger.info(
    { command: answer.command, outcome: answer.outcome, ms: Math.round(performance.now() - started) },
    'request done',
  );
}

/** Slack's error code from a Web API or response URL failure, for logs (never the token). */
export function slackErrorCode(err: unknown): string {
  const e = err as { data?: { error?: unknown }; statusCode?: unknown; code?: unknown } | null;
  if (typeof e?.data?.error === 'string') return e.data.error;
  if (typeof e?.statusCode === 'number') return `http-${e.statusCode}`;
  return typeof e?.code === 'string' ? e.code : 'unknown';
}
