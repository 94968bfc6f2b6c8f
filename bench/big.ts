/**
 * A big broker, for real: the 4.3.6 chroot (15674) with 30,000 queues and 200 policies in a vhost
 * of their own (bench/bigVhost.ts: built once, kept between runs).
 *
 *   npm run bench:big [-- --runs 3] [--broker http://127.0.0.1:15674] [--vhost bench-30k]
 *   npm run bench:big -- --remove          deletes the vhost (nothing measured)
 *
 * Each run starts from the broker's cold cache (it keeps its last listing with statistics for
 * about five times what it took to build: another vhost is listed with statistics first). Timed,
 * in turn in each round: the floor, the listing WITHOUT statistics of the vhost's queues (the
 * columns matching and resolution need), streamed through the client; then each answer: `preview`
 * of a narrow delete (150 queues), a broad delete (16,650 queues) and a create (150), `lint`, and
 * `plan` of 50 changes; each once more as its calls alone (the requests it made, replayed bare
 * at the offsets it made them, bodies read and dropped). Printed, medians: each answer's time,
 * over the floor (the goal <= 1.5x) and over its calls; whether it answered whole within the
 * terminal's default budget (RMQ_TIMEOUT unset); its requests; peak RSS (goal <= 300 MB).
 */
import { Agent, request } from 'undici';
import { lint } from '../src/commands/lint/lint.ts';
import { questionBudget } from '../src/config/index.ts';
import { readDefinitions } from '../src/definitions/read.ts';
import { planFile } from '../src/plan/plan.ts';
import { type PreviewInput, preview } from '../src/preview/preview.ts';
import type { CallInfo } from '../src/rabbit/index.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { type BigVhost, ensureBigVhost, removeBigVhost, SERVICES, serviceOf } from './bigVhost.ts';

const argv = process.argv.slice(2);
const option = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : dflt;
};
const big: BigVhost = {
  broker: option('broker', 'http://127.0.0.1:15674'),
  vhost: option('vhost', 'bench-30k'),
  queues: Number(option('queues', '30000')),
  user: process.env.RMQ_USER ?? 'guest',
  password: process.env.RMQ_PASSWORD ?? 'guest',
};
const RUNS = Number(option('runs', '3'));

let peakRss = 0;
setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 5).unref();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const auth = `Basic ${Buffer.from(`${big.user}:${big.password}`).toString('base64')}`;
const dispatcher = new Agent({ connections: 8 });

/** One GET, its body read and dropped. */
async function bare(path: string): Promise<void> {
  const r = await request(`${big.broker}${path}`, { headers: { authorization: auth }, dispatcher });
  for await (const _ of r.body);
}

/** Empties the broker's cache of listings with statistics: another vhost listed with them. */
const cold = () => bare('/api/queues/%2F?columns=name,messages');

/** A client that records each request it makes (path and when it started). */
function recording(): {
  client: LabClient;
  calls: { path: string; startMs: number; ms: number }[];
  begin(): void;
} {
  const calls: { path: string; startMs: number; ms: number }[] = [];
  let t0 = performance.now();
  const client = new LabClient({
    url: big.broker,
    user: big.user,
    password: big.password,
    onCall: (c: CallInfo) => {
      if (c.attempt === 0) calls.push({ path: c.path, startMs: performance.now() - c.ms - t0, ms: c.ms });
    },
  });
  return {
    client,
    calls,
    begin() {
      calls.length = 0;
      t0 = performance.now();
    },
  };
}

/** The calls an answer made, replayed bare at the offsets it made them. */
async function replay(calls: readonly { path: string; startMs: number }[]): Promise<void> {
  const t0 = performance.now();
  await Promise.all(
    calls.map(async (c) => {
      const wait = c.startMs - (performance.now() - t0);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await bare(c.path);
    }),
  );
}

const BROAD = {
  name: 'bench-broad',
  pattern: '^svc1',
  definition: { 'message-ttl': 3_600_000 },
  priority: 9,
};

function planFileOf(): string {
  // 25 caps raised, 25 caps' patterns narrowed to a service's first hundred queues.
  const policies = Array.from({ length: 50 }, (_, s) => ({
    vhost: big.vhost,
    name: `cap-${serviceOf(s)}`,
    pattern: s < 25 ? `^${serviceOf(s)}\\.` : `^${serviceOf(s)}\\.q00`,
    'apply-to': 'queues',
    priority: s % 7,
    definition: { 'max-length': s < 25 ? 5000 + s : 1000 + s },
  }));
  return JSON.stringify({ policies, queues: [] });
}

type Answer = (client: LabClient) => Promise<{ whole: boolean }>;

