/**
 * bench/at: what `which NAME --at TIME` costs beside `which NAME` on the live broker.
 *
 *   npm run bench:at [-- --rounds 30]
 *
 * A trail of 100,000 records in Redis (a key prefix of its own, removed after): a change a minute
 * to one of the vhost's 1,000 policies, and every 1,000 records a gap and a snapshot of the whole
 * state (1,000 policies and the lab's), sealed and indexed as the bot seals them. The live vhost
 * holds the lab and the same 1,000 policies. Then, interleaved, `which orders.audit` (the command
 * as the terminal runs it, a new client each round) and `which orders.audit --at T` for a random
 * T of the trail (the same, plus the trail): medians, their ratio (goal <= 1.5). Memory (goal
 * <= 200 MB): the peak RSS of `node bin/rmq.js which orders.audit --at T` as users run it (the
 * built CLI; `npm run build` first), a process of its own (`/usr/bin/time`), so the fixture's
 * memory is not counted; this process's peak while asking is printed beside it. The trail is
 * written under the CLI's prefix `rmq:` in a Redis database of its own (BENCH_AT_DB, default 12, refused
 * unless empty; emptied after). The replay reads the snapshot at or before T (found through the
 * index) and the records after it, never the trail whole: the records read per question are
 * printed too.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import { setUpLab } from '../scripts/lab.ts';
import { AuditTrail, canonicalJson, recordHash } from '../src/audit/trail.ts';
import type { AuditEntry, AuditRecord } from '../src/audit/types.ts';
import { whichAt } from '../src/commands/at/whichAt.ts';
import { which } from '../src/commands/which/which.ts';
import type { Instant } from '../src/core/instant.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { benchOptions } from './options.ts';

const RECORDS = 100_000;
const POLICIES = 1_000;
const EVERY = 1_000;
const STEP_MS = 60_000;
const o = benchOptions('rounds', 30);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

let peak = 0;
const sample = () => {
  peak = Math.max(peak, process.memoryUsage().rss);
};
const sampler = setInterval(sample, 20);

const admin = new LabClient({ url: o.brokerUrl, user: o.user, password: o.password });
const vhost = `rmq-bench-at-${process.pid}`;
const db = Number(process.env.BENCH_AT_DB ?? 12);
const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
redisUrl.pathname = `/${db}`;
const redis = new Redis(redisUrl.toString());
/** The CLI's own prefix: the built CLI reads this trail. */
const prefix = 'rmq';
if ((await redis.dbsize()) > 0) {
  console.error(`bench:at: Redis database ${db} is not empty; name an empty one with BENCH_AT_DB=N`);
  process.exit(2);
}
const cwd = mkdtempSync(join(tmpdir(), 'rmq-bench-at-'));

const policy = (i: number, n: number) => ({
  vhost,
  name: `team-${i}`,
  pattern: `^team${i}\\.`,
  applyTo: 'queues',
  priority: i % 7,
  definition: { 'max-length': 1000 + n },
});

