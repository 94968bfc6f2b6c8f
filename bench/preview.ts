// Over 400 lines: three benches of one preview (the double, a real broker, lookaround) share their timing.
/**
 * How much a preview costs beyond the one listing it cannot do without.
 *
 *   npm run bench:preview                         fake management API (100,000 queues, 1,000 policies) + real broker (30,000 queues)
 *   npm run bench:preview -- --skip-real          the fake one only
 *   npm run bench:preview -- --real-only --broker http://127.0.0.1:15673
 *   options: --queues N --policies N --real-queues N --runs N
 *
 * 1. A local server speaking the management API's shapes (bench/fakeManagement.ts, in a child
 *    process) serves a vhost of 100,000 queues and 1,000 policies, with their live columns.
 *    Printed: a delete and a create preview's wall time (the live columns read, as every preview
 *    does) over the time to stream that same queue listing and its live columns alone, at once,
 *    through the client (goal <= 1.5 each); beside it, over the calls such a preview now makes
 *    (that queue listing, and the live columns of the queues the changed policy finds alone, one
 *    page of the broker's name filter, which the double serves too); and this process's peak
 *    RSS, sampled every 5 ms (goal <= 300 MB).
 * 2. The real broker (RMQ_URL, or --broker): 30,000 queues in a vhost of their own, created with
 *    parallel PUTs and removed after. Printed: the preview over the cheapest listing that carries
 *    every queue's policy (`disable_stats=true&columns=name,policy`), goal <= 1.5.
 * Medians of --runs runs, after a warm-up. Prints; asserts nothing.
 */
import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { type PreviewInput, preview } from '../src/preview/preview.ts';
import { parseJsonArrayStream } from '../src/rabbit/jsonArrayStream.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { startFakeManagement } from './fakeManagement.ts';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const option = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : dflt;
};
const QUEUES = Number(option('queues', '100000'));
const POLICIES = Number(option('policies', '1000'));
const REAL_QUEUES = Number(option('real-queues', '30000'));
const RUNS = Number(option('runs', '5'));
const BROKER = option('broker', process.env.RMQ_URL ?? 'http://127.0.0.1:15672');
const USER = process.env.RMQ_USER ?? 'guest';
const PASSWORD = process.env.RMQ_PASSWORD ?? 'guest';

// --- measuring ----------------------------------------------------------------------------

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 5);
sampler.unref();

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Each measurement once per round, in turn, so drift hits them alike. */
async function rounds(
  runs: number,
  named: Record<string, () => Promise<unknown>>,
): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(named).map((k) => [k, []]));
  for (const fn of Object.values(named)) await fn(); // warm-up: JIT, connections, pattern compilation paths
  for (let r = 0; r < runs; r++) {
    for (const [k, fn] of Object.entries(named)) samples[k]?.push(await time(fn));
  }
  return Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)]));
}

function row(label: string, ms: number, base: number, extra = ''): string {
  return `  ${label.padEnd(52)} ${ms.toFixed(0).padStart(7)} ms   ratio ${(ms / base).toFixed(2)}${extra}`;
}

async function previewOf(client: LabClient, vhost: string, name: string): Promise<number> {
  return (await previewed(client, { action: 'delete', name, layer: 'user', vhost, fields: {} })).objects;
}

/** A preview answered; how many objects it moves, and how many of them carry live numbers. */
async function previewed(client: LabClient, input: PreviewInput): Promise<{ objects: number; live: number }> {
  const r = await preview(input, client);
  if (r.status !== 'answered') throw new Error(`preview ${r.status}: ${JSON.stringify(r).slice(0, 300)}`);
  return { objects: r.objects.length, live: r.objects.filter((o) => o.now !== null).length };
}

/** A new cap over one service's 200 queues: the create the bench previews. */
const createInput = (vhost: string): PreviewInput => ({
  action: 'create',
  name: 'bench-cap',
  layer: 'user',
  vhost,
  fields: { pattern: '^svc7\\.', applyTo: 'queues', priority: 50, definition: { 'max-length': 10 } },
});

