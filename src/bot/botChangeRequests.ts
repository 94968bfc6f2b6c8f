import type { Redis } from 'ioredis';
import { AuditTrail } from '../audit/index.ts';
import type { Config } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { ManagementClient } from '../rabbit/index.ts';
import type { RedisTrouble } from '../redis/index.ts';
import type { ChangeRequests } from '../slack/index.ts';
import { ownWriteAnnouncer } from '../watch/index.ts';
import {
  APPLY_CLIENT_SETTINGS,
  type ApplyWorkerDeps,
  createApplyQueue,
  jobConnection,
  startApplyWorker,
} from '../workflow/apply/index.ts';
import {
  createApproverDirectory,
  createWorkflow,
  type ListGroupMembers,
  type WorkflowDeps,
} from '../workflow/filing/index.ts';
import {
  type ApplyWorker,
  FreezeStore,
  type Notifier,
  RequestStore,
  type Workflow,
} from '../workflow/index.ts';
import {
  createTimeBoxQueue,
  startTimeBoxWorker,
  type TimeBoxDeadlineDeps,
  type TimeBoxNotifier,
  type TimeBoxQueue,
  type TimeBoxWorker,
  timeBoxHandlers,
} from '../workflow/timebox/index.ts';
import { CLIENT_CLOSE_GRACE_MS, createBrokers } from './botClients.ts';
import type { Metrics } from './metrics/metrics.ts';

/**
 * Change requests, composed for src/bot/bot.ts: the workflow and its stores, the apply queue, the
 * apply and time-box workers with their own broker clients and Redis connection. The stores
 * each part works with are built here and handed in (`workflowDeps`, `applyWorkerDeps`), the
 * same way for the bot, the tests' workflow fixture and bench/apply.ts.
 */

/** The request store, the audit trail and the freezes, on one Redis connection. */
function requestStores(redis: Redis, keyPrefix: string, log: Logger, now?: () => Date, auditKey?: string) {
  return {
    requests: new RequestStore(redis, keyPrefix, now),
    audit: new AuditTrail(redis, keyPrefix, { log, ...(auditKey ? { key: auditKey } : {}) }),
    freezes: new FreezeStore(redis, keyPrefix),
  };
}

/** What the workflow works with: the app's Redis and the stores on it. */
export function workflowDeps(
  redis: Redis,
  keyPrefix: string,
  log: Logger,
  now?: () => Date,
  /** RMQ_AUDIT_KEY: the records the workflow appends (freezes) are sealed with it. */
  auditKey?: string,
): WorkflowDeps {
  return { redis, ...requestStores(redis, keyPrefix, log, now, auditKey) };
}

/**
 * What the apply worker works with: its own Redis connection (BullMQ blocks on it), the request
 * store, the audit trail and the freezes on it, and the announcement of its writes to the watchers.
 */
export function applyWorkerDeps(
  redisUrl: string,
  keyPrefix: string,
  log: Logger,
  now?: () => Date,
  /** RMQ_AUDIT_KEY: the records the job appends are sealed with it. */
  auditKey?: string,
  /** The bot's: the connection's failures told once with the others'. */
  redisTrouble?: RedisTrouble,
): ApplyWorkerDeps {
  const jobLog = log.child({ component: 'apply' });
  const connection = jobConnection(redisUrl, jobLog, redisTrouble);
  return {
    connection,
    ...requestStores(connection, keyPrefix, jobLog, now, auditKey),
    announceWrite: ownWriteAnnouncer(connection, keyPrefix),
  };
}

/** The apply worker's tuning (tests shorten the backoff, the verification deadline and the sweep interval: expiry, reminders). */
export interface ChangeRequestTuning {
  readonly backoffMs?: number;
  readonly verifyDeadlineMs?: number;
  readonly attempts?: number;
  readonly sweepIntervalMs?: number;
}

/**
 * Change requests, composed: the workflow (on the app's Slack notifier and Bolt's
 * usergroups.users.list), the apply queue, and the apply worker with its own broker clients (a
 * background job's timeouts and retries, not a Slack answer's) and its own Redis connection.
 */
interface ChangeRequestParts {
  /** The workflow, on the notifier that tells Slack of its requests and on Slack's user groups (who may approve). */
  workflow(notifier: Notifier, listGroupMembers: ListGroupMembers): Workflow;
  /** Starts the apply worker (and its sweep: lost jobs queued again, requests past their deadline expired). */
  startWorker(notifier: Notifier & TimeBoxNotifier, timeBox: TimeBoxFiling): Promise<ApplyWorker>;
  /** Closes the worker (the job under way finishes), the queue and the job's broker clients. */
  close(): Promise<void>;
}

