/**
 * What a burst of changes made outside the bot costs beyond the one listing it cannot do
 * without: 30 changes (edits of 30 policies, as a definitions import makes them) in one vhost of
 * 100,000 queues, served by the management API double (bench/fakeManagement.ts, a child
 * process). Printed: the burst's effects computed from one listing (src/watch/effect.ts
 * `effectsOfChanges`, what the recorder does) over fetching and parsing that listing alone (goal
 * <= 1.5); the same over the listing with the live columns it also reads (records and numbers in
 * one listing, so a burst asks the broker once), the bare listing of the same columns (goal
 * <= 1.5); and, for scale, one listing per change (what it did before). The CPU time of this process for the burst and the
 * live listing is printed too: on a machine shared with other work it wanders less than the
 * wall clock (the double's CPU, a child process, is not counted).
 *
 *   npm run bench:outside [-- --queues 100000 --changes 30 --runs 5]
 */
import { parseArgs } from 'node:util';
import type { Transition } from '../src/policy/compare.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { effectOfChange, effectsOfChanges } from '../src/watch/effect.ts';
import { startFakeManagement } from './fakeManagement.ts';

const { values } = parseArgs({
  options: {
    queues: { type: 'string', default: '100000' },
    policies: { type: 'string', default: '1000' },
    changes: { type: 'string', default: '30' },
    runs: { type: 'string', default: '5' },
  },
});
const QUEUES = Number(values.queues);
const CHANGES = Number(values.changes);
const RUNS = Number(values.runs);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** This process's CPU time in ms (the double is a child: its CPU is not counted). */
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Wall and CPU time of one run; CPU wanders less on a machine shared with other work. */
async function time(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const start = performance.now();
  const cpu = cpuNow();
  await fn();
  return { wall: performance.now() - start, cpu: cpuNow() - cpu };
}

console.log(
  `Outside changes: ${CHANGES} edits in one vhost of ${QUEUES.toLocaleString()} queues (starting the double…)`,
);
const { child, info } = await startFakeManagement<{ url: string; vhost: string }>([
  '--queues',
  String(QUEUES),
  '--policies',
  String(values.policies),
]);
const client = new LabClient({ url: info.url, user: 'guest', password: 'guest' });
try {
  const policies = await client.listPolicies(info.vhost);
  // Edits of the service policies (each governs ~200 queues): max-length lowered, as an import would.
  const changes: Transition[] = policies.slice(0, CHANGES).map((p) => ({
    layer: 'user',
    vhost: info.vhost,
    name: p.name,
    before: p,
    after: { ...p, definition: { ...p.definition, 'max-length': 10 } },
  }));
  let listed = 0;
  const samples = {
    listing: [] as number[],
    listingLive: [] as number[],
    burst: [] as number[],
    perChange: [] as number[],
  };
  const cpu = { listingLive: [] as number[], burst: [] as number[] };
  const listing = async () => {
    listed = 0;
    for await (const _q of client.streamQueues(info.vhost, { stats: false })) listed++;
  };
  // The same listing with the live columns the burst reads (records and numbers in one, so one request).
  const listingLive = async () => {
    for await (const _q of client.streamQueuesLive(info.vhost)) void _q;
  };
  const burst = () => effectsOfChanges(client, changes);
  await listing(); // warm-up
  await burst();
  for (let r = 0; r < RUNS; r++) {
    samples.listing.push((await time(listing)).wall);
    const l = await time(listingLive);
    samples.listingLive.push(l.wall);
    cpu.listingLive.push(l.cpu);
    const b = await time(burst);
    samples.burst.push(b.wall);
    cpu.burst.push(b.cpu);
  }
  // Before: one listing per change (measured once: it is CHANGES listings long).
  const perChange = await time(async () => {
    for (const c of changes) await effectOfChange(client, c);
  });
  samples.perChange.push(perChange.wall);
  const base = median(samples.listing);
  const row = (label: string, ms: number, extra = '') =>
    console.log(
      `  ${label.padEnd(58)} ${ms.toFixed(0).padStart(7)} ms   ratio ${(ms / base).toFixed(2)}${extra}`,
    );
  console.log(
    `  ${`fetch + parse the queue listing alone (${listed.toLocaleString()} queues)`.padEnd(58)} ${base.toFixed(0).padStart(7)} ms`,
  );
  row(
    `the burst's ${CHANGES} effects, from one listing (median of ${RUNS})`,
    median(samples.burst),
    '   goal <= 1.5',
  );
  const live = median(samples.listingLive);
  console.log(
    `  ${'the same listing with the live columns alone'.padEnd(58)} ${live.toFixed(0).padStart(7)} ms   ratio ${(live / base).toFixed(2)}`,
  );
  console.log(
    `  ${'the burst over the live listing alone (the same columns)'.padEnd(58)} ${''.padStart(7)}      ratio ${(median(samples.burst) / live).toFixed(2)}   goal <= 1.5`,
  );
  const cpuLive = median(cpu.listingLive);
  const cpuBurst = median(cpu.burst);
  console.log(
    `  ${'CPU of this process: the burst, the live listing alone'.padEnd(58)} ${`${cpuBurst.toFixed(0)}, ${cpuLive.toFixed(0)}`.padStart(7)} ms   ratio ${(cpuBurst / cpuLive).toFixed(2)}`,
  );
  row(`one listing per change (before; once)`, samples.perChange[0] as number, '   (for scale)');
} finally {
  await client.close();
  child.kill('SIGTERM');
}
