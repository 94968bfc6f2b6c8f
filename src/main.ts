import { pathToFileURL } from 'node:url';
import { config as loadDotenv } from 'dotenv';
import type { Redis } from 'ioredis';
import { AuditTrail } from './audit/trail.ts';
import { type Config, DEFAULT_KEY_PREFIX, loadConfig } from './config.ts';
import { ConfigError } from './errors.ts';
import { createLogger, type Logger } from './log.ts';
import { ManagementClient, type ManagementClientOptions, type Timeouts } from './rabbit/index.ts';
import { openRedis } from './redis.ts';
import {
  type AppDeps,
  type BotApp,
  createApp,
  missingSlackMessage,
  missingSlackSettings,
} from './slack/app.ts';
import { createMetrics, type Metrics } from './slack/metrics.ts';
import { slackOutsideNotifier } from './slack/outsideNotifier.ts';
import { ownWriteAnnouncer } from './watch/store.ts';
import { type Watchers, watchOutside } from './watch/watchers.ts';
import {
  APPLY_CLIENT_SETTINGS,
  type ApplyWorker,
  type ApplyWorkerDeps,
  createApplyQueue,
  createApproverDirectory,
  createWorkflow,
  jobConnection,
  type Notifier,
  startApplyWorker,
} from './workflow/index.ts';
import { RequestStore } from './workflow/store.ts';
import {
  type TimeBoxDeadlineDeps,
  type TimeBoxNotifier,
  timeBoxHandlers,
} from './workflow/timeboxDeadline.ts';
import {
  createTimeBoxQueue,
  startTimeBoxWorker,
  type TimeBoxQueue,
  type TimeBoxWorker,
} from './workflow/timeboxQueue.ts';

/**
 * The composition root of the Slack bot (`npm start`): config -> logger -> one management client
 * per environment -> Redis -> the change-request workflow and its apply worker -> the Bolt app
 * -> the watchers of changes made outside the bot. Everything is built here, once, and passed down.
 * SIGTERM (and SIGINT) stop taking requests, let answers under way finish, then close the clients.
 */

/**
 * What the apply worker works with: its own Redis connection (BullMQ blocks on it), the request
 * store and the audit trail on it, and the announcement of its writes to the watchers. Used here,
 * by the tests' workflow fixture and by bench/apply.ts, so they start the worker users run.
 */
export function applyWorkerDeps(
  redisUrl: string,
  keyPrefix: string,
  log: Logger,
  now?: () => Date,
  /** RMQ_AUDIT_KEY: the records the job appends are sealed with it. */
  auditKey?: string,
): ApplyWorkerDeps {
  const jobLog = log.child({ component: 'apply' });
  const connection = jobConnection(redisUrl, jobLog);
  return {
    connection,
    requests: new RequestStore(connection, keyPrefix, now),
    audit: new AuditTrail(connection, keyPrefix, { log: jobLog, ...(auditKey ? { key: auditKey } : {}) }),
    announceWrite: ownWriteAnnouncer(connection, keyPrefix),
  };
}

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

/**
 * The longest a shutdown may take before the process exits anyway: more than an apply job's
 * verification (60 s) and the answers' drain, less than a typical orchestrator's kill grace.
 */
export const SHUTDOWN_HARD_LIMIT_MS = 90_000;

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
        url: e.url,
        user: e.user,
        password: e.password,
        getRetries: 2,
        limits: config.bodyLimits,
        ...rest,
        timeouts: { ...SLACK_PATH_TIMEOUTS, ...timeouts },
        onCall: metrics.onBrokerCall(e.name),
      }),
    ]),
  );
}

/**
 * Change requests, composed: the workflow (on the app's Slack notifier and Bolt's
 * usergroups.users.list), the apply queue, and the apply worker with its own broker clients (a
 * background job's timeouts and retries, not a Slack answer's) and its own Redis connection.
 */
export interface ChangeRequestParts {
  /** For createApp. */
  readonly workflow: NonNullable<AppDeps['workflow']>;
  /** Starts the apply worker (and its sweep: lost jobs queued again, requests past their deadline expired). */
  startWorker(notifier: Notifier & TimeBoxNotifier, timeBox: TimeBoxFiling): Promise<ApplyWorker>;
  /** Closes the worker (the job under way finishes), the queue and the job's broker clients. */
  close(): Promise<void>;
}

/**
 * How a time box's revert is filed: approved with its change through the workflow, or, when
 * that is not possible, for approval and posted (the Slack side's ChangeRequests).
 */
export type TimeBoxFiling = Pick<TimeBoxDeadlineDeps, 'workflow' | 'revertRequest'>;

