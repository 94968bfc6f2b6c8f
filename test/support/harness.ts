/**
 * The real bot, started as main.ts starts it (createBot: config from an env object, the app, the
 * workflow and its workers, the watchers) on a free port, with a test signing secret; the harness
 * makes the broker clients and Redis (to count and clean up). Every part of the bot comes from the
 * built bundle, `dist/main.js` (built.ts), the file `npm start` runs, never from src/: what the
 * suites prove is what ships. In-process because these suites shorten what no env var reaches
 * (the worker's backoff, the watchers' grace, the probes' interval, delivery budgets, the key
 * prefix) or read the bot's metrics and log lines; a suite that needs none of that runs the bot as
 * `npm start` does, a process (processHarness.ts, on the same lab, prepareLab). Its Web
 * API goes to a fake Slack; its broker calls go through a local proxy in front of the real broker
 * (so a test can count them, or slow them down), into a fresh vhost holding the policies lab.
 *
 * Requests are sent as Slack sends them (slackRequests.ts): signed, form-encoded commands with a
 * response URL on the fake Slack, JSON event callbacks. With `socketMode`, the app gets the fake's app-level token (and
 * no signing secret) and Slack's requests go over the fake's WebSocket instead (`slack.socket`):
 * `url` then serves only /healthz and /metrics, and `command`/`mention` have nothing to post to.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Redis } from 'ioredis';
import { setUpLab } from '../../scripts/lab.ts';
import type { Bot, BotOverrides } from '../../src/bot/bot.ts';
import type { Metrics } from '../../src/bot/metrics/metrics.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import {
  adminClient,
  brokerCredentials,
  brokerUrl,
  admin as management,
  uniqueName,
  waitFor,
} from './broker.ts';
import { built } from './built.ts';
import { closedPortUrl, type FakeBroker, startFakeBroker } from './fakeBroker.ts';
import { type FakeSlack, startFakeSlack } from './fakeSlack.ts';
import { type SignedRequests, signedRequests } from './slackRequests.ts';

export { renderedText } from './fakeSlack.ts';
export {
  askInThread,
  commandForm,
  mentionEnvelope,
  type SignedRequest,
  type SignedRequests,
  signature,
  signed,
  signedRequests,
} from './slackRequests.ts';

/** What `dist/main.js` exports: the bot's parts, as the built bundle has them. */
export type Shipped = typeof import('../../src/bot/main.ts');

/** The built bundle `npm start` runs (`dist/main.js`, built once per test process), imported. */
export async function shipped(): Promise<Shipped> {
  const { outdir } = await built();
  return (await import(pathToFileURL(join(outdir, 'main.js')).href)) as Shipped;
}

export const LAB_QUEUES = [
  ['orders.audit', 'classic'],
  ['orders.processing', 'quorum'],
  ['orders.events', 'stream'],
  ['retry.orders.dlq', 'classic'],
  ['billing.invoices', 'classic'],
] as const;

