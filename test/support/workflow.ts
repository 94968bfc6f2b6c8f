/**
 * The change-request workflow on the real Redis and broker, for tests: its own key prefix
 * (removed after, BullMQ's keys included), workflow instances ("bot replicas") and apply workers
 * on demand, and a Notifier that records what it was told.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import type { ChangeRecord } from '../../src/audit/types.ts';
import { applyWorkerDeps, workflowDeps } from '../../src/bot/botChangeRequests.ts';
import { createLogger } from '../../src/log/log.ts';
import { ManagementClient } from '../../src/rabbit/client.ts';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { openRedis } from '../../src/redis/redis.ts';
import { createApplyQueue } from '../../src/workflow/apply/queue.ts';
import { type ApplyWorkerDeps, startApplyWorker } from '../../src/workflow/apply/worker.ts';
import { isWorkflowError } from '../../src/workflow/errors.ts';
import { createApproverDirectory } from '../../src/workflow/filing/approvers.ts';
import { createWorkflow } from '../../src/workflow/filing/workflow.ts';
import type {
  ApplyQueue,
  ApplyWorker,
  ApplyWorkerOptions,
  ChangeRequest,
  Notifier,
  Workflow,
  WorkflowEnvironment,
} from '../../src/workflow/types.ts';
import { brokerCredentials, waitFor } from './broker.ts';
import { clientFor, type TestBroker, urlsOf } from './brokers.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const REQUESTER = 'U0REQUESTER';
export const APPROVER = 'U0APPROVER';
export const APPROVER_2 = 'U0APPROVER2';
/** A user group whose only member is APPROVER_2. */
export const GROUP = 'S0APPROVERS';

export interface Told {
  readonly states: ChangeRequest[];
  readonly applied: { request: ChangeRequest; record: ChangeRecord }[];
  readonly failed: ChangeRequest[];
  readonly stale: { request: ChangeRequest; fresh: unknown }[];
  readonly reminders: ChangeRequest[];
  readonly reviewed: ChangeRequest[];
  readonly reviewReminders: ChangeRequest[];
}

export function recordingNotifier(): Notifier & { told: Told } {
  const told: Told = {
    states: [],
    applied: [],
    failed: [],
    stale: [],
    reminders: [],
    reviewed: [],
    reviewReminders: [],
  };
  return {
    told,
    async stateChanged(r) {
      told.states.push(r);
    },
    async applied(request, record) {
      told.applied.push({ request, record });
    },
    async failed(r) {
      told.failed.push(r);
    },
    async stale(request, fresh) {
      told.stale.push({ request, fresh });
    },
    async reminder(r) {
      told.reminders.push(r);
    },
    async reviewed(r) {
      told.reviewed.push(r);
    },
    async reviewReminder(r) {
      told.reviewReminders.push(r);
    },
  };
}

export interface WorkflowFixture {
  readonly keyPrefix: string;
  readonly redis: Redis;
  readonly notifier: Notifier & { told: Told };
  /** A workflow instance (one bot replica); `env` overrides the test environment's settings. */
  workflow(options?: {
    client?: ManagementClient;
    env?: Partial<WorkflowEnvironment>;
    /** The test environment's approvers (users and groups); default APPROVER and GROUP. */
    approvers?: readonly string[];
    /** Who may file (user and group ids); none: anyone. */
    requesters?: string[];
    redis?: Redis;
    now?: () => Date;
  }): Workflow;
  /** An apply worker (one replica's); stopped by close() if not before. `options` may replace its stores too. */
  worker(
    client: ManagementClient,
    options?: Partial<ApplyWorkerOptions & ApplyWorkerDeps>,
  ): Promise<ApplyWorker>;
  close(): Promise<void>;
}

export const TEST_ENV = 'test';

/**
 * A suite's hooks, registered where it is called (a file or a describe): the broker's client once
 * for the suite, a fresh fixture (its own Redis key prefix, its workers) for each test, both
 * closed after; `set` hands them to the suite's variables before each test.
 */
export function workflowHooks(
  broker: TestBroker,
  set: (admin: LabClient, fx: WorkflowFixture) => void,
): void {
  let admin: LabClient | undefined;
  let fx: WorkflowFixture | undefined;
  beforeAll(() => {
    admin = clientFor(broker);
  });
  beforeEach(() => {
    fx = workflowFixture(admin as LabClient);
    set(admin as LabClient, fx);
  });
  afterEach(async () => {
    await fx?.close();
  });
  afterAll(async () => {
    await admin?.close();
  });
}