/** A time box's revert: the app's workflow, and for approval filed and posted as the Revert button files one. */
export function timeBoxFilingOf(bot: Pick<BotApp, 'changes'>): TimeBoxFiling {
  const changes = bot.changes;
  if (!changes) throw new Error('change requests are not set up');
  return {
    workflow: changes.workflow,
    async revertRequest(auditId, user, origin, reason) {
      const filed = await changes.revert(auditId, user, origin, reason);
      if (!filed.ok) throw filed.error;
      return filed.request;
    },
  };
}

export function changeRequestParts(options: {
  readonly config: Config;
  readonly redis: Redis;
  /** The Slack-path clients: filing previews on them, as a Slack answer does. */
  readonly brokers: ReadonlyMap<string, ManagementClient>;
  readonly metrics: Metrics;
  readonly logger: ReturnType<typeof createLogger>;
  readonly keyPrefix?: string;
  /** Tests shorten the worker's backoff, verification deadline and sweep interval (expiry, reminders). */
  readonly worker?: {
    readonly backoffMs?: number;
    readonly verifyDeadlineMs?: number;
    readonly attempts?: number;
    readonly sweepIntervalMs?: number;
  };
}): ChangeRequestParts {
  const { config, logger } = options;
  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const brokerOf = (brokers: ReadonlyMap<string, ManagementClient>) => (env: string) => {
    const b = brokers.get(env);
    if (!b) throw new Error(`no broker client for environment ${env}`);
    return b;
  };
  const queue = createApplyQueue({ redisUrl: config.redisUrl, keyPrefix, ...options.worker });
  const auditKey = config.auditKey ? { auditKey: config.auditKey } : {};
  const jobBrokers = createBrokers(config, options.metrics, APPLY_CLIENT_SETTINGS);
  let worker: ApplyWorker | undefined;
  let timeBoxes: TimeBoxQueue | undefined;
  let timeBoxWorker: TimeBoxWorker | undefined;
  return {
    workflow: (notifier, listGroupMembers) =>
      createWorkflow({
        redis: options.redis,
        keyPrefix,
        environments: config.environments,
        brokerFor: brokerOf(options.brokers),
        approvers: createApproverDirectory({
          approvers: new Map(config.environments.map((e) => [e.name, e.approvers])),
          requesters: new Map(config.environments.map((e) => [e.name, e.requesters])),
          listMembers: listGroupMembers,
        }),
        queue,
        notifier,
        log: logger,
        ...auditKey,
      }),
    async startWorker(notifier, timeBox) {
      // Time boxes: the deadline scheduled once the change is recorded; at it, the revert (or
      // the request for a new approval) by whichever replica's time-box worker takes the job.
      timeBoxes = createTimeBoxQueue({ redisUrl: config.redisUrl, keyPrefix });
      const schedule = timeBoxes;
      worker = await startApplyWorker({
        redisUrl: config.redisUrl,
        keyPrefix,
        ...applyWorkerDeps(config.redisUrl, keyPrefix, logger, undefined, config.auditKey),
        brokerFor: brokerOf(jobBrokers),
        notifier,
        log: logger,
        onRecorded: async (r, record) => {
          if (r.timeBoxMs !== undefined) await schedule.schedule(r.id, new Date(record.at), r.timeBoxMs);
        },
        ...options.worker,
      });
      timeBoxWorker = startTimeBoxWorker({
        redisUrl: config.redisUrl,
        keyPrefix,
        log: logger,
        handlers: timeBoxHandlers({
          ...timeBox,
          redis: options.redis,
          keyPrefix,
          brokerFor: brokerOf(jobBrokers),
          notifier,
          log: logger,
        }),
      });
      return worker;
    },
    async close() {
      await timeBoxWorker?.close();
      await worker?.close();
      await timeBoxes?.close();
      await queue.close();
      await Promise.allSettled([...jobBrokers.values()].map((b) => b.close(CLIENT_CLOSE_GRACE_MS)));
    },
  };
}

export function createRedis(url: string): Redis {
  // Fail a command quickly rather than queue it forever: the only use on this path is dedupe.
  return openRedis(url, { maxRetriesPerRequest: 1, connectTimeout: 3000, commandTimeout: 2000 });
}

