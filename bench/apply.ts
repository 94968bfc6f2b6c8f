/**
 * What the approval workflow costs beyond the broker calls a change needs.
 *
 *   npm run bench:apply                    options: --queues N (200) --runs N (15) --broker URL
 *
 * A vhost of its own with N classic queues and a base policy; the change alternates between
 * creating and deleting a policy that catches half of them.
 *   workflow: from the approval (`Workflow.decide`) to the audit record (Notifier.applied), with
 *             the real BullMQ worker, Redis and broker: re-read, fresh preview, write, polling
 *             until the objects report the policy, the chained record, the state moves. The
 *             Slack posts after it are not counted (they are the Slack side's).
 *   bare:     the PUT (or DELETE) alone, plus polling the same listing until every affected
 *             queue reports the expected policy: what any careful change must do.
 * Medians over --runs changes of each kind, after a warm-up. Prints; asserts nothing.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ChangeRecord } from '../src/audit/types.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import type { FileInput, Notifier } from '../src/workflow/types.ts';
import { benchWorkflow } from './benchWorkflow.ts';

const argv = process.argv.slice(2);
const option = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : dflt;
};
const QUEUES = Number(option('queues', '200'));
const RUNS = Number(option('runs', '15'));
const BROKER = option('broker', process.env.RMQ_URL ?? 'http://127.0.0.1:15672');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const credentials = { user: process.env.RMQ_USER ?? 'guest', password: process.env.RMQ_PASSWORD ?? 'guest' };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (x: number) => `${x.toFixed(1)} ms`;

const client = new LabClient({ url: BROKER, ...credentials });
const vhost = `rmqbench-apply-${randomBytes(4).toString('hex')}`;
const keyPrefix = `rmq:bench-apply-${randomBytes(4).toString('hex')}`;
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const POLICY = 'bench-ttl';
const targets = Array.from({ length: QUEUES / 2 }, (_, i) => `hot.${i}`);

/** Polls the queue listing (the policy is on the queue record: current at once) until every target reports `expected`. */
async function untilReported(expected: string): Promise<void> {
  for (;;) {
    const reported = new Map<string, string | null | undefined>();
    for await (const q of client.streamQueues(vhost, { stats: false })) reported.set(q.name, q.policy);
    if (targets.every((t) => reported.get(t) === expected)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function bare(kind: 'create' | 'delete'): Promise<number> {
  const t0 = performance.now();
  if (kind === 'create') {
    await client.putPolicy('user', {
      vhost,
      name: POLICY,
      pattern: '^hot\\.',
      applyTo: 'queues',
      priority: 5,
      definition: { 'message-ttl': 60000 },
    });
    await untilReported(POLICY);
  } else {
    await client.deletePolicy('user', vhost, POLICY);
    await untilReported('base');
  }
  return performance.now() - t0;
}

async function main() {
  await client.putVhost(vhost);
  let appliedWaiter: ((r: ChangeRecord) => void) | undefined;
  // Tells nobody, but the bench waits for each record.
  const notifier: Notifier = {
    async stateChanged() {},
    async applied(_r, record) {
      appliedWaiter?.(record);
    },
    async failed() {},
    async stale() {},
    async reminder() {},
    async reviewed() {},
    async reviewReminder() {},
  };
  const { workflow, close } = await benchWorkflow({
    client,
    redis,
    redisUrl: REDIS_URL,
    keyPrefix,
    notifier,
  });
  try {
    await Promise.all(
      Array.from({ length: QUEUES }, (_, i) =>
        client.putQueue(vhost, i < QUEUES / 2 ? `hot.${i}` : `cold.${i}`, { kind: 'classic' }),
      ),
    );
    await client.putPolicy('user', {
      vhost,
      name: 'base',
      pattern: '.*',
      applyTo: 'queues',
      priority: 0,
      definition: { 'max-length': 1000 },
    });
    await untilReported('base');

    const viaWorkflow = async (kind: 'create' | 'delete'): Promise<number> => {
      const input: FileInput = {
        env: 'bench',
        vhost,
        layer: 'user',
        action: kind,
        policy: POLICY,
        fields:
          kind === 'create'
            ? { pattern: '^hot\\.', applyTo: 'queues', priority: 5, definition: { 'message-ttl': 60000 } }
            : {},
        requester: { user: 'U0A', reason: 'bench' },
        origin: { channel: 'C0' },
      };
      const { request } = await workflow.file(input);
      const recorded = new Promise<ChangeRecord>((resolve) => {
        appliedWaiter = resolve;
      });
      const t0 = performance.now();
      await workflow.decide(request.id, { kind: 'approve', user: 'U0B', reason: 'bench' });
      const record = await recorded;
      const took = performance.now() - t0;
      if (!record.matchedPreview) throw new Error('the objects did not report the previewed policy');
      return took;
    };

    // warm-up
    await viaWorkflow('create');
    await viaWorkflow('delete');
    await bare('create');
    await bare('delete');

    const w: Record<'create' | 'delete', number[]> = { create: [], delete: [] };
    const b: Record<'create' | 'delete', number[]> = { create: [], delete: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const kind of ['create', 'delete'] as const) w[kind].push(await viaWorkflow(kind));
      for (const kind of ['create', 'delete'] as const) b[kind].push(await bare(kind));
    }
    const version = (await client.overview()).versionText;
    console.log(
      `bench/apply: RabbitMQ ${version}, ${QUEUES} queues (${targets.length} affected), ${RUNS} runs each, medians`,
    );
    for (const kind of ['create', 'delete'] as const) {
      const mw = median(w[kind]);
      const mb = median(b[kind]);
      console.log(
        `  ${kind}: approval -> audit recorded ${ms(mw)}; bare ${kind === 'create' ? 'PUT' : 'DELETE'} + polling ${ms(mb)}; ratio ${(mw / mb).toFixed(2)}`,
      );
    }
  } finally {
    await close();
    await client.deleteVhost(vhost).catch(() => undefined);
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