/**
 * `where`: another Redis and key prefix than the shared one and a fresh prefix (the compiled CLI
 * reads the production prefix `rmq`, so its tests give it a Redis of their own).
 */
export function workflowFixture(
  defaultClient: ManagementClient,
  where: { redisUrl?: string; keyPrefix?: string } = {},
): WorkflowFixture {
  const redisUrl = where.redisUrl ?? REDIS_URL;
  const redis = openRedis(redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined); // a test that kills Redis sees the failures in its commands
  const keyPrefix = where.keyPrefix ?? `rmq:test-wf-${randomBytes(5).toString('hex')}`;
  const notifier = recordingNotifier();
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const queues: ApplyQueue[] = [];
  const workers: ApplyWorker[] = [];
  const environment = (over: Partial<WorkflowEnvironment> = {}): WorkflowEnvironment => ({
    name: TEST_ENV,
    mode: 'normal',
    approvalsChannel: 'C0APPROVALS',
    requestTtlMs: 24 * 3_600_000,
    ...over,
  });
  return {
    keyPrefix,
    redis,
    notifier,
    workflow(options = {}) {
      const queue = createApplyQueue({ redisUrl, keyPrefix, backoffMs: 200 });
      queues.push(queue);
      return createWorkflow({
        ...workflowDeps(options.redis ?? redis, keyPrefix, log, options.now),
        environments: [environment(options.env)],
        brokerFor: () => options.client ?? defaultClient,
        approvers: createApproverDirectory({
          approvers: new Map([[TEST_ENV, [...(options.approvers ?? [APPROVER, GROUP])]]]),
          requesters: new Map([[TEST_ENV, options.requesters ?? []]]),
          listMembers: async (g) => (g === GROUP ? [APPROVER_2] : []),
        }),
        queue,
        notifier,
        log,
        ...(options.now ? { now: options.now } : {}),
      });
    },
    async worker(client, options = {}) {
      const w = await startApplyWorker({
        redisUrl,
        keyPrefix,
        ...applyWorkerDeps(redisUrl, keyPrefix, log, options.now),
        brokerFor: () => client,
        environments: [{ name: TEST_ENV, mode: 'normal' }],
        notifier,
        log,
        backoffMs: 200,
        verifyDeadlineMs: 20_000,
        ...options,
      });
      workers.push(w);
      return w;
    },
    async close() {
      await Promise.allSettled(workers.map((w) => w.close()));
      await Promise.allSettled(queues.map((q) => q.close()));
      const keys = await redis.keys(`${keyPrefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}

/**
 * The fixture's audit trail with an outage: the appends of the records `failing` picks (by id)
 * throw "audit down" while `down` holds (set it false to end it); `tries` counts those appends.
 */
export function auditDown(
  fx: Pick<WorkflowFixture, 'redis' | 'keyPrefix'>,
  failing: (id: string) => boolean = () => true,
): { readonly audit: AuditTrail; down: boolean; tries: number } {
  const audit = new AuditTrail(fx.redis, fx.keyPrefix);
  const append = audit.append.bind(audit);
  const outage = { audit, down: true, tries: 0 };
  audit.append = (async (entry: Parameters<typeof append>[0]) => {
    if (failing(entry.id)) {
      outage.tries++;
      if (outage.down) throw new Error('audit down');
    }
    return append(entry);
  }) as typeof audit.append;
  return outage;
}

/** A client of `broker` that pushes the path of every policy it writes (PUT) to `puts`: one write, or two. */
export function policyWritesCounted(broker: TestBroker, puts: string[]): ManagementClient {
  return new ManagementClient({
    url: urlsOf(broker),
    ...brokerCredentials(),
    onCall: (c) => {
      if (c.method === 'PUT' && c.path.includes('/policies/')) puts.push(c.path);
    },
  });
}

/** The code a workflow call was refused with (`no refusal` when it was not; another error as text). */
export async function refusalCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'no refusal';
  } catch (err) {
    return isWorkflowError(err) ? err.code : String(err);
  }
}

/** The request once the apply job is done with it (applied, failed or stale), polled with a deadline. */
export function settled(wf: Workflow, id: string): Promise<ChangeRequest> {
  return waitFor(
    async () => {
      const r = await wf.get(id);
      return r && ['applied', 'failed', 'stale'].includes(r.state) && r;
    },
    { what: `request ${id} finished`, deadlineMs: 60_000 },
  );
}