/**
 * How a time box's revert is filed: approved with its change through the workflow, or, when
 * that is not possible, for approval and posted (the Slack side's ChangeRequests).
 */
type TimeBoxFiling = Pick<TimeBoxDeadlineDeps, 'workflow' | 'revertRequest' | 'postRevertSet'>;

/** A time box's revert: the workflow, and for approval filed and posted as the Revert button files one. */
export function timeBoxFilingOf(changes: ChangeRequests): TimeBoxFiling {
  return {
    workflow: changes.workflow,
    async postRevertSet(revert) {
      const posted = await changes.postSet(revert);
      if (!posted.ok) throw posted.error;
    },
    async revertRequest(auditId, user, origin, reason) {
      const filed = await changes.revert(auditId, user, origin, reason);
      if (filed.ok) return filed.request;
      // A revert of the change is open already (someone clicked Revert): that one is the ask.
      const err = filed.error;
      const open =
        err.refusal.code === 'already-filed' ? await changes.workflow.get(err.refusal.id) : undefined;
      if (open) return open;
      throw err;
    },
  };
}

export function changeRequestParts(options: {
  readonly config: Config;
  readonly redis: Redis;
  /** The Slack-path clients: filing previews on them, as a Slack answer does. */
  readonly brokers: ReadonlyMap<string, ManagementClient>;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly keyPrefix: string;
  readonly worker: ChangeRequestTuning | undefined;
  /** Redis away, told once for every connection of the bot. */
  readonly redisTrouble?: RedisTrouble;
}): ChangeRequestParts {
  const { config, logger, keyPrefix } = options;
  const brokerOf = (brokers: ReadonlyMap<string, ManagementClient>) => (env: string) => {
    const b = brokers.get(env);
    if (!b) throw new Error(`no broker client for environment ${env}`);
    return b;
  };
  const queue = createApplyQueue({ redisUrl: config.redisUrl, keyPrefix, ...options.worker });
  const jobBrokers = createBrokers(config, options.metrics, APPLY_CLIENT_SETTINGS);
  let worker: ApplyWorker | undefined;
  let timeBoxes: TimeBoxQueue | undefined;
  let timeBoxWorker: TimeBoxWorker | undefined;
  let closed = false;
  return {
    workflow: (notifier, listGroupMembers) =>
      createWorkflow({
        ...workflowDeps(options.redis, keyPrefix, logger, undefined, config.auditKey),
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
      }),
    async startWorker(notifier, timeBox) {
      // Time boxes: the deadline scheduled once the change is recorded; at it, the revert (or
      // the request for a new approval) by whichever replica's time-box worker takes the job.
      timeBoxes = createTimeBoxQueue({ redisUrl: config.redisUrl, keyPrefix });
      const schedule = timeBoxes;
      const started = await startApplyWorker({
        redisUrl: config.redisUrl,
        keyPrefix,
        ...applyWorkerDeps(
          config.redisUrl,
          keyPrefix,
          logger,
          undefined,
          config.auditKey,
          options.redisTrouble,
        ),
        brokerFor: brokerOf(jobBrokers),
        environments: config.environments,
        notifier,
        log: logger,
        ...(options.redisTrouble ? { redisTrouble: options.redisTrouble } : {}),
        onRecorded: async (r, record) => {
          if (r.timeBoxMs !== undefined) await schedule.schedule(r.id, new Date(record.at), r.timeBoxMs);
        },
        ...options.worker,
      });
      // Stopped while the first sweep waited (on Redis): closed here, since close() did not see it.
      if (closed) {
        await Promise.allSettled([started.close(), schedule.close()]);
        return started;
      }
      worker = started;
      timeBoxWorker = startTimeBoxWorker({
        redisUrl: config.redisUrl,
        keyPrefix,
        log: logger,
        ...(options.redisTrouble ? { redisTrouble: options.redisTrouble } : {}),
        handlers: timeBoxHandlers({
          ...timeBox,
          redis: options.redis,
          keyPrefix,
          brokerFor: brokerOf(jobBrokers),
          notifier,
          log: logger,
        }),
      });
      return started;
    },
    async close() {
      closed = true;
      await timeBoxWorker?.close();
      await worker?.close();
      await timeBoxes?.close();
      await queue.close();
      await Promise.allSettled([...jobBrokers.values()].map((b) => b.close(CLIENT_CLOSE_GRACE_MS)));
    },
  };
}
