/**
 * What the apply of a 50-change set costs beyond the broker calls it needs.
 *
 *   npm run bench:apply-set             options: --queues N (200) --runs N (5) --broker URL
 *
 * A vhost of its own with N classic queues in 25 groups, each matched by two policies `hiK`
 * (priority 2, governing) and `loK` (1) over `^gK\.`. The set edits both in every group (and back
 * on the next run): `hiK`'s cap changed and `loK` risen above it (3): 50 edits, planned by the
 * planner (`fileImport`, as the bot files it). Where two steps move the same queues the first must
 * be reported before the second is written; the planner's order (`loK` first one way, `hiK` first
 * the other) leaves one step moving each group, so the line printed says 0 steps waited on.
 *   set:  from the approval (`Workflow.decide`) to the request `applied`, with the real BullMQ
 *         worker, Redis and broker: the 50 writes in order, each step re-checked before it is
 *         written, the verification polls, the cursor saved after each step, the 50 chained
 *         audit records, the state moves.
 *   bare: the same 50 PUTs and DELETEs in the same order, plus one poll of the queue listing
 *         (repeated until they report) for each step whose `verify` names objects: the least a
 *         careful client must do to keep the order's promise.
 * Medians over --runs sets of each direction, after a warm-up. Goal: set <= 1.5x bare. Prints;
 * asserts nothing.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { fileImport } from '../src/commands/import/import.ts';
import { readDefinitions } from '../src/definitions/read.ts';
import { planFile } from '../src/plan/plan.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { type PolicySetStep, plannedSet } from '../src/workflow/changeSet.ts';
import type { ChangeRequest, Notifier } from '../src/workflow/types.ts';
import { benchWorkflow } from './benchWorkflow.ts';

const argv = process.argv.slice(2);
const option = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : dflt;
};
const QUEUES = Number(option('queues', '200'));
const RUNS = Number(option('runs', '5'));
const GROUPS = 25;
const BROKER = option('broker', process.env.RMQ_URL ?? 'http://127.0.0.1:15672');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const credentials = { user: process.env.RMQ_USER ?? 'guest', password: process.env.RMQ_PASSWORD ?? 'guest' };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (x: number) => `${x.toFixed(0)} ms`;

const client = new LabClient({ url: BROKER, ...credentials });
const vhost = `rmqbench-applyset-${randomBytes(4).toString('hex')}`;
const keyPrefix = `rmq:bench-applyset-${randomBytes(4).toString('hex')}`;
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });

/**
 * Group K's two policies over `^gK\.`: `hiK` (priority 2) governs; `swapped`: its cap changed
 * and `loK` risen above it (priority 3), so both steps move the group's queues.
 */
const policiesOf = (k: number, swapped: boolean) =>
  [
    { name: `hi${k}`, priority: 2, definition: { 'max-length': (swapped ? 3000 : 1000) + k } },
    { name: `lo${k}`, priority: swapped ? 3 : 1, definition: { 'max-length': 2000 + k } },
  ].map((p) => ({ ...p, pattern: `^g${k}\\.`, 'apply-to': 'queues' }));

/** The vhost's export, every group as it is before (`swapped` false) or after the set. */
const fileWith = (swapped: boolean) =>
  JSON.stringify({
    policies: Array.from({ length: GROUPS }, (_, k) =>
      policiesOf(k, swapped).map((p) => ({ vhost, ...p })),
    ).flat(),
  });

/** Polls the queue listing until every object of `verify` reports its policy. */
async function untilReported(verify: NonNullable<PolicySetStep['verify']>): Promise<void> {
  const want = new Map(verify.map((o) => [o.name, o.policy]));
  for (;;) {
    let pending = 0;
    for await (const q of client.streamQueues(vhost, { stats: false }))
      if (want.has(q.name) && (q.policy ?? null) !== want.get(q.name)) pending++;
    if (pending === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The steps written as a careful client would: each PUT or DELETE, and the poll its order needs. */
async function bare(steps: readonly PolicySetStep[]): Promise<{ ms: number; polls: number }> {
  const t0 = performance.now();
  let polls = 0;
  for (const s of steps) {
    if (s.after) await client.putPolicy('user', { vhost, name: s.name, ...s.after });
    else await client.deletePolicy('user', vhost, s.name);
    if (s.verify?.length) {
      polls++;
      await untilReported(s.verify);
    }
  }
  return { ms: performance.now() - t0, polls };
}

async function main() {
  await client.putVhost(vhost);
  const waiters = new Map<string, (r: ChangeRequest) => void>();
  const notifier: Notifier = {
    async stateChanged(r) {
      if (['applied', 'failed', 'stale'].includes(r.state)) waiters.get(r.id)?.(r);
    },
    async applied() {},
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
  const deps = { workflow, broker: () => ({ name: 'bench', broker: client }) };
  const file = async (swapped: boolean) => {
    const filed = await fileImport(
      deps,
      { source: 'definitions.json', file: fileWith(swapped), reason: 'bench', prune: true },
      'U0A',
      { channel: 'C0' },
    );
    if (filed.status !== 'filed') throw new Error(JSON.stringify(filed));
    return filed;
  };
  try {
    await Promise.all(
      Array.from({ length: QUEUES }, (_, i) =>
        client.putQueue(vhost, `g${i % GROUPS}.${i}`, { kind: 'classic' }),
      ),
    );
    for (let k = 0; k < GROUPS; k++)
      for (const { 'apply-to': applyTo, ...p } of policiesOf(k, false))
        await client.putPolicy('user', { vhost, applyTo, ...p });

    let swapped = false;
    const viaSet = async (): Promise<number> => {
      swapped = !swapped;
      const { request, plan } = await file(swapped);
      if (plan.changes.length !== 2 * GROUPS) throw new Error(`${plan.changes.length} changes planned`);
      const done = new Promise<ChangeRequest>((resolve) => waiters.set(request.id, resolve));
      const t0 = performance.now();
      await workflow.decide(request.id, { kind: 'approve', user: 'U0B', reason: 'bench' });
      const r = await done;
      const took = performance.now() - t0;
      if (r.state !== 'applied') throw new Error(`the set ended ${r.state}`);
      return took;
    };
    /** The bare writes of the next rename: planned the same way, never filed. */
    const viaBare = async () => {
      swapped = !swapped;
      const read = readDefinitions(fileWith(swapped));
      if (!read.ok) throw new Error(read.problem);
      const planned = await planFile(read.file, client, { prune: true });
      if (planned.status !== 'planned') throw new Error(JSON.stringify(planned));
      return bare(plannedSet(planned.plan).steps as PolicySetStep[]);
    };

    // warm-up
    await viaSet();
    await viaBare();

    const set: number[] = [];
    const plain: number[] = [];
    let polls = 0;
    for (let i = 0; i < RUNS; i++) {
      set.push(await viaSet());
      const b = await viaBare();
      plain.push(b.ms);
      polls = b.polls;
    }
    const version = (await client.overview()).versionText;
    const ms1 = median(set);
    const ms2 = median(plain);
    console.log(
      `bench/applySet: RabbitMQ ${version}, ${QUEUES} queues in ${GROUPS} groups, a set of ${2 * GROUPS} changes (${polls} steps the order waits on), ${RUNS} runs, medians`,
    );
    console.log(
      `  set: approval -> applied ${ms(ms1)}; bare PUT/DELETE + polls ${ms(ms2)}; ratio ${(ms1 / ms2).toFixed(2)} (goal <= 1.5)`,
    );
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
