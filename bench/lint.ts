/**
 * What `lint` costs beyond the listings it reads: one vhost of 100,000 queues and 1,000 policies
 * served by the management API double (bench/fakeManagement.ts, a child process). Printed: the
 * lint's wall time (src/commands/lint/lint.ts: the policy lists, the queues' records, live numbers
 * and durability columns in one listing, the exchanges with theirs, the consumers, the bindings,
 * the federation, every object resolved and every finding made, the durability kinds' too) over
 * streaming those same listings at once through the client and doing nothing with them (goal
 * <= 1.5), each lint against the listings read just before it, the median of those pairs (the
 * ratio of the two medians beside it); the CPU time of this process for both; and its peak RSS,
 * sampled every 5 ms (goal <= 300 MB). --runs pairs, after a warm-up. The double serves its
 * listings in the broker's order (by name). Prints; asserts nothing.
 *
 * With --expires the events cap (20,000 queues) sets `expires`, so lint keeps those queues' live
 * numbers (the inventory asks which, a batch of queues at a time). With --target-version 4.0 (or
 * 4.3) the lint also reads the upgrade, which asks every object (`object`) beside the outcomes.
 *
 *   npm run bench:lint [-- --queues 100000 --policies 1000 --runs 5 --expires --target-version 4.0]
 */
import { parseArgs } from 'node:util';
import { lint } from '../src/commands/lint/lint.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { startFakeManagement } from './fakeManagement.ts';

const { values } = parseArgs({
  options: {
    queues: { type: 'string', default: '100000' },
    policies: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '5' },
    expires: { type: 'boolean', default: false },
    'target-version': { type: 'string' },
  },
});
const QUEUES = Number(values.queues);
const RUNS = Number(values.runs);

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 5);
sampler.unref();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function time(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const start = performance.now();
  const cpu = cpuNow();
  await fn();
  return { wall: performance.now() - start, cpu: cpuNow() - cpu };
}

console.log(
  `lint: one vhost of ${QUEUES.toLocaleString()} queues and ${values.policies} policies (starting the double…)`,
);
const { child, info } = await startFakeManagement<{ url: string; vhost: string }>([
  '--queues',
  String(QUEUES),
  '--policies',
  String(values.policies),
  ...(values.expires ? ['--expires'] : []),
]);
const client = new LabClient({ url: info.url, user: 'guest', password: 'guest' });
try {
  let findings = 0;
  let objects = 0;
  const listings = async () => {
    let n = 0;
    await Promise.all([
      client.overview(),
      client.listPolicies(info.vhost),
      client.listOperatorPolicies(info.vhost),
      client.federation(info.vhost),
      (async () => {
        for await (const _ of client.streamQueuesLive(info.vhost, { durability: true })) n++;
      })(),
      (async () => {
        for await (const _ of client.streamExchanges(info.vhost, { durability: true })) n++;
      })(),
      (async () => {
        for await (const _ of client.streamConsumers(info.vhost)) n++;
      })(),
      (async () => {
        for await (const _ of client.streamBindings(info.vhost)) n++;
      })(),
    ]);
    return n;
  };
  // The floor: the vhost's queue listing without statistics alone (what matching and resolution need).
  const floor = async () => {
    for await (const _ of client.streamQueues(info.vhost, { stats: false }));
  };
  const linted = async () => {
    const target = values['target-version'];
    const targetVersion = target === '4.0' || target === '4.3' ? target : undefined;
    const r = await lint({ vhost: info.vhost, ...(targetVersion ? { targetVersion } : {}) }, client, {
      env: 'bench',
    });
    if (r.answer !== 'linted') throw new Error(`lint did not answer: ${r.why} ${r.detail ?? ''}`);
    findings = r.findings.length;
    objects = r.objects;
  };
  await listings();
  await linted();
  const rssBefore = peakRss;
  const samples = {
    listings: [] as { wall: number; cpu: number }[],
    floor: [] as { wall: number; cpu: number }[],
    lint: [] as { wall: number; cpu: number }[],
  };
  for (let i = 0; i < RUNS; i++) {
    samples.floor.push(await time(floor));
    samples.listings.push(await time(listings));
    samples.lint.push(await time(linted));
  }
  const wall = (k: keyof typeof samples) => median(samples[k].map((s) => s.wall));
  const cpu = (k: keyof typeof samples) => median(samples[k].map((s) => s.cpu));
  console.log(`  ${objects.toLocaleString()} objects, ${findings} findings`);
  console.log(
    `  its listings (queues with live numbers and durability, exchanges, consumers, bindings, policies, federation) ${wall('listings').toFixed(0)} ms wall, ${cpu('listings').toFixed(0)} ms CPU`,
  );
  console.log(
    `  lint                                                                 ${wall('lint').toFixed(0)} ms wall, ${cpu('lint').toFixed(0)} ms CPU`,
  );
  // Pair by pair (each lint over the listings read just before it), then the median: a shared
  // machine's speed drifts by more than the pass costs, and a pair sees the same drift.
  const paired = (of: 'wall' | 'cpu') =>
    median(samples.lint.map((l, i) => l[of] / (samples.listings[i] as { wall: number; cpu: number })[of]));
  console.log(
    `  ratio lint / listings, pair by pair: wall ${paired('wall').toFixed(2)}, CPU ${paired('cpu').toFixed(2)} (goal <= 1.5; of the medians: wall ${(wall('lint') / wall('listings')).toFixed(2)}, CPU ${(cpu('lint') / cpu('listings')).toFixed(2)})`,
  );
  console.log(
    `  ratio lint / the queue listing without statistics (${wall('floor').toFixed(0)} ms): wall ${(wall('lint') / wall('floor')).toFixed(2)} (goal <= 1.5)`,
  );
  console.log(
    `  peak RSS ${(peakRss / 1024 / 1024).toFixed(0)} MB (after the warm-up ${(rssBefore / 1024 / 1024).toFixed(0)} MB; goal <= 300 MB)`,
  );
} finally {
  await client.close();
  child.kill('SIGTERM');
}
