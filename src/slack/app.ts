import { once } from 'node:events';
import { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, type CustomRoute, HTTPReceiver, type Receiver, SocketModeReceiver, webApi } from '@slack/bolt';
import type { Metrics } from '../bot/metrics/index.ts';
import type { Config } from '../config/index.ts';
import { ConfigError, codeOf } from '../core/index.ts';
import type { Logger } from '../log/index.ts';
import { PatternCache } from '../policy/pattern/index.ts';
import type { ListGroupMembers } from '../workflow/filing/index.ts';
import { fileDownloader } from './attachments.ts';
import { boltLogLevel, createBoltLogger, secretMasker } from './boltLogger.ts';
import { redisChannelDefaults } from './channelDefaults.ts';
import type { Delivery } from './delivery.ts';
import type { Environments } from './environments.ts';
import { refuseFutureTimestamps } from './freshness.ts';
import type { Records } from './handlers/types.ts';
import { InFlight } from './inflight.ts';
import {
  acknowledgeUnhandledInteractions,
  type HandledInteractions,
  NO_INTERACTIONS,
} from './interactions.ts';
import { appMentionListener } from './listeners/appMention.ts';
import type { ListenerDeps } from './listeners/context.ts';
import { slashCommandListener } from './listeners/slashCommand.ts';
import { redisEventDedupe, type SlackRedis } from './redis.ts';
import { refuseReplays, signedRequestOf } from './replays.ts';
import { registerRequestInteractions } from './requests/interactions.ts';
import type { ChangeRequests } from './requests/service.ts';

/**
 * The Bolt app, given every part it answers with (src/bot/bot.ts builds them, in order, or a
 * test does): it composes nothing of its own but Bolt's receiver and listeners. HTTP mode serves
 * every Slack request at `POST /slack/events`, plus the bot's routes (`routes`); with
 * SLACK_APP_TOKEN it uses Socket Mode and serves only the routes on PORT.
 */

/** What the probes answer from: checking from start() on, draining from stop() on. */
export interface AppHealth {
  start(): void;
  drain(): void;
  stop(): void;
}

export interface AppDeps {
  readonly config: Config;
  readonly logger: Logger;
  /** `--env E` -> that environment's broker, one budget per question. */
  readonly environments: Environments;
  readonly redis: SlackRedis;
  readonly metrics: Metrics;
  /** Redis keys start with `<keyPrefix>:`. Default `rmq`; tests give each run its own. */
  readonly keyPrefix?: string;
  /** The change requests and the audit trail, for `requests` and `history` (RequestStore, AuditTrail). */
  readonly records?: Records;
  /** The one way to post to Slack; aborted through `stopping` when a shutdown gives up on it. */
  readonly delivery: Delivery;
  /** Aborted when answers are still under way after the drain: the deliveries waiting on Slack give up. */
  readonly stopping: AbortController;
  readonly health: AppHealth;
  /** Served beside Slack's (the probes, `/metrics`, `POST /api/import`), not signature-checked. */
  readonly routes: readonly CustomRoute[];
  /** Overrides SLACK_API_URL (tests point it at a local fake). */
  readonly clientOptions?: { readonly slackApiUrl?: string };
  /** Buttons and forms that have a handler; every other interaction is acknowledged and logged. */
  readonly interactions?: HandledInteractions;
  /** Filing change requests from Slack (create, edit, delete, the buttons and forms). Absent: the bot files none and says so. */
  readonly changes?: ChangeRequests;
}

export interface BotApp {
  readonly app: App;
  readonly mode: 'http' | 'socket';
  /**
   * Starts serving; returns the port it listens on (0 asks for any free one). In Socket Mode that
   * is where /healthz and /metrics are, always on the config's port (PORT), whatever `port` says.
   */
  start(port?: number): Promise<number>;
  /**
   * Stops taking requests, lets answers already under way finish (up to `drainMs`), then aborts
   * the deliveries still waiting on Slack, and disconnects.
   */
  stop(drainMs?: number): Promise<void>;
}

