/**
 * What `links` costs beyond the listings it reads: one vhost of 100 federation upstreams, 10,000
 * federated exchanges and 1,000 shovels (beside the double's 1,000 queues and its policies),
 * served by the management API double (bench/fakeManagement.ts `--links`, a child process).
 * Printed: the answer's wall time (src/commands/links/links.ts: the policies, the three parameter
 * components, the federation links and shovels every node reports, the exchanges and queues with
 * their policy; every expected link matched and classified, the risks and advisories) over
 * streaming those same listings at once through the client and doing nothing with them (goal
 * <= 1.5), pair by pair, the median; the CPU time of this process for both; and its peak RSS,
 * sampled every 5 ms (goal <= 300 MB). Prints; asserts nothing.
 *
 *   npm run bench:links [-- --upstreams 100 --exchanges 10000 --shovels 1000 --runs 5]
 */
import { parseArgs } from 'node:util';
import { links } from '../src/commands/links/links.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { startFakeManagement } from './fakeManagement.ts';

const { values } = parseArgs({
  options: {
    upstreams: { type: 'string', default: '100' },
    exchanges: { type: 'string', default: '10000' },
    shovels: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '5' },
  },
});
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
  `links: ${values.upstreams} upstreams, ${Number(values.exchanges).toLocaleString()} federated exchanges, ${values.shovels} shovels (starting the double…)`,
);
const { child, info } = await startFakeManagement<{ url: string; vhost: string }>([
  '--queues',
  '1000',
  '--policies',
  '100',
  '--links',
  `${values.upstreams},${values.exchanges},${values.shovels}`,
]);
const client = new LabClient({ url: info.url, user: 'guest', password: 'guest' });
try {
  let counts = {};
  const listings = async () => {
    let n = 0;
    const drain = async (it: AsyncIterable<unknown>) => {
      for await (const _ of it) n++;
    };
    await Promise.all([
      client.overview(),
      client.listPolicies(info.vhost),
      client.parameters('federation-upstream', info.vhost),
      client.parameters('federation-upstream-set', info.vhost),
      client.parameters('shovel', info.vhost),
      client.federationLinkList(info.vhost),
      client.shovelList(info.vhost),
      drain(client.streamExchanges(info.vhost)),
      drain(client.streamQueues(info.vhost, { stats: false })),
    ]);
    return n;
  };
  const answered = async () => {
    const r = await links({ vhost: info.vhost }, client, { env: 'bench' });
    if (r.answer !== 'answered') throw new Error(`links did not answer: ${r.why} ${r.detail ?? ''}`);
    counts = r.counts;
  };
  await listings();
  await answered();
  const rssBefore = peakRss;
  const samples = {
    listings: [] as { wall: number; cpu: number }[],
    links: [] as { wall: number; cpu: number }[],
  };
  for (let i = 0; i < RUNS; i++) {
    samples.listings.push(await time(listings));
    samples.links.push(await time(answered));
  }
  const wall = (k: keyof typeof samples) => median(samples[k].map((s) => s.wall));
  const cpu = (k: keyof typeof samples) => median(samples[k].map((s) => s.cpu));
  console.log(`  counts ${JSON.stringify(counts)}`);
  console.log(
    `  listings alone (policies, parameters, links, shovels, exchanges, queues) ${wall('listings').toFixed(0)} ms wall, ${cpu('listings').toFixed(0)} ms CPU`,
  );
  console.log(
    `  links                                                          ${wall('links').toFixed(0)} ms wall, ${cpu('links').toFixed(0)} ms CPU`,
  );
  const paired = (of: 'wall' | 'cpu') =>
    median(samples.links.map((l, i) => l[of] / (samples.listings[i] as { wall: number; cpu: number })[of]));
  console.log(
    `  ratio links / listings, pair by pair: wall ${paired('wall').toFixed(2)}, CPU ${paired('cpu').toFixed(2)} (goal <= 1.5; of the medians: wall ${(wall('links') / wall('listings')).toFixed(2)}, CPU ${(cpu('links') / cpu('listings')).toFixed(2)})`,
  );
  console.log(
    `  peak RSS ${(peakRss / 1024 / 1024).toFixed(0)} MB (after the warm-up ${(rssBefore / 1024 / 1024).toFixed(0)} MB; goal <= 300 MB)`,
  );
} finally {
  await client.close();
  child.kill('SIGTERM');
}
