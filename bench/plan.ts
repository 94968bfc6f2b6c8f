/**
 * How much `plan` of a definitions file with 50 changes costs beyond the listings it reads.
 *
 *   npm run bench:plan                 fake management API: 100,000 queues, 1,000 policies
 *   options: --queues N --policies N --changes N --runs N
 *
 * A local server speaking the management API's shapes (bench/fakeManagement.ts, in a child
 * process) serves the vhost; the file is its 1,000 policies as an export, with N of them changed
 * (half edited: a service's cap raised; half created: a cap on a service's retry queues). Printed:
 * the plan's wall time (read, ordered, every step simulated, the end state's live impact) over
 * the time to stream the queue listing and its live columns alone, at once, through the client
 * (goal <= 2), and this process's peak RSS, sampled every 5 ms (goal <= 400 MB). Medians of
 * --runs runs, after a warm-up. Prints; asserts nothing.
 */
import { readDefinitions } from '../src/definitions/read.ts';
import { planFile } from '../src/plan/plan.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { startFakeManagement } from './fakeManagement.ts';

const argv = process.argv.slice(2);
const option = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : dflt;
};
const QUEUES = Number(option('queues', '100000'));
const POLICIES = Number(option('policies', '1000'));
const CHANGES = Number(option('changes', '50'));
const RUNS = Number(option('runs', '5'));

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 5);
sampler.unref();

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** CPU of this process (user + system), ms: less moved by a busy machine than the wall clock. */
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const cpu = { listing: [] as number[], plan: [] as number[] };

async function time(fn: () => Promise<unknown>, into?: number[]): Promise<number> {
  const start = performance.now();
  const cpuStart = cpuNow();
  await fn();
  into?.push(cpuNow() - cpuStart);
  return performance.now() - start;
}

const { child, info } = await startFakeManagement<{ url: string; vhost: string }>([
  '--queues',
  String(QUEUES),
  '--policies',
  String(POLICIES),
]);
const client = new LabClient({ url: info.url, user: 'guest', password: 'guest' });
try {
  const live = await client.listPolicies(info.vhost);
  const edited = Math.floor(CHANGES / 2);
  const policies = live.map((p, i) =>
    i < edited && p.name.startsWith('svc') && !p.name.includes('-')
      ? { ...p, definition: { ...p.definition, 'max-length': 20_000 } }
      : p,
  );
  const created = Array.from({ length: CHANGES - edited }, (_, s) => ({
    vhost: info.vhost,
    name: `svc${s}-retry-cap`,
    pattern: `^svc${s}\\.retry\\.`,
    applyTo: 'queues',
    priority: 40,
    definition: { 'max-length': 100 },
  }));
  const text = JSON.stringify({
    policies: [...policies, ...created].map((p) => ({
      vhost: p.vhost,
      name: p.name,
      pattern: p.pattern,
      'apply-to': p.applyTo,
      priority: p.priority,
      definition: p.definition,
    })),
  });
  const read = readDefinitions(text);
  if (!read.ok) throw new Error(read.problem);

  const listing = async () => {
    await Promise.all([
      (async () => {
        for await (const _q of client.streamQueues(info.vhost, { stats: false })) {
        }
      })(),
      (async () => {
        for await (const _q of client.streamQueueStats(info.vhost)) {
        }
      })(),
    ]);
  };
  // The floor: the vhost's queue listing without statistics alone (what matching and resolution need).
  const floor = async () => {
    for await (const _q of client.streamQueues(info.vhost, { stats: false })) {
    }
  };
  const floorMs: number[] = [];
  let counted = { changes: 0, objects: 0, transitional: 0 };
  const plan = async () => {
    const r = await planFile(read.file, client);
    if (r.status !== 'planned') throw new Error(`plan ${r.status}: ${JSON.stringify(r).slice(0, 300)}`);
    counted = {
      changes: r.plan.changes.length,
      objects: r.plan.vhosts.reduce((n, v) => n + v.objects.length, 0),
      transitional: r.plan.transitional.length,
    };
  };
  await listing();
  await plan();
  const samples = { listing: [] as number[], plan: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    floorMs.push(await time(floor, []));
    samples.listing.push(await time(listing, cpu.listing));
    samples.plan.push(await time(plan, cpu.plan));
  }
  const base = median(samples.listing);
  const ms = median(samples.plan);
  console.log(
    `\nplan of a file with ${counted.changes} changes over ${QUEUES.toLocaleString()} queues, ${POLICIES.toLocaleString()} policies`,
  );
  console.log(
    `  the queue listing and its live columns, streamed at once   ${base.toFixed(0).padStart(7)} ms`,
  );
  console.log(
    `  plan (${counted.objects.toLocaleString()} objects moved, ${counted.transitional} losses on the way)`.padEnd(
      60,
    ),
    `${ms.toFixed(0).padStart(7)} ms   ratio ${(ms / base).toFixed(2)} (goal <= 2)`,
  );
  console.log(
    `  CPU of this process: listing ${median(cpu.listing).toFixed(0)} ms, plan ${median(cpu.plan).toFixed(0)} ms (ratio ${(median(cpu.plan) / median(cpu.listing)).toFixed(2)})`,
  );
  console.log(
    `  plan / the queue listing without statistics (${median(floorMs).toFixed(0)} ms): ratio ${(ms / median(floorMs)).toFixed(2)} (goal <= 1.5)`,
  );
  console.log(`  peak RSS ${mb(peakRss)} (goal <= 400 MB)`);
} finally {
  await client.close();
  child.kill();
}