/** The two listings a preview with the live columns reads, streamed by the client at once, nothing kept. */
async function liveListingsAlone(client: LabClient, vhost: string): Promise<number> {
  let n = 0;
  await Promise.all([
    (async () => {
      for await (const _q of client.streamQueues(vhost, { stats: false })) n++;
    })(),
    (async () => {
      for await (const _q of client.streamQueueStats(vhost)) n++;
    })(),
  ]);
  return n / 2;
}

/**
 * The calls a preview of a change whose pattern finds few queues makes: the queue listing, and
 * the live columns of the queues the pattern finds alone (the broker's name filter, one page),
 * streamed by the client at once, nothing kept.
 */
async function narrowedCallsAlone(client: LabClient, vhost: string, pattern: string): Promise<void> {
  await Promise.all([
    (async () => {
      for await (const _q of client.streamQueues(vhost, { stats: false })) {
      }
    })(),
    client.findQueueStats(vhost, pattern).then((found) => {
      if (found === null) throw new Error(`${pattern} finds more queues than one page holds`);
    }),
  ]);
}

async function listingAlone(client: LabClient, vhost: string): Promise<number> {
  let n = 0;
  for await (const _q of client.streamQueues(vhost, { stats: false })) n++;
  return n;
}

// --- 1. the fake management API -------------------------------------------------------------

function startFake(lookaround = false) {
  return startFakeManagement<{
    url: string;
    vhost: string;
    narrow: string;
    broad: string;
    queues: number;
    policies: number;
  }>(['--queues', String(QUEUES), '--policies', String(POLICIES), ...(lookaround ? ['--lookaround'] : [])]);
}

async function benchFake(): Promise<void> {
  console.log(
    `\n1. Fake management API: ${QUEUES.toLocaleString()} queues, ${POLICIES.toLocaleString()} policies (starting it…)`,
  );
  const { child, info } = await startFake();
  const client = new LabClient({ url: info.url, user: USER, password: PASSWORD });
  try {
    const counts = { narrow: { objects: 0, live: 0 }, create: { objects: 0, live: 0 }, broad: 0, listed: 0 };
    const narrowPattern = (await client.listPolicies(info.vhost)).find(
      (p) => p.name === info.narrow,
    )?.pattern;
    const createPattern = String(createInput(info.vhost).fields.pattern);
    if (!narrowPattern) throw new Error(`no policy ${info.narrow}`);
    const before = peakRss;
    // The floor: the queue listing without statistics alone (what matching and resolution need).
    const floor = async () => {
      for await (const _q of client.streamQueues(info.vhost, { stats: false }));
    };
    const t = await rounds(RUNS, {
      floor,
      listing: async () => {
        counts.listed = await liveListingsAlone(client, info.vhost);
      },
      narrowCalls: () => narrowedCallsAlone(client, info.vhost, narrowPattern),
      createCalls: () => narrowedCallsAlone(client, info.vhost, createPattern),
      narrow: async () => {
        counts.narrow = await previewed(client, {
          action: 'delete',
          name: info.narrow,
          layer: 'user',
          vhost: info.vhost,
          fields: {},
        });
      },
      create: async () => {
        counts.create = await previewed(client, createInput(info.vhost));
      },
    });
    const peakNarrow = peakRss;
    // The broad delete in rounds of its own (its peak memory apart), each beside a listing of the
    // same rounds: a ratio over listings timed earlier wanders with the load in between.
    const broad = await rounds(RUNS, {
      floor,
      listing: () => liveListingsAlone(client, info.vhost),
      broad: async () => {
        counts.broad = await previewOf(client, info.vhost, info.broad);
      },
    });
    const base = t.listing as number;
    console.log(
      `  the queue listing and its live columns, streamed at once (${counts.listed.toLocaleString()} queues)`.padEnd(
        54,
      ),
      `${base.toFixed(0).padStart(7)} ms`,
    );
    for (const [label, ms, c, calls] of [
      [`preview delete ${info.narrow}`, t.narrow, counts.narrow, t.narrowCalls],
      ['preview create bench-cap ^svc7\\. max-length 10', t.create, counts.create, t.createCalls],
    ] as const) {
      console.log(
        row(
          `${label} (${c.objects} objects change, ${c.live} with live numbers)`,
          ms as number,
          base,
          `; over the listing without statistics (${(t.floor as number).toFixed(0)} ms): ${((ms as number) / (t.floor as number)).toFixed(2)} (goal <= 1.5); over the calls it makes (the listing and the found queues' live columns, ${(calls as number).toFixed(0)} ms): ${((ms as number) / (calls as number)).toFixed(2)}`,
        ),
      );
    }
    console.log(
      row(
        `preview delete ${info.broad} (${counts.broad.toLocaleString()} objects change)`,
        broad.broad as number,
        broad.listing as number,
        `   (broad delete; over the listings of its own rounds, ${(broad.listing as number).toFixed(0)} ms); over the listing without statistics (${(broad.floor as number).toFixed(0)} ms): ${((broad.broad as number) / (broad.floor as number)).toFixed(2)} (goal <= 1.5)`,
      ),
    );
    console.log(
      `  peak RSS of this process over the listings, the delete and the create: ${mb(peakNarrow)} (before the runs: ${mb(before)})   goal <= 300 MB`,
    );
    console.log(`  peak RSS with the broad delete too: ${mb(peakRss)}`);
  } finally {
    await client.close();
    child.kill('SIGTERM');
  }
}