function slackStartError(err: unknown, apiUrl: string | undefined): string {
  const code = (err as { data?: { error?: unknown }; code?: unknown } | null)?.data?.error;
  if (typeof code === 'string') {
    return `Slack refused SLACK_BOT_TOKEN (${code}). Check the bot token in .env (see .env.example) against the app's "OAuth & Permissions" page.`;
  }
  const where = apiUrl ?? "Slack's Web API";
  return `Could not reach ${where} to check SLACK_BOT_TOKEN: ${err instanceof Error ? err.message : String(err)}`;
}

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`rmq bot: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const missing = missingSlackSettings(config);
  if (missing.length > 0) {
    process.stderr.write(`rmq bot: ${missingSlackMessage(missing)}\n`);
    process.exit(1);
  }

  const logger = createLogger(config.logLevel);
  const metrics = createMetrics();
  const brokers = createBrokers(config, metrics);
  const redis = createRedis(config.redisUrl);
  let lastRedisError = '';
  redis.on('error', (err: Error) => {
    // ioredis repeats the same error on every reconnect attempt; say it once per change.
    if (err.message !== lastRedisError) logger.warn({ message: err.message }, 'Redis connection error');
    lastRedisError = err.message;
  });
  redis.on('ready', () => {
    lastRedisError = '';
  });
  const changes = changeRequestParts({ config, redis, brokers, metrics, logger });
  // The watchers' clients: a background task's timeouts and retries, as the apply job's.
  const background = createBrokers(config, metrics, APPLY_CLIENT_SETTINGS);
  let watchers: Watchers | undefined;
  const closeClients = async () => {
    // Together: closing the clients ends the watchers' broker calls still under way after the grace.
    await Promise.allSettled([
      watchers?.stop(),
      changes.close(),
      ...[...brokers.values(), ...background.values()].map((b) => b.close(CLIENT_CLOSE_GRACE_MS)),
    ]);
    redis.disconnect();
  };

  let bot: BotApp;
  try {
    const records = {
      requests: new RequestStore(redis, DEFAULT_KEY_PREFIX),
      history: new AuditTrail(redis, DEFAULT_KEY_PREFIX, config.auditKey ? { key: config.auditKey } : {}),
    };
    bot = await createApp({
      config,
      logger,
      brokers,
      redis,
      metrics,
      records,
      workflow: changes.workflow,
      watch: () => watchers?.health() ?? {},
    });
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : slackStartError(err, config.slack.apiUrl);
    logger.fatal({ message }, 'cannot start');
    process.stderr.write(`rmq bot: ${message}\n`);
    await closeClients();
    process.exit(1);
  }
  try {
    await bot.start();
  } catch (err) {
    // In Socket Mode, start() is where Slack first sees SLACK_APP_TOKEN; over HTTP, where PORT is taken.
    const code = (err as { data?: { error?: unknown }; code?: unknown } | null)?.data?.error;
    const message =
      bot.mode === 'socket' && typeof code === 'string'
        ? `Slack refused SLACK_APP_TOKEN (${code}). Check the app-level token (xapp-…, scope connections:write) in .env (see .env.example).`
        : `Cannot serve on PORT ${config.port}: ${err instanceof Error ? err.message : String(err)}`;
    logger.fatal({ message }, 'cannot start');
    process.stderr.write(`rmq bot: ${message}\n`);
    await closeClients();
    process.exit(1);
  }
  // An approval made before a stop is applied now: the worker's first sweep finds it. Not
  // awaited: with Redis away the sweep waits for it, and the bot answers meanwhile.
  changes
    .startWorker(bot.notifier, timeBoxFilingOf(bot))
    .catch((err: unknown) => logger.error({ err }, 'the apply worker did not start'));
  // Changes made outside the bot: followed, recorded and posted (src/watch/).
  watchers = watchOutside({
    config,
    redis,
    keyPrefix: DEFAULT_KEY_PREFIX,
    logger,
    brokers: background,
    trail: new AuditTrail(redis, DEFAULT_KEY_PREFIX, {
      log: logger.child({ part: 'watch' }),
      ...(config.auditKey ? { key: config.auditKey } : {}),
    }),
    notifier: slackOutsideNotifier(bot.delivery, logger),
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Whatever hangs (a job's verification, a connection that never closes), the process ends:
    // an apply cut short is taken up again by another replica or the next start, as after a crash.
    setTimeout(() => {
      logger.error({ afterMs: SHUTDOWN_HARD_LIMIT_MS }, 'shutdown did not finish in time: exiting');
      process.exit(1);
    }, SHUTDOWN_HARD_LIMIT_MS).unref();
    logger.info({ signal }, 'shutting down: no new requests, finishing answers under way');
    await bot.stop();
    // The worker finishes the job under way (BullMQ retries it elsewhere otherwise), then closes.
    await closeClients();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  loadDotenv({ quiet: true });
  main().catch((err: unknown) => {
    process.stderr.write(`rmq bot: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
