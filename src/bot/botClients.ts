import type { Redis } from 'ioredis';
import type { Config } from '../config/index.ts';
import { ManagementClient, type ManagementClientOptions, type Timeouts } from '../rabbit/index.ts';
import { openRedis } from '../redis/index.ts';
import type { Metrics } from './metrics/metrics.ts';

/**
 * The bot's clients, as the composition root (src/bot/bot.ts) makes them: one management client per
 * environment (the Slack path's timeouts, or a background task's), and the app's Redis.
 */

/**
 * On Slack's path the answer goes out through the response URL, so a slow broker costs the user
 * seconds, never the acknowledgement. Each question also has one budget (RMQ_TIMEOUT, default
 * QUESTION_BUDGET_MS.slack, applied per question by the environment directory) inside which
 * quick failures are retried; no attempt outlives it.
 */
export const SLACK_PATH_TIMEOUTS: Timeouts = {
  connectMs: 2000,
  headersMs: 10_000,
  bodyMs: 10_000,
  requestMs: 10_000,
};

/** How long a shutdown lets broker requests still under way finish before aborting them. */
export const CLIENT_CLOSE_GRACE_MS = 1_000;

export function createBrokers(
  config: Config,
  metrics: Metrics,
  options: { timeouts?: Partial<Timeouts> } & Partial<
    Pick<ManagementClientOptions, 'getRetries' | 'retryBaseMs'>
  > = {},
): Map<string, ManagementClient> {
  const { timeouts, ...rest } = options;
  return new Map(
    config.environments.map((e) => [
      e.name,
      new ManagementClient({
        url: e.urls,
        user: e.user,
        password: e.password,
        ...(e.credentialsFrom ? { credentialsFrom: e.credentialsFrom } : {}),
        getRetries: 2,
        limits: config.bodyLimits,
        ...rest,
        timeouts: { ...SLACK_PATH_TIMEOUTS, ...timeouts },
        onCall: metrics.onBrokerCall(e.name),
      }),
    ]),
  );
}

export function createRedis(url: string): Redis {
  // Fail a command quickly rather than queue it forever: the only use on this path is dedupe.
  return openRedis(url, { maxRetriesPerRequest: 1, connectTimeout: 3000, commandTimeout: 2000 });
}