// --- 2. the real broker ---------------------------------------------------------------------

async function parallel<T>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** The cheapest listing that carries every queue's policy: no stats, two columns. */
async function cheapestListing(url: string, vhost: string): Promise<number> {
  const pool = new Pool(new URL(url).origin, { connections: 1 });
  try {
    const res = await pool.request({
      path: `/api/queues/${encodeURIComponent(vhost)}?disable_stats=true&columns=name,policy`,
      method: 'GET',
      headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
      headersTimeout: 120_000,
      bodyTimeout: 120_000,
    });
    let n = 0;
    for await (const _ of parseJsonArrayStream(res.body)) n++;
    return n;
  } finally {
    await pool.close();
  }
}

async function benchReal(): Promise<void> {
  const client = new LabClient({
    url: BROKER,
    user: USER,
    password: PASSWORD,
    connections: 32,
    timeouts: { headersMs: 120_000 },
  });
  let version: string;
  try {
    version = (await client.overview()).versionText;
  } catch (e) {
    console.log(`\n2. Real broker at ${BROKER}: not reachable (${(e as Error).message}); skipped.`);
    await client.close();
    return;
  }
  const vhost = `rmq-bench-preview-${randomBytes(3).toString('hex')}`;
  const services = 200;
  console.log(
    `\n2. Real broker ${BROKER} (RabbitMQ ${version}): ${REAL_QUEUES.toLocaleString()} queues in vhost ${vhost}`,
  );
  try {
    await client.putVhost(vhost);
    for (let s = 0; s < services; s++) {
      await client.putPolicy('user', {
        vhost,
        name: `b${s}`,
        pattern: `^b${s}\\.`,
        applyTo: 'queues',
        priority: 10,
        definition: { 'dead-letter-exchange': `dlx.${s}` },
      });
    }
    await client.putPolicy('user', {
      vhost,
      name: 'orders',
      pattern: '^b\\d+\\.orders\\.',
      applyTo: 'queues',
      priority: 20,
      definition: { 'message-ttl': 60_000 },
    });
    await client.putPolicy('operator', {
      vhost,
      name: 'ceiling',
      pattern: '.*',
      applyTo: 'queues',
      priority: 0,
      definition: { 'max-length': 1_000_000 },
    });
    const names = Array.from(
      { length: REAL_QUEUES },
      (_, i) => `b${i % services}.${i % 3 === 0 ? 'orders' : 'work'}.${i}`,
    );
    const started = performance.now();
    let done = 0;
    await parallel(names, 48, async (name) => {
      await client.putQueue(vhost, name, { kind: 'classic' });
      if (++done % 5000 === 0) process.stdout.write(`  … ${done.toLocaleString()} queues\n`);
    });
    console.log(`  created in ${((performance.now() - started) / 1000).toFixed(1)} s (48 parallel PUTs)`);
    const counts = { narrow: 0, broad: 0, cheapest: 0, ours: 0 };
    const t = await rounds(Math.max(3, Math.min(RUNS, 5)), {
      cheapest: async () => {
        counts.cheapest = await cheapestListing(BROKER, vhost);
      },
      ours: async () => {
        counts.ours = await listingAlone(client, vhost);
      },
      narrow: async () => {
        counts.narrow = await previewOf(client, vhost, 'b7');
      },
      broad: async () => {
        counts.broad = await previewOf(client, vhost, 'orders');
      },
    });
    const base = t.cheapest as number;
    console.log(
      `  cheapest listing with every queue's policy (${counts.cheapest.toLocaleString()} queues)`.padEnd(54),
      `${base.toFixed(0).padStart(7)} ms`,
    );
    console.log(row("the preview's listing alone (+ type, arguments)", t.ours as number, base));
    console.log(
      row(`preview delete b7 (${counts.narrow} objects change)`, t.narrow as number, base, '   goal <= 1.5'),
    );
    console.log(
      row(
        `preview delete orders (${counts.broad.toLocaleString()} objects change)`,
        t.broad as number,
        base,
        '   (broad delete, for scale)',
      ),
    );
  } finally {
    const started = performance.now();
    const gone = await removeVhost(client, vhost);
    console.log(
      gone
        ? `  vhost removed in ${((performance.now() - started) / 1000).toFixed(1)} s`
        : `  vhost ${vhost} still there after ${((performance.now() - started) / 1000).toFixed(0)} s: remove it by hand`,
    );
    await client.close();
  }
}