const previewOf =
  (input: Omit<PreviewInput, 'vhost' | 'layer'>): Answer =>
  async (client) => {
    const r = await preview({ ...input, vhost: big.vhost, layer: 'user' } as PreviewInput, client);
    if (r.status === 'refused') throw new Error(`preview refused: ${JSON.stringify(r.refusals)}`);
    return { whole: r.status === 'answered' && !r.unread?.length };
  };

const ANSWERS: Record<string, Answer> = {
  'preview delete, narrow (150 queues)': previewOf({
    action: 'delete',
    name: `cap-${serviceOf(7)}`,
    fields: {},
  }),
  'preview delete, broad (16,650 queues)': previewOf({ action: 'delete', name: BROAD.name, fields: {} }),
  'preview create (150 queues)': previewOf({
    action: 'create',
    name: 'bench-cap',
    fields: { pattern: '^svc7\\.', applyTo: 'queues', priority: 50, definition: { 'max-length': 10 } },
  }),
  lint: async (client) => {
    const r = await lint({ vhost: big.vhost }, client, { env: 'bench' });
    return { whole: r.answer !== 'not-asked' && !r.incomplete };
  },
  'plan of 50 changes': async (client) => {
    const read = readDefinitions(planFileOf());
    if (!read.ok) throw new Error(read.problem);
    const r = await planFile(read.file, client);
    if (r.status === 'refused') throw new Error(`plan refused: ${r.problems.join(' ')}`);
    return { whole: r.status === 'planned' && !r.plan.unread?.length };
  },
};

async function main(): Promise<void> {
  if (argv.includes('--remove')) {
    await removeBigVhost(big);
    console.log(`removed ${big.vhost} on ${big.broker}`);
    return;
  }
  if (await ensureBigVhost(big, console.log)) console.log(`built ${big.vhost}`);
  const { client, calls, begin } = recording();
  // Written once (applying it to 16,650 queues takes the broker tens of seconds), then kept.
  if (!(await client.getPolicy('user', big.vhost, BROAD.name)))
    await client.putPolicy('user', { vhost: big.vhost, applyTo: 'queues', ...BROAD }).catch(() => undefined);
  const { versionText } = await client.overview();
  console.log(
    `RabbitMQ ${versionText} at ${big.broker}, vhost ${big.vhost}: ${big.queues.toLocaleString()} queues, ${SERVICES + 1} policies; ${RUNS} runs, each from a cold cache`,
  );
  const floor: number[] = [];
  const times: Record<string, number[]> = {};
  const callTimes: Record<string, number[]> = {};
  const requests: Record<string, number> = {};
  const whole: Record<string, boolean> = {};
  for (let run = 0; run < RUNS; run++) {
    await cold();
    let t = performance.now();
    for await (const _q of client.streamQueues(big.vhost, { stats: false }));
    floor.push(performance.now() - t);
    for (const [label, answer] of Object.entries(ANSWERS)) {
      await cold();
      begin();
      t = performance.now();
      // As the terminal asks with RMQ_TIMEOUT unset: 15 s, stretched to fit the broker.
      const r = await answer(
        client.forQuestion(...questionBudget({ questionBudgetMs: undefined }, 'terminal')),
      );
      times[label] = [...(times[label] ?? []), performance.now() - t];
      whole[label] = (whole[label] ?? true) && r.whole;
      requests[label] = calls.length;
      const made = [...calls];
      if (argv.includes('--calls'))
        for (const c of made)
          console.log(
            `    ${label}: +${c.startMs.toFixed(0)} ms ${c.ms.toFixed(0)} ms ${c.path.slice(0, 140)}`,
          );
      await cold();
      t = performance.now();
      await replay(made);
      callTimes[label] = [...(callTimes[label] ?? []), performance.now() - t];
      console.log(
        `    run ${run + 1}: ${label} ${(times[label] as number[]).at(-1)?.toFixed(0)} ms, its calls ${(callTimes[label] as number[]).at(-1)?.toFixed(0)} ms, floor ${floor.at(-1)?.toFixed(0)} ms${r.whole ? '' : ' INCOMPLETE'}`,
      );
    }
  }
  const f = median(floor);
  console.log(`  listing without statistics (the floor)${' '.repeat(14)} ${f.toFixed(0).padStart(6)} ms`);
  for (const label of Object.keys(ANSWERS)) {
    const ms = median(times[label] as number[]);
    const calls = median(callTimes[label] as number[]);
    console.log(
      `  ${label.padEnd(52)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / f).toFixed(2)}x the floor  ${(ms / calls).toFixed(2)}x its calls (${calls.toFixed(0)} ms, ${requests[label]} requests)  ${whole[label] ? 'whole' : 'INCOMPLETE'} within the default budget`,
    );
  }
  console.log(`  peak RSS ${(peakRss / 1024 / 1024).toFixed(0)} MB`);
  await client.close();
  await dispatcher.close();
}

await main();