export interface Harness extends SignedRequests {
  /** Where the app listens: `POST /slack/events` (HTTP mode), `GET /healthz`, `GET /metrics`. */
  readonly url: string;
  readonly slack: FakeSlack;
  /** In front of the real broker for environment `lab`; its `requests` are the bot's broker calls. */
  readonly proxy: FakeBroker;
  readonly vhost: string;
  readonly signingSecret: string;
  readonly brokerPassword: string;
  readonly metrics: Metrics;
  readonly keyPrefix: string;
  /** The bot; a test may stop it itself (to watch it stop), stop() below then does not again. */
  readonly bot: Bot;
  /** Every log line the app wrote (pino JSON). */
  readonly logs: string[];
  readonly redis: Redis;
  /**
   * A second instance of the app: same config, brokers, Redis and key prefix; its own port and
   * metrics (and, with `changes`, its own workflow, apply queue and apply worker: a replica).
   */
  twin(options?: TwinOptions): Promise<{ url: string; metrics: Metrics; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

/** A replica started later, as a restart with another configuration would (the same clients and Redis). */
export interface TwinOptions {
  /** The environments file the replica reads, from the harness's (e.g. `lab` made read-only). */
  readonly environmentsYaml?: (yaml: string) => string;
}

export interface HarnessOptions {
  /** Set up the policies lab in the vhost and wait until the broker reports its queues' policies. */
  readonly lab?: boolean;
  /** Environments besides `lab`: `down` is a broker that drops every connection. */
  readonly withDownEnvironment?: boolean;
  /** Environment `lab` as a cluster's nodes whose first is down (nothing listens): `url: [down, proxy]`. */
  readonly labFirstNodeDown?: boolean;
  /** Broker credentials for the app, made for the vhost (default: the test broker's admin). */
  readonly credentials?: (vhost: string) => Promise<{ user: string; password: string }>;
  readonly keyPrefix?: string;
  readonly logLevel?: string;
  /** Another Redis than the test one, e.g. a port where none listens. */
  readonly redisUrl?: string;
  /** Short broker timeouts, so a test of a slow broker does not wait long. */
  readonly brokerTimeouts?: { headersMs?: number; bodyMs?: number };
  /** SLACK_APP_TOKEN set (Socket Mode, against the fake's WebSocket), SLACK_SIGNING_SECRET not. */
  readonly socketMode?: boolean;
  /** How often the fake Slack pings a Socket Mode connection. */
  readonly socketPingIntervalMs?: number;
  /** RMQ_AUDIT_KEY: the audit chain sealed with it. */
  readonly auditKey?: string;
  /** RMQ_TIMEOUT: the budget of one question to the broker (default the bot's, 10 s). */
  readonly questionBudget?: string;
  /** Shorter delivery budgets (`src/slack/delivery.ts`), for tests of a Slack that fails. */
  readonly delivery?: { budgetMs?: number; attemptMs?: number; retryBaseMs?: number };
  /**
   * Change requests on (the workflow, the apply queue and worker, as createBot composes them):
   * environment `lab` has approvers CHANGE_APPROVERS and approvals channel APPROVALS_CHANNEL;
   * `ro` is the same broker, read-only; `weak` the same broker and vhost through a user tagged
   * `management` only (it may read policies, not write them).
   */
  readonly changes?: boolean;
  /**
   * With `changes`: more keys of environment `lab` in the environments file (e.g. `approvalsRequired: 2`),
   * or a function of the harness's vhost giving them (e.g. `vhosts: [that vhost]`).
   */
  readonly labRules?: string | ((vhost: string) => string);
  /**
   * Changes made outside the bot watched, as createBot watches them, for environment `lab` and the
   * harness's vhost only (other tests change other vhosts of the same broker all the time).
   */
  readonly watch?: boolean;
  /**
   * RMQ_LINT_SCHEDULE: the lint digest on this cron pattern (every replica). Without `changes`,
   * environment `lab` then has approvals channel APPROVALS_CHANNEL and is limited to the harness's
   * vhost (the digest lints every vhost an environment may answer about).
   */
  readonly lintSchedule?: string;
}

/** With `changes`: environment `lab`'s approvers, a user and a user group. */
export const APPROVER = 'U0APPROVER';
export const APPROVER_GROUP = 'S0APPROVERS';
export const APPROVALS_CHANNEL = 'C0APPROVALS';
/**
 * What the apply worker waits for the objects to report the new policy, in the e2e tests, and how
 * often it sweeps (expiry, reminders at half a request's time to live).
 */
const E2E_WORKER = { backoffMs: 300, verifyDeadlineMs: 30_000, sweepIntervalMs: 1000 } as const;

/**
 * What the bot needs around it, however it is started (in-process here, or as a process,
 * processHarness.ts): the fake Slack, the proxy in front of the broker (and `down`), a fresh
 * vhost (with the lab), the environments file's text and the environment variables the bot reads
 * (REDIS_URL and RMQ_ENVIRONMENTS left to the caller). `close` undoes it.
 */
export interface PreparedLab {
  readonly admin: LabClient;
  readonly vhost: string;
  readonly slack: FakeSlack;
  readonly proxy: FakeBroker;
  readonly signingSecret: string;
  readonly brokerPassword: string;
  readonly environmentsYaml: string;
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

export async function prepareLab(options: HarnessOptions = {}): Promise<PreparedLab> {
  const admin: LabClient = adminClient();
  const vhost = uniqueName('slack');
  const slack = await startFakeSlack(
    options.socketPingIntervalMs ? { socketPingIntervalMs: options.socketPingIntervalMs } : {},
  );
  const proxy = await startFakeBroker({ fallback: { kind: 'proxy', target: brokerUrl() } });
  const down = options.withDownEnvironment
    ? await startFakeBroker({ fallback: { kind: 'drop' } })
    : undefined;
  const signingSecret = `test-signing-secret-${randomBytes(12).toString('hex')}`;

  if (options.lab ?? true) {
    await setUpLab(admin, vhost);
    await waitFor(
      async () => {
        for (const [name] of LAB_QUEUES) {
          const q = await admin.getQueue(vhost, name);
          if (!q || q.policy === undefined || q.operatorPolicy === undefined) return false;
        }
        return true;
      },
      { deadlineMs: 60_000, intervalMs: 500, what: 'the broker to report the lab queues’ policies' },
    );
  } else {
    await admin.putVhost(vhost);
  }

  const credentials = options.credentials ? await options.credentials(vhost) : brokerCredentials();
  const weak = options.changes
    ? { user: uniqueName('weak'), password: randomBytes(9).toString('base64url') }
    : undefined;
  if (weak) {
    const enc = encodeURIComponent;
    await management('PUT', `/api/users/${enc(weak.user)}`, { password: weak.password, tags: 'management' });
    await management('PUT', `/api/permissions/${enc(vhost)}/${enc(weak.user)}`, {
      configure: '.*',
      write: '.*',
      read: '.*',
    });
  }
  const approvalsYaml = options.changes
    ? `, approvers: [${APPROVER}, ${APPROVER_GROUP}], approvalsChannel: ${APPROVALS_CHANNEL}`
    : options.lintSchedule
      ? `, approvalsChannel: ${APPROVALS_CHANNEL}, vhosts: [${JSON.stringify(vhost)}]`
      : '';
  const labUrl = options.labFirstNodeDown ? `["${await closedPortUrl()}", "${proxy.url}"]` : `"${proxy.url}"`;
  const environmentsYaml = [
    'environments:',
    `  - { name: lab, url: ${labUrl}, userEnv: LAB_USER, passwordEnv: LAB_PASSWORD${approvalsYaml}${options.labRules ? `, ${typeof options.labRules === 'string' ? options.labRules : options.labRules(vhost)}` : ''} }`,
    ...(down ? [`  - { name: down, url: "${down.url}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD }`] : []),
    ...(weak
      ? [
          `  - { name: ro, url: "${proxy.url}", userEnv: LAB_USER, passwordEnv: LAB_PASSWORD, mode: read-only${approvalsYaml} }`,
          `  - { name: weak, url: "${proxy.url}", userEnv: WEAK_USER, passwordEnv: WEAK_PASSWORD${approvalsYaml} }`,
        ]
      : []),
  ].join('\n');
  const env: Record<string, string> = {
    LAB_USER: credentials.user,
    LAB_PASSWORD: credentials.password,
    ...(weak ? { WEAK_USER: weak.user, WEAK_PASSWORD: weak.password } : {}),
    SLACK_BOT_TOKEN: slack.botToken,
    ...(options.socketMode ? { SLACK_APP_TOKEN: slack.appToken } : { SLACK_SIGNING_SECRET: signingSecret }),
    SLACK_API_URL: slack.apiUrl,
    LOG_LEVEL: options.logLevel ?? 'debug',
    ...(options.questionBudget ? { RMQ_TIMEOUT: options.questionBudget } : {}),
    ...(options.auditKey ? { RMQ_AUDIT_KEY: options.auditKey } : {}),
    ...(options.lintSchedule ? { RMQ_LINT_SCHEDULE: options.lintSchedule } : {}),
    PORT: '0',
  };
  return {
    admin,
    vhost,
    slack,
    proxy,
    signingSecret,
    brokerPassword: credentials.password,
    environmentsYaml,
    env,
    async close() {
      if (weak) await management('DELETE', `/api/users/${encodeURIComponent(weak.user)}`).catch(() => {});
      await Promise.allSettled([slack.close(), proxy.close(), down?.close()]);
      await admin.deleteVhost(vhost);
      await admin.close();
    },
  };
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const { createBot, createBrokers, createRedis, createLogger, createMetrics, loadConfig } = await shipped();
  const lab = await prepareLab(options);
  const { slack, proxy, vhost, signingSecret } = lab;
  const keyPrefix = options.keyPrefix ?? `rmq:test-${randomBytes(6).toString('hex')}`;
  const configOf = (yaml: string) =>
    loadConfig(
      {
        ...lab.env,
        RMQ_ENVIRONMENTS: '/virtual/environments.yml',
        REDIS_URL: options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      },
      () => yaml,
    );
  const config = configOf(lab.environmentsYaml);
  const logs: string[] = [];
  const logger = createLogger(config.logLevel, { write: (line: string) => void logs.push(line) });
  const metrics = createMetrics();
  const brokers = createBrokers(config, metrics, { timeouts: options.brokerTimeouts ?? {} });
  const redis = createRedis(config.redisUrl);
  redis.on('error', () => {}); // a Redis made to be down (redisUrl) errors on every reconnect
  /** One bot instance on the harness's clients: the harness's own, or a replica (twin). */
  const botOf = (m: Metrics, over: Pick<BotOverrides, 'watch' | 'delivery'>, with_ = config) =>
    createBot(with_, {
      logger,
      metrics: m,
      keyPrefix,
      clients: { brokers, redis },
      // The probes' background check asks the broker too; checked once at start here (awaited
      // below), so that the tests' counts of broker calls count only what the requests caused.
      health: { intervalMs: 3_600_000 },
      changes: options.changes ? E2E_WORKER : false,
      ...over,
    });
  const bot = botOf(metrics, {
    ...(options.delivery ? { delivery: options.delivery } : {}),
    watch: options.watch
      ? {
          environments: ['lab'],
          tuning: { vhosts: (v) => v === vhost, graceMs: 500, retryLowMs: 200, retryHighMs: 2000 },
        }
      : false,
  });
  let port: number;
  try {
    // Socket Mode's start() waits for Slack's hello, retrying apps.connections.open for as long as
    // it takes: bounded here, so a test whose app cannot connect fails and says what the fake saw.
    port = options.socketMode
      ? await within(bot.start(0), 30_000, () => {
          const opens = slack.calls.filter((c) => c.method === 'apps.connections.open');
          return (
            `the app did not connect in Socket Mode within 30 s: apps.connections.open ` +
            `${JSON.stringify(opens.map((c) => c.error ?? 'ok'))}, ` +
            `${slack.socket.connections().length} connection(s)`
          );
        })
      : await bot.start(0);
  } catch (err) {
    await bot.stop(1000).catch(() => {});
    await Promise.allSettled([...brokers.values()].map((b) => b.close()));
    redis.disconnect();
    await lab.close();
    throw err;
  }
  await bot.checkHealth();
  const url = `http://127.0.0.1:${port}`;
  const twins: Bot[] = [];

  return {
    url,
    slack,
    proxy,
    vhost,
    signingSecret,
    brokerPassword: lab.brokerPassword,
    metrics,
    keyPrefix,
    bot,
    logs,
    redis,
    ...signedRequests(url, signingSecret, slack),
    async twin(twinOptions = {}) {
      const twinMetrics = createMetrics({ defaultMetrics: false });
      const yaml = twinOptions.environmentsYaml?.(lab.environmentsYaml);
      const twin = botOf(twinMetrics, { watch: false }, yaml === undefined ? config : configOf(yaml));
      twins.push(twin);
      const twinPort = await twin.start(0);
      return { url: `http://127.0.0.1:${twinPort}`, metrics: twinMetrics, stop: () => twin.stop(5000) };
    },
    async stop() {
      await Promise.allSettled(twins.map((t) => t.stop(5000)));
      await bot.stop(5000);
      await Promise.allSettled([...brokers.values()].map((b) => b.close()));
      if (redis.status === 'ready') {
        const keys = await redis.keys(`${keyPrefix}:*`);
        if (keys.length > 0) await redis.del(...keys);
      }
      redis.disconnect();
      await lab.close();
    },
  };
}

async function within<T>(work: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(what())), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