/**
 * Deleting 30,000 queues can outlast the broker's HTTP idle timeout ("other side closed", seen
 * on 4.0.5) while the deletion goes on: ask again until the vhost is gone, for up to a minute.
 */
async function removeVhost(client: LabClient, vhost: string): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await client.deleteVhost(vhost);
      if (!(await client.listVhosts()).includes(vhost)) return true;
    } catch {
      // still deleting, or the connection was closed under us: look again
    }
    await new Promise((r) => setTimeout(r, 3000));
  }
  return false;
}

/**
 * The same vhost with the catch-all written `^(?!amq\.)`: the objects a delete moves fall back to
 * a pattern only the backtracking engine (a worker thread) reads.
 */
async function benchLookaround(): Promise<void> {
  console.log(
    `\n1b. The same, the catch-all a negative lookahead ^(?!amq\\.) (read off the main thread) (starting it…)`,
  );
  const { child, info } = await startFake(true);
  const client = new LabClient({ url: info.url, user: USER, password: PASSWORD });
  try {
    const counts = { narrow: 0, listed: 0 };
    // The floor: the queue listing without statistics alone (what matching and resolution need).
    const floor = async () => {
      for await (const _q of client.streamQueues(info.vhost, { stats: false }));
    };
    const t = await rounds(RUNS, {
      floor,
      listing: async () => {
        counts.listed = await liveListingsAlone(client, info.vhost);
      },
      narrow: async () => {
        counts.narrow = await previewOf(client, info.vhost, info.narrow);
      },
    });
    const base = t.listing as number;
    console.log(
      `  the queue listing and its live columns, streamed at once (${counts.listed.toLocaleString()} queues)`.padEnd(
        54,
      ),
      `${base.toFixed(0).padStart(7)} ms`,
    );
    console.log(
      row(
        `preview delete ${info.narrow}, lookaround fallback (${counts.narrow} objects change)`,
        t.narrow as number,
        base,
        '   goal <= 1.5',
      ),
    );
  } finally {
    await client.close();
    child.kill('SIGTERM');
  }
}

if (!flag('real-only')) {
  await benchFake();
  await benchLookaround();
}
if (!flag('skip-real')) await benchReal();
clearInterval(sampler);