/** Names of the Slack settings that are missing for the mode the config asks for. */
export function missingSlackSettings(config: Config): string[] {
  const missing: string[] = [];
  if (!config.slack.botToken) missing.push('SLACK_BOT_TOKEN');
  if (!config.slack.appToken && !config.slack.signingSecret) missing.push('SLACK_SIGNING_SECRET');
  return missing;
}

export function missingSlackMessage(missing: readonly string[]): string {
  const what = missing.length === 1 ? `${missing[0]} is not set` : `${missing.join(' and ')} are not set`;
  return (
    `Cannot start the Slack bot: ${what}. ` +
    'Create the Slack app from slack/manifest.yml (api.slack.com/apps -> Create New App -> From a manifest), ' +
    'install it to your workspace, then copy .env.example to .env and fill in its bot token and signing secret ' +
    '(or SLACK_APP_TOKEN for Socket Mode).'
  );
}

/**
 * The server Bolt's Socket Mode receiver serves the routes from. Bolt keeps it to itself: it
 * listens without waiting, nor saying which port it got (PORT=0). `undefined` should an upgrade of
 * Bolt move it (then start() falls back to the configured port, and the Socket Mode e2e test fails).
 */
function socketModeRoutesServer(receiver: Receiver): Server | undefined {
  const server = (receiver as unknown as { httpServer?: unknown }).httpServer;
  return server instanceof Server ? server : undefined;
}

/**
 * Bolt's own client (auth.test at start, Socket Mode): a few quick retries, never Slack's
 * 30-minute default. Messages go through `delivery.ts`, with its own client and budget.
 */
const WEB_API_OPTIONS = {
  retryConfig: { retries: 2, factor: 2, minTimeout: 250, maxTimeout: 2000 },
  rejectRateLimitedCalls: true,
  timeout: 10_000,
} as const;

/** Every secret value of the config: masked wherever Bolt or its clients log. */
function secretsOf(config: Config): (string | undefined)[] {
  const { botToken, signingSecret, appToken } = config.slack;
  return [
    botToken,
    signingSecret,
    appToken,
    config.auditKey,
    ...config.apiTokens.values(),
    ...config.environments.map((e) => e.password),
  ];
}

/**
 * Members of an approvers' user group, as Slack has them (the approver directory caches them):
 * a Web API client as Bolt's own, its quick retries, its logger masking every secret.
 */
export function slackGroupMembers(
  config: Config,
  logger: Logger,
  clientOptions: { readonly slackApiUrl?: string } = {},
): ListGroupMembers {
  const slackApiUrl = clientOptions.slackApiUrl ?? config.slack.apiUrl;
  const client = new webApi.WebClient(config.slack.botToken, {
    ...WEB_API_OPTIONS,
    logger: createBoltLogger(logger, secretsOf(config)),
    logLevel: boltLogLevel(config.logLevel),
    ...(slackApiUrl ? { slackApiUrl } : {}),
  });
  return async (usergroup) => (await client.usergroups.users.list({ usergroup })).users ?? [];
}

