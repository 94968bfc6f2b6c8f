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
 *
 * With `--broker URL` (and `--amqp URL`, the same broker's AMQP port), on a real broker instead: the
 * vhost `bench-links` built there and kept between runs (`--remove` deletes it and its upstream
 * vhost), with as many links as a chroot broker holds without strain — by default 10 upstreams
 * (each a vhost of the same broker), 100 federated exchanges (one link each: the policies name
 * one upstream per group) and 25 shovels (a queue to another) — every link a real one the broker
 * runs, the listings as it serves them. Each link to the same broker holds two of its file
 * descriptors and each shovel four: the chroot brokers have 1,024, and 500 links with 100 shovels
 * ran 4.3.6 out of them (`emfile`, the management API answering 500 until restarted).
 */
import { parseArgs } from 'node:util';
import { links } from '../src/commands/links/links.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { waitFor } from '../test/support/broker.ts';
import { startFakeManagement } from './fakeManagement.ts';

const { values } = parseArgs({
  options: {
    upstreams: { type: 'string' },
    exchanges: { type: 'string' },
    shovels: { type: 'string' },
    runs: { type: 'string', default: '5' },
    broker: { type: 'string' },
    amqp: { type: 'string', default: 'amqp://127.0.0.1:5674' },
    remove: { type: 'boolean', default: false },
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

const REAL_VHOST = 'bench-links';
const REAL_UPSTREAM_VHOST = 'bench-links-up';

/** The vhost on the real broker: upstreams, federated exchanges, shovels; kept (each PUT again is a no-op). */
async function realWorld(client: LabClient, size: { upstreams: number; exchanges: number; shovels: number }) {
  const amqp = new URL(values.amqp as string);
  const uri = (vhost: string) => `amqp://guest:guest@${amqp.host}/${encodeURIComponent(vhost)}`;
  await client.putVhost(REAL_UPSTREAM_VHOST);
  await client.putVhost(REAL_VHOST);
  for (let u = 0; u < size.upstreams; u++) {
    await client.putParameter({
      component: 'federation-upstream',
      vhost: REAL_VHOST,
      name: `up-${u}`,
      value: { uri: uri(REAL_UPSTREAM_VHOST), 'ack-mode': 'on-confirm' },
    });
    await client.putPolicy('user', {
      vhost: REAL_VHOST,
      name: `fed-${u}`,
      pattern: `^fed\\.${u}\\.`,
      applyTo: 'exchanges',
      priority: 1,
      definition: { 'federation-upstream': `up-${u}` },
    });
  }
  for (let x = 0; x < size.exchanges; x++)
    await client.putExchange(REAL_VHOST, `fed.${x % size.upstreams}.x${x}`, 'topic');
  for (let k = 0; k < size.shovels; k++) {
    await client.putQueue(REAL_VHOST, `src.${k}`, { kind: 'classic' });
    await client.putParameter({
      component: 'shovel',
      vhost: REAL_VHOST,
      name: `shovel-${k}`,
      value: {
        'src-uri': uri(REAL_VHOST),
        'src-queue': `src.${k}`,
        'dest-uri': uri(REAL_VHOST),
        'dest-queue': `dst.${k}`,
      },
    });
  }
}

/** The world's size: as asked, else the double's or (with --broker) what a chroot broker holds. */
const sized = (asked: string | undefined, double: number, real: number) =>
  Number(asked ?? (values.broker ? real : double));
const size = {
  upstreams: sized(values.upstreams, 100, 10),
  exchanges: sized(values.exchanges, 10_000, 100),
  shovels: sized(values.shovels, 1_000, 25),
};
let client: LabClient;
let vhost: string;
let stop: () => void = () => undefined;
if (values.broker) {
  client = new LabClient({ url: values.broker, user: 'guest', password: 'guest' });
  vhost = REAL_VHOST;
  if (values.remove) {
    await client.deleteVhost(REAL_VHOST);
    await client.deleteVhost(REAL_UPSTREAM_VHOST);
    console.log(`links: removed ${REAL_VHOST} and ${REAL_UPSTREAM_VHOST} from ${values.broker}`);
    await client.close();
    process.exit(0);
  }
  console.log(
    `links on ${values.broker}: ${size.upstreams} upstreams, ${size.exchanges} federated exchanges, ${size.shovels} shovels (kept in ${REAL_VHOST}; --remove deletes it)`,
  );
  await realWorld(client, size);
  // Every link the world asks for reported (running or not): the broker starts them in the background.
  await waitFor(
    async () => {
      const [fed, shovels] = await Promise.all([client.federationLinkList(vhost), client.shovelList(vhost)]);
      return (fed?.length ?? 0) >= size.exchanges && (shovels?.length ?? 0) >= size.shovels;
    },
    { deadlineMs: 300_000, intervalMs: 2_000, what: 'every link reported' },
  );
} else {
  console.log(
    `links: ${size.upstreams} upstreams, ${size.exchanges.toLocaleString()} federated exchanges, ${size.shovels} shovels (starting the double…)`,
  );
  const fake = await startFakeManagement<{ url: string; vhost: string }>([
    '--queues',
    '1000',
    '--policies',
    '100',
    '--links',
    `${size.upstreams},${size.exchanges},${size.shovels}`,
  ]);
  client = new LabClient({ url: fake.info.url, user: 'guest', password: 'guest' });
  vhost = fake.info.vhost;
  stop = () => fake.child.kill('SIGTERM');
}
const info = { vhost };
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
  stop();
}