try {
  console.log(`setting up: the lab and ${POLICIES} policies in ${vhost}, ${RECORDS} records under ${prefix}`);
  await setUpLab(admin, vhost);
  const lab = await admin.listPolicies(vhost);
  const operators = await admin.listOperatorPolicies(vhost);
  for (let i = 0; i < POLICIES; i += 50)
    await Promise.all(Array.from({ length: 50 }, (_, k) => admin.putPolicy('user', policy(i + k, 0))));

  // The trail, sealed as the bot seals it, written in pipelines (stream ids at the records' times).
  const T0 = Date.now() - RECORDS * STEP_MS - 3_600_000;
  const current = new Map<number, number>();
  let prev = '';
  let pipe = redis.pipeline();
  const write = (record: AuditEntry, ms: number, seq: number) => {
    const body = { ...record, prev };
    const sealed = { ...body, hash: recordHash(body) } as AuditRecord;
    const sid = `${ms}-${seq}`;
    pipe.xadd(`${prefix}:audit`, sid, 'record', canonicalJson(sealed));
    pipe.hset(`${prefix}:audit:ids`, sealed.id, sid);
    if (sealed.action === 'snapshot') pipe.zadd(`${prefix}:audit:snapshots:lab`, ms, sid);
    if (sealed.action === 'gap') pipe.zadd(`${prefix}:audit:gaps:lab`, ms, sid);
    prev = sealed.hash;
  };
  const fields = (p: ReturnType<typeof policy>) => ({
    pattern: p.pattern,
    applyTo: p.applyTo,
    priority: p.priority,
    definition: p.definition,
  });
  for (let r = 0; r < RECORDS; r++) {
    const ms = T0 + r * STEP_MS;
    const at = new Date(ms).toISOString();
    if (r % EVERY === 0) {
      if (r > 0)
        write(
          { id: `g-${r}`, at, env: 'lab', action: 'gap', from: new Date(ms - 30_000).toISOString(), to: at },
          ms,
          0,
        );
      write(
        {
          id: `s-${r}`,
          at,
          env: 'lab',
          action: 'snapshot',
          why: r === 0 ? 'first' : 'gap',
          vhosts: null,
          version: '3.10.8',
          policies: [
            ...lab.map((p) => ({ ...p })),
            ...Array.from({ length: POLICIES }, (_, i) => policy(i, current.get(i) ?? 0)),
          ],
          operatorPolicies: operators.map((p) => ({ ...p })),
        },
        ms,
        1,
      );
    }
    const i = r % POLICIES;
    const before = policy(i, current.get(i) ?? 0);
    current.set(i, r + 1);
    write(
      {
        id: `o-${r}`,
        at: new Date(ms + 1500).toISOString(),
        appliedAt: new Date(ms + 1).toISOString(),
        env: 'lab',
        vhost,
        policy: before.name,
        operator: false,
        action: 'outside',
        actor: 'bench',
        detectedBy: 'events',
        before: fields(before),
        after: fields(policy(i, r + 1)),
        objects: [],
        unpredictable: 0,
      },
      ms + 1,
      0,
    );
    if (r % 2000 === 1999) {
      await pipe.exec();
      pipe = redis.pipeline();
    }
  }
  pipe.set(`${prefix}:audit:head`, prev);
  await pipe.exec();

  // What the setup built is let go before the questions: the peak is theirs, not the fixture's.
  pipe = redis.pipeline();
  current.clear();
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  peak = 0;
  const trail = new AuditTrail(redis, prefix);
  const input = { name: 'orders.audit', vhost };
  const live: number[] = [];
  const past: number[] = [];
  const read: number[] = [];
  const counting = {
    snapshotNear: trail.snapshotNear.bind(trail),
    gapAt: trail.gapAt.bind(trail),
    scan: trail.scan.bind(trail),
    async after(sid: string, until: number) {
      const records = await trail.after(sid, until);
      read.push(records.length);
      return records;
    },
  };
  for (let round = 0; round < o.count + 2; round++) {
    const client = new LabClient({ url: o.brokerUrl, user: o.user, password: o.password });
    const ms = T0 + Math.floor(Math.random() * RECORDS) * STEP_MS + 30_000;
    const at: Instant = {
      ms,
      iso: new Date(ms).toISOString(),
      form: 'iso',
      written: new Date(ms).toISOString(),
    };
    const t0 = performance.now();
    const now = await which(input, client);
    const t1 = performance.now();
    const then = await whichAt({ ...input, at }, 'lab', client, counting);
    const t2 = performance.now();
    await client.close(0);
    sample();
    if (now.answer !== 'reported' || !then.known)
      throw new Error(`round ${round}: ${now.answer}, known ${then.known}`);
    if (round < 2) continue; // warm-up
    live.push(t1 - t0);
    past.push(t2 - t1);
  }
  const ratio = median(past) / median(live);
  console.log(
    `which live: median ${median(live).toFixed(1)} ms; which --at: median ${median(past).toFixed(1)} ms; ratio ${ratio.toFixed(2)} (goal <= 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'})`,
  );
  console.log(
    `records read after the snapshot per question: median ${median(read)}, at most ${Math.max(...read)} (of ${RECORDS})`,
  );
  // The command as users run it, a process of its own: its peak RSS, the fixture not counted.
  const environments = join(cwd, 'environments.yml');
  writeFileSync(
    environments,
    `environments:\n  - { name: lab, url: "${o.brokerUrl}", userEnv: BENCH_USER, passwordEnv: BENCH_PASSWORD }\n`,
  );
  const cli = new URL('../bin/rmq.js', import.meta.url).pathname;
  const rss: number[] = [];
  for (let round = 0; round < 5; round++) {
    const ms = T0 + Math.floor(Math.random() * RECORDS) * STEP_MS + 30_000;
    const args = [
      process.execPath,
      cli,
      'which',
      'orders.audit',
      '--vhost',
      vhost,
      '--at',
      new Date(ms).toISOString(),
      '--json',
    ];
    const err = await new Promise<string>((resolve, reject) =>
      execFile(
        '/usr/bin/time',
        ['-f', 'maxrss %M', ...args],
        {
          cwd,
          env: {
            PATH: process.env.PATH ?? '',
            RMQ_ENVIRONMENTS: environments,
            BENCH_USER: o.user,
            BENCH_PASSWORD: o.password,
            REDIS_URL: redisUrl.toString(),
          },
          maxBuffer: 16 << 20,
        },
        (e, out, stderr) => {
          if (e) reject(new Error(`${e.message}: ${stderr}`));
          else if (!(JSON.parse(out) as { known: boolean }).known) reject(new Error(`not known at ${ms}`));
          else resolve(stderr);
        },
      ),
    );
    rss.push(Number(/maxrss (\d+)/.exec(err)?.[1] ?? Number.NaN) * 1024);
  }
  const cliPeak = Math.max(...rss);
  console.log(
    `peak RSS of \`rmq which --at\` as a process: ${(cliPeak / 2 ** 20).toFixed(0)} MB (goal <= 200 MB: ${cliPeak <= 200 * 2 ** 20 ? 'met' : 'NOT met'}); this process while asking: ${(peak / 2 ** 20).toFixed(0)} MB`,
  );
} finally {
  clearInterval(sampler);
  await admin.deleteVhost(vhost);
  await admin.close();
  for (const key of await redis.keys(`${prefix}:*`)) await redis.del(key);
  redis.disconnect();
  rmSync(cwd, { recursive: true, force: true });
}