export async function createApp(deps: AppDeps): Promise<BotApp> {
  const { config, logger } = deps;
  const missing = missingSlackSettings(config);
  if (missing.length > 0) throw new ConfigError(missingSlackMessage(missing));
  const { botToken, signingSecret, appToken } = config.slack;
  const secrets = secretsOf(config);
  const mask = secretMasker(secrets);
  const boltLogger = createBoltLogger(logger, secrets);
  const logLevel = boltLogLevel(config.logLevel);
  const { health, routes, delivery, changes } = deps;
  const mode = appToken ? 'socket' : 'http';
  const slackApiUrl = deps.clientOptions?.slackApiUrl ?? config.slack.apiUrl;

  const receiver: Receiver = appToken
    ? new SocketModeReceiver({
        appToken,
        customRoutes: [...routes],
        // The receiver's own client calls apps.connections.open: at the same Slack as the app's.
        installerOptions: { port: config.port, ...(slackApiUrl ? { clientOptions: { slackApiUrl } } : {}) },
        logger: boltLogger,
        logLevel,
      })
    : new HTTPReceiver({
        signingSecret: signingSecret ?? '',
        endpoints: '/slack/events',
        customRoutes: [...routes],
        customPropertiesExtractor: signedRequestOf,
        logger: boltLogger,
        logLevel,
      });
  if (receiver instanceof HTTPReceiver) refuseFutureTimestamps(receiver, logger);

  const app = new App({
    token: botToken,
    receiver,
    logger: boltLogger,
    logLevel,
    convoStore: false,
    // auth.test runs in init() below, so a refused token fails here and not on the first request.
    deferInitialization: true,
    clientOptions: { ...WEB_API_OPTIONS, ...(slackApiUrl ? { slackApiUrl } : {}) },
  });
  await app.init();

  const inFlight = new InFlight();
  const listenerDeps: ListenerDeps = {
    logger,
    metrics: deps.metrics,
    environments: deps.environments,
    // Patterns are read once and kept: the same vhosts are asked about again and again.
    patterns: new PatternCache(),
    inFlight,
    dedupe: redisEventDedupe(deps.redis, deps.keyPrefix ?? 'rmq'),
    channelDefaults: redisChannelDefaults(deps.redis, deps.keyPrefix ?? 'rmq'),
    ...(deps.records ? { records: deps.records } : {}),
    delivery,
    ...(changes ? { changes } : {}),
    download: fileDownloader({ token: botToken ?? '', call: delivery.call }),
  };
  app.use(
    refuseReplays({ redis: deps.redis, keyPrefix: deps.keyPrefix ?? 'rmq', logger, metrics: deps.metrics }),
  );
  // Every slash command routed to this app is `/rmq`, whatever the workspace renamed it to.
  app.command(/.*/, slashCommandListener(listenerDeps));
  app.event('app_mention', appMentionListener(listenerDeps));
  const handled = deps.interactions ?? NO_INTERACTIONS;
  const requestInteractions = changes
    ? registerRequestInteractions(app, { changes, delivery, logger, inFlight })
    : NO_INTERACTIONS;
  acknowledgeUnhandledInteractions(app, logger, {
    actions: new Set([...handled.actions, ...requestInteractions.actions]),
    callbacks: new Set([...handled.callbacks, ...requestInteractions.callbacks]),
  });
  app.error(async (error) => {
    logger.error({ code: codeOf(error), message: mask(error.message) }, 'Bolt reported an error');
  });

  let server: Server | undefined;
  return {
    app,
    mode,
    async start(port = config.port) {
      health.start();
      if (mode === 'socket') {
        server = socketModeRoutesServer(receiver);
        // Listened for before Bolt listens: a port it cannot take then fails start() instead of the process.
        const listening = server && !server.listening ? once(server, 'listening') : undefined;
        await Promise.all([app.start(), listening]);
        const bound = server ? (server.address() as AddressInfo).port : config.port;
        logger.info(
          { mode, port: bound },
          'connected to Slack in Socket Mode; health and metrics on the port',
        );
        return bound;
      }
      server = (await app.start(port)) as Server;
      const bound = (server.address() as AddressInfo).port;
      logger.info({ mode, port: bound }, 'listening for Slack at POST /slack/events');
      return bound;
    },
    async stop(drainMs = 10_000) {
      health.drain();
      health.stop();
      const receiverStopped = app
        .stop()
        .catch((err: unknown) => logger.warn({ message: mask(String(err)) }, 'stopping the receiver'));
      const drained = await inFlight.drain(drainMs);
      if (!drained) {
        logger.warn({ unfinished: inFlight.size }, 'answers still under way at shutdown: giving up on them');
        deps.stopping.abort();
      }
      server?.closeAllConnections();
      await receiverStopped;
    },
  };
}
