import type { Redis } from 'ioredis';
import { AuditTrail } from '../audit/index.ts';
import { type Config, DEFAULT_KEY_PREFIX, pickEnvironment } from '../config/index.ts';
import { ConfigError } from '../core/index.ts';
import type { Logger } from '../log/index.ts';
import { createLogger } from '../log/index.ts';
import type { ManagementClient } from '../rabbit/index.ts';
import { RedisTrouble } from '../redis/index.ts';
import {
  type BotApp,
  type ChangeRequests,
  createApp,
  createChangeRequests,
  createDelivery,
  createSlackNotifier,
  type DeliveryOptions,
  environmentDirectory,
  type LintDigest,
  pickForVhosts,
  slackGroupMembers,
  slackLinksNotifier,
  slackOutsideNotifier,
  startLintDigest,
} from '../slack/index.ts';
import { LinksStore, type LinksWatchers, type Watchers, watchLinks, watchOutside } from '../watch/index.ts';
import { APPLY_CLIENT_SETTINGS } from '../workflow/apply/index.ts';
import { FreezeStore, RequestStore } from '../workflow/index.ts';
import { type ChangeRequestTuning, changeRequestParts, timeBoxFilingOf } from './botChangeRequests.ts';
import { CLIENT_CLOSE_GRACE_MS, createBrokers, createRedis } from './botClients.ts';
import { linksSources } from './botLinks.ts';
import { createHealthMonitor, type HealthDeps, type HealthMonitor } from './health.ts';
import { importRoute } from './importRoute.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { livezRoute, metricsRoute, readinessRoutes } from './routes.ts';

/**
 * The composition root of the Slack bot, the one place where it is built, in order: config ->
 * logger -> one management client per environment -> Redis -> the change requests' queue and
 * clients (createBot); then at start: the probes and the routes beside Slack's -> the delivery
 * to Slack -> the notifier -> the workflow on it -> Slack's filing on the workflow -> the Bolt
 * app, given all of these -> the apply and time-box workers -> the lint digest -> the watchers
 * of changes made outside the bot. Everything is built here, once, and passed down.
 * main.ts (`npm start`: signals and exit codes) and the e2e harness start this same bot; the
 * overrides are what a test changes, each saying what.
 */

export interface BotOverrides {
  /** Where log lines go (tests keep them). Default: stdout at LOG_LEVEL. */
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  /** Redis keys start with `<keyPrefix>:`. Default `rmq`; tests give each run its own. */
  readonly keyPrefix?: string;
  /**
   * The Slack path's broker clients and Redis, made by the caller (a test, or a second
   * instance in the same process): used as they are, and left for the caller to close.
   */
  readonly clients?: {
    readonly brokers: ReadonlyMap<string, ManagementClient>;
    readonly redis: Redis;
  };
  /** The delivery budgets (src/slack/delivery.ts); tests of a failing Slack shorten them. */
  readonly delivery?: Pick<DeliveryOptions, 'budgetMs' | 'attemptMs' | 'retryBaseMs'>;
  /** The probes' background check (src/bot/health.ts): tests lengthen its interval, to count broker calls. */
  readonly health?: Pick<HealthDeps, 'intervalMs' | 'timeoutMs'>;
  /** `false`: no change requests (the bot says so). Else the apply worker's tuning. */
  readonly changes?: false | ChangeRequestTuning;
  /** `false`: nothing watched. Else only these environments, with the watchers' tuning. */
  readonly watch?:
    | false
    | {
        readonly environments?: readonly string[];
        readonly tuning?: Parameters<typeof watchOutside>[0]['tuning'];
      };
}

