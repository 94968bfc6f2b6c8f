import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import * as z from 'zod';
import { type LintBroker, lint } from '../commands/lint/index.ts';
import type { Environment } from '../config/index.ts';
import { inScope } from '../core/index.ts';
import type { Logger } from '../log/index.ts';
import { type DigestFinding, diffFindings, SEVERITIES } from '../policy/lint/index.ts';
import type { RedisTrouble } from '../redis/index.ts';
import { openRedis } from '../redis/index.ts';
import { boundedClose, bullPrefix } from '../workflow/apply/index.ts';
import type { Delivery } from './delivery.ts';
import { type DigestVhost, type EnvironmentDigest, lintDigestView } from './views/lintDigest.ts';

/**
 * The scheduled lint digest (RMQ_LINT_SCHEDULE): a BullMQ job scheduler with the cron pattern,
 * keyed in Redis, so however many replicas upsert it there is one job per tick, and BullMQ hands
 * that job to one worker. The job lints every vhost each environment may answer about and posts
 * one message per environment to its approvals channel: new findings first, the fixed, the rest
 * counted. The findings of the last digest are kept per environment and vhost under
 * `<prefix>:lint-digest:…`; a vhost (or a broker) that could not be asked keeps its last one, and
 * so does a digest Slack did not take.
 */

export const LINT_DIGEST_QUEUE = 'rmq-lint-digest';
const SCHEDULER_ID = 'lint-digest';

const Stored = z.object({
  at: z.string(),
  findings: z.array(
    z.object({
      kind: z.string(),
      severity: z.enum(SEVERITIES),
      policy: z.string(),
      operator: z.boolean(),
      objects: z.array(z.string()),
      why: z.string(),
    }),
  ),
});

const keyOf = (keyPrefix: string, env: string, vhost: string) =>
  `${keyPrefix}:lint-digest:${encodeURIComponent(env)}:${encodeURIComponent(vhost)}`;

/** The last digest's findings of a vhost; undefined when there was none (or it cannot be read). */
async function lastFindings(
  redis: Redis,
  key: string,
  log: Logger,
): Promise<readonly DigestFinding[] | undefined> {
  const text = await redis.get(key);
  if (text === null) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = Stored.safeParse(json);
  if (!parsed.success) {
    log.warn({ key }, 'the last lint digest stored is unreadable: this one counts every finding as new');
    return undefined;
  }
  return parsed.data.findings;
}

export interface DigestDeps {
  readonly environments: readonly Environment[];
  readonly brokers: ReadonlyMap<string, LintBroker>;
  readonly redis: Redis;
  readonly keyPrefix: string;
  readonly delivery: Pick<Delivery, 'toChannel'>;
  readonly log: Logger;
}

/** One environment's digest, and what to store once it is posted. */
async function digestOf(
  env: Environment,
  broker: LintBroker,
  d: DigestDeps,
): Promise<{ digest: EnvironmentDigest; store: Map<string, string> }> {
  const store = new Map<string, string>();
  let vhosts: readonly string[];
  try {
    vhosts =
      env.vhosts ?? (await (broker.listVhosts?.() ?? Promise.resolve([]))).filter((v) => inScope(env, v));
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return { digest: { env: env.name, answer: 'not-asked', detail }, store };
  }
  const out: DigestVhost[] = [];
  for (const vhost of vhosts) {
    const result = await lint({ vhost }, broker, { env: env.name });
    if (result.answer === 'not-asked') {
      out.push({ vhost, result: { ...result, answer: 'not-asked' } });
      continue;
    }
    const key = keyOf(d.keyPrefix, env.name, vhost);
    const previous = await lastFindings(d.redis, key, d.log);
    out.push({
      vhost,
      result: { ...result, answer: 'linted' },
      diff: diffFindings(previous, result.findings),
      first: previous === undefined,
    });
    const kept = result.findings.map(({ kind, severity, policy, operator, objects, why }) => ({
      kind,
      severity,
      policy,
      operator,
      objects: [...objects],
      why,
    }));
    store.set(key, JSON.stringify({ at: new Date().toISOString(), findings: kept }));
  }
  return { digest: { env: env.name, answer: 'linted', vhosts: out }, store };
}

/** Every environment's digest posted to its approvals channel (the job's work). */
export async function postDigests(d: DigestDeps): Promise<void> {
  for (const env of d.environments) {
    const broker = d.brokers.get(env.name);
    if (!env.approvalsChannel || !broker) {
      d.log.info({ env: env.name }, 'lint digest: no approvals channel for this environment, not posted');
      continue;
    }
    const { digest, store } = await digestOf(env, broker, d);
    const sent = await d.delivery
      .toChannel({ channel: env.approvalsChannel })
      .send(lintDigestView(digest), 'channel');
    if (!sent.ok) {
      d.log.error(
        { env: env.name, error: sent.error },
        'Slack did not take the lint digest; the last one is kept',
      );
      continue;
    }
    for (const [key, value] of store) await d.redis.set(key, value);
  }
}

export interface LintDigest {
  close(): Promise<void>;
}

/** The scheduler (upserted: one across replicas) and this replica's worker. */
export async function startLintDigest(
  o: DigestDeps & {
    readonly redisUrl: string;
    readonly pattern: string;
    /** The bot's: Redis away told once for every connection, the digest's failures then quiet. */
    readonly redisTrouble?: RedisTrouble;
  },
): Promise<LintDigest> {
  const queueConnection = openRedis(o.redisUrl, { maxRetriesPerRequest: null });
  queueConnection.on('error', () => undefined);
  const queue = new Queue(LINT_DIGEST_QUEUE, {
    connection: queueConnection,
    prefix: bullPrefix(o.keyPrefix),
  });
  queue.on('error', (err) => {
    if (!o.redisTrouble?.absorbed(err)) o.log.warn({ err: err.message }, 'lint digest queue error');
  });
  await queue.upsertJobScheduler(
    SCHEDULER_ID,
    { pattern: o.pattern },
    { name: 'digest', opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 }, attempts: 1 } },
  );
  const own = openRedis(o.redisUrl, { maxRetriesPerRequest: null });
  own.on('error', () => undefined); // reported by the worker's 'error' below
  const worker = new Worker(LINT_DIGEST_QUEUE, () => postDigests(o), {
    connection: own,
    prefix: bullPrefix(o.keyPrefix),
    concurrency: 1,
  });
  worker.on('failed', (job, err) => o.log.warn({ job: job?.id, err: err.message }, 'lint digest failed'));
  worker.on('error', (err) => {
    if (!o.redisTrouble?.absorbed(err)) o.log.warn({ err: err.message }, 'lint digest worker error');
  });
  const closeWorker = boundedClose(worker, own);
  return {
    async close() {
      await closeWorker();
      own.disconnect();
      await queue.close().catch(() => undefined);
      queueConnection.disconnect();
    },
  };
}