export interface Bot {
  readonly mode: BotApp['mode'];
  readonly logger: Logger;
  /**
   * Builds the app (Slack checks the bot token), serves (PORT, or `port`: 0 asks for a free one),
   * then starts the apply and time-box workers and the watchers. Returns the port. A failure is
   * a BotStartError saying what to fix; whatever was opened is closed again.
   */
  start(port?: number): Promise<number>;
  /**
   * Stops taking requests, lets answers under way finish (up to `drainMs`, default the app's),
   * lets the apply job under way finish, stops the watchers, closes the clients it made (`why`
   * is logged: the signal). Once: later calls wait for the first.
   */
  stop(drainMs?: number, why?: string): Promise<void>;
  /** After start(): every part the probes check (brokers, Redis) checked once more; resolves when all are. */
  checkHealth(): Promise<void>;
}

/** Why the bot could not start, as one sentence saying what to fix (main.ts prints it and exits 1). */
export class BotStartError extends Error {
  override readonly name = 'BotStartError';
}

export function createBot(config: Config, overrides: BotOverrides = {}): Bot {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const metrics = overrides.metrics ?? createMetrics();
  const keyPrefix = overrides.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const owned = overrides.clients === undefined;
  const brokers = overrides.clients?.brokers ?? createBrokers(config, metrics);
  // Redis away is told once, naming REDIS_URL, for every connection of the process.
  const redisTrouble = new RedisTrouble(logger, config.redisUrl);
  const redis = overrides.clients?.redis ?? redisTrouble.watch(createRedis(config.redisUrl));
  const changes =
    overrides.changes === false
      ? undefined
      : changeRequestParts({
          config,
          redis,
          brokers,
          metrics,
          logger,
          keyPrefix,
          worker: overrides.changes,
          redisTrouble,
        });
  // The watchers' clients: a background task's timeouts and retries, as the apply job's.
  const watch = overrides.watch === false ? undefined : (overrides.watch ?? {});
  const background = watch ? createBrokers(config, metrics, APPLY_CLIENT_SETTINGS) : new Map();
  let watchers: Watchers | undefined;
  let linksWatchers: LinksWatchers | undefined;
  let digest: Promise<LintDigest | undefined> | undefined;
  let app: BotApp | undefined;
  let health: HealthMonitor | undefined;
  // RMQ_AUDIT_KEY: every trail the bot builds seals (and checks) its records with it.
  const sealed = config.auditKey ? { key: config.auditKey } : {};

  async function closeClients(): Promise<void> {
    // Together: closing the clients ends the watchers' broker calls still under way after the grace.
    await Promise.allSettled([
      watchers?.stop(),
      linksWatchers?.stop(),
      changes?.close(),
      digest?.then((d) => d?.close()),
      ...[...(owned ? brokers.values() : []), ...background.values()].map((b) =>
        b.close(CLIENT_CLOSE_GRACE_MS),
      ),
    ]);
    if (owned) redis.disconnect();
  }

  let failed = false;
  async function cannotStart(message: string): Promise<never> {
    logger.fatal({ message }, 'cannot start');
    failed = true;
    await closeClients();
    throw new BotStartError(message);
  }

  let stopped: Promise<void> | undefined;
  return {
    mode: config.slack.appToken ? 'socket' : 'http',
    logger,

    async start(port) {
      // What the probes answer from, and the routes served beside Slack's.
      health = createHealthMonitor({
        brokers,
        redis,
        ...overrides.health,
        watch: () => watchHealth(watchers?.health() ?? {}, linksWatchers?.health() ?? {}),
        onChange: healthLog(logger),
      });
      const environments = environmentDirectory(config, brokers);
      // The one way to post to Slack; `stopping` aborts what still waits on Slack at shutdown.
      const stopping = new AbortController();
      const delivery = createDelivery({
        token: config.slack.botToken ?? '',
        ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
        metrics,
        logger,
        signal: stopping.signal,
        ...overrides.delivery,
      });
      // The one loop of the bot, tied in two visible steps: the notifier files a request gone
      // stale again through Slack's filing, which is built on the workflow, which is built on
      // the notifier. Step one: the notifier, filing again through `fileAgain`.
      let fileAgain: ChangeRequests['fileAgain'] | undefined;
      const notifier = createSlackNotifier({
        delivery,
        logger,
        approversOf: (env) => config.environments.find((e) => e.name === env)?.approvers ?? [],
        ...(changes
          ? {
              fileAgain: async (stale) => {
                if (!fileAgain) throw new Error('change requests are not set up');
                return fileAgain(stale);
              },
            }
          : {}),
      });
      const requests =
        changes &&
        createChangeRequests({
          workflow: changes.workflow(notifier, slackGroupMembers(config, logger)),
          delivery,
          brokers,
          logger,
        });
      // Step two: the loop closed, before anything is served.
      fileAgain = requests?.fileAgain;
      const importDeps = requests && { workflow: requests.workflow, broker: pickForVhosts(environments) };
      const routes = [
        livezRoute(health),
        ...readinessRoutes(health),
        metricsRoute(metrics),
        importRoute({
          tokens: config.apiTokens,
          importDeps,
          post: async (request) => requests?.postSet(request),
          approvalsChannel: (env) =>
            pickEnvironment(config, env)?.approvalsChannel ?? config.slack.approvalsChannel,
          logger,
        }),
      ];
      try {
        app = await createApp({
          config,
          logger,
          environments,
          redis,
          metrics,
          keyPrefix,
          records: {
            requests: requestsWithFreezes(redis, keyPrefix),
            history: new AuditTrail(redis, keyPrefix, sealed),
            linksWatched: (env) => new LinksStore(redis, keyPrefix, env).watched(),
          },
          delivery,
          stopping,
          health,
          routes,
          ...(requests ? { changes: requests } : {}),
        });
      } catch (err) {
        return cannotStart(err instanceof ConfigError ? err.message : slackTokenRefused(err, config));
      }
      let listening: number;
      try {
        listening = await app.start(port);
      } catch (err) {
        // In Socket Mode, start() is where Slack first sees SLACK_APP_TOKEN; over HTTP, where PORT is taken.
        const slack = slackErrorOf(err);
        return cannotStart(
          app.mode === 'socket' && slack
            ? `Slack refused SLACK_APP_TOKEN (${slack}). Check the app-level token (xapp-…, scope connections:write) in .env (see .env.example).`
            : `Cannot serve on PORT ${port ?? config.port}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      if (changes && requests) {
        // An approval made before a stop is applied now: the worker's first sweep finds it. Not
        // awaited: with Redis away the sweep waits for it, and the bot answers meanwhile.
        changes
          .startWorker(notifier, timeBoxFilingOf(requests))
          .catch((err: unknown) => logger.error({ err }, 'the apply worker did not start'));
      }
      if (config.lintSchedule) {
        // RMQ_LINT_SCHEDULE: one job scheduler across replicas (src/slack/lintDigest.ts). Not
        // awaited: with Redis away the upsert waits for it, and the bot answers meanwhile.
        digest = startLintDigest({
          environments: config.environments,
          brokers,
          redis,
          keyPrefix,
          delivery,
          log: logger.child({ part: 'lint-digest' }),
          redisUrl: config.redisUrl,
          pattern: config.lintSchedule,
          redisTrouble,
        }).catch((err: unknown) => {
          logger.error({ err }, 'the lint digest did not start');
          return undefined;
        });
      }
      if (watch) {
        // Changes made outside the bot: followed, recorded and posted (src/watch/).
        const only = watch.environments;
        const watched = only
          ? { ...config, environments: config.environments.filter((e) => only.includes(e.name)) }
          : config;
        watchers = watchOutside({
          config: watched,
          redis,
          keyPrefix,
          logger,
          brokers: background,
          trail: new AuditTrail(redis, keyPrefix, { log: logger.child({ part: 'watch' }), ...sealed }),
          notifier: slackOutsideNotifier(delivery, logger),
          redisTrouble,
          ...(watch.tuning ? { tuning: watch.tuning } : {}),
        });
        // Federation links and shovels that should run and do not: read, recorded and posted.
        linksWatchers = watchLinks({
          config: watched,
          redis,
          keyPrefix,
          logger,
          ...linksSources(background, watch.tuning?.vhosts),
          trail: new AuditTrail(redis, keyPrefix, { log: logger.child({ part: 'links-watch' }), ...sealed }),
          notifier: slackLinksNotifier(delivery, logger),
          counted: (env, counts) => metrics.linksCounted(env, counts),
          redisTrouble,
        });
      }
      return listening;
    },

    async checkHealth() {
      await health?.checkNow();
    },

    stop(drainMs, why) {
      stopped ??= (async () => {
        if (failed) return; // start() closed what it had opened
        logger.info({ why }, 'shutting down: no new requests, finishing answers under way');
        await app?.stop(drainMs);
        // The worker finishes the job under way (BullMQ retries it elsewhere otherwise), then closes.
        await closeClients();
        logger.info('stopped');
      })();
      return stopped;
    },
  };
}

/**
 * The log of the probes' checks: a part that starts or stops answering, once per change, and at
 * start whether Redis keeps its data on disk (a Redis that keeps nothing loses every request and
 * the audit trail when it restarts).
 */
function healthLog(logger: Logger): HealthDeps['onChange'] {
  return (part, now) => {
    if ('onDisk' in now) {
      if (now.onDisk === true) logger.info({ persistence: now }, 'Redis keeps its data on disk');
      else if (now.onDisk === false)
        logger.warn(
          { persistence: now },
          'Redis keeps nothing on disk (no AOF, no RDB): a restart of Redis loses every change request and the audit trail',
        );
      else
        logger.warn(
          { persistence: now },
          'could not tell whether Redis keeps its data on disk (CONFIG GET refused): make sure it does (AOF or RDB)',
        );
      return;
    }
    if (now.ok) logger.info({ part, check: now }, `health: ${part} answers`);
    else logger.warn({ part, check: now }, `health: ${part} does not answer (${now.error})`);
  };
}

/** Each environment's watch for /healthz: how outside changes are caught, and its links watch under `links`. */
function watchHealth(
  outside: Record<string, object>,
  links: Record<string, object>,
): Record<string, unknown> {
  const names = new Set([...Object.keys(outside), ...Object.keys(links)]);
  return Object.fromEntries(
    [...names].map((env) => [env, { ...outside[env], ...(links[env] ? { links: links[env] } : {}) }]),
  );
}

/** Slack's own error code of a refused Web API call (`invalid_auth`), if `err` is one. */
function slackErrorOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('data' in err)) return undefined;
  const { data } = err;
  if (typeof data !== 'object' || data === null || !('error' in data)) return undefined;
  return typeof data.error === 'string' ? data.error : undefined;
}

function slackTokenRefused(err: unknown, config: Config): string {
  const slack = slackErrorOf(err);
  if (slack) {
    return `Slack refused SLACK_BOT_TOKEN (${slack}). Check the bot token in .env (see .env.example) against the app's "OAuth & Permissions" page.`;
  }
  const where = config.slack.apiUrl ?? "Slack's Web API";
  return `Could not reach ${where} to check SLACK_BOT_TOKEN: ${err instanceof Error ? err.message : String(err)}`;
}

// --- the Slack side's records --------------------------------------------------------------------

/** What `requests` reads in Slack: the open requests and the environments frozen now. */
function requestsWithFreezes(redis: Redis, keyPrefix: string) {
  const store = new RequestStore(redis, keyPrefix);
  const freezes = new FreezeStore(redis, keyPrefix);
  return {
    listOpen: (env?: string) => store.listOpen(env),
    listUnreviewed: (env?: string) => store.listUnreviewed(env),
    frozen: () => freezes.all(new Date()),
  };
}
