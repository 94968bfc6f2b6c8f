/**
 * bench/which: what `rmq which` costs beyond the management calls it cannot avoid.
 *
 *   npm run bench:which
 *
 * 1. The ratio of `which` to the bare calls it needs — overview, the object, policies, operator
 *    policies, in parallel over one new keep-alive pool — on the lab scenario with 200 extra
 *    policies. Goal <= 1.2. Twice: with a new client and nothing kept (as a CLI run), and with
 *    the pattern cache the bot keeps between questions (a new client each time all the same).
 * 2. The engine explaining one object among 10,000 policies (compile once, then resolve, explain
 *    the losers, merge the operator layer). Goal < 5 ms. Cold compile is printed too.
 * 3. "Did you mean" for a name that does not exist, in a vhost of 100,000 queues (bench/
 *    fakeManagement.ts, in a child process): the close names found by folding one streamed
 *    listing of names per type, over the client streaming the same two listings and doing
 *    nothing with them (goal <= 1.5: the fold is cheap), and over a bare fetch and JSON.parse of
 *    them (the streaming client's own cost shows there). Exactly two requests, whatever the size.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { setUpLab } from '../scripts/lab.ts';
import { closeObjects } from '../src/commands/suggest.ts';
import { which } from '../src/commands/which/which.ts';
import { effectiveDefinition } from '../src/policy/effective.ts';
import { PatternCache } from '../src/policy/pattern/pattern.ts';
import { buildPolicySet, explainLosers, resolve } from '../src/policy/resolve.ts';
import type { Policy } from '../src/policy/types.ts';
import { LabClient } from '../src/rabbit/lab.ts';

const url = process.env.RMQ_URL ?? 'http://127.0.0.1:15672';
const user = process.env.RMQ_USER ?? 'guest';
const password = process.env.RMQ_PASSWORD ?? 'guest';
const ROUNDS = Number(process.env.ROUNDS ?? 200);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function brokerRatio(): Promise<void> {
  const admin = new LabClient({ url, user, password });
  const vhost = `rmq-bench-which-${process.pid}`;
  await setUpLab(admin, vhost);
  for (let i = 0; i < 200; i++) {
    await admin.putPolicy('user', {
      vhost,
      name: `bench-${i}`,
      pattern: `^svc${i}\\.`,
      applyTo: 'queues',
      priority: i % 7,
      definition: { 'max-length': i + 1 },
    });
  }
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const v = encodeURIComponent(vhost);
  const bare = async () => {
    const pool = new Pool(url, { connections: 4 });
    const get = async (path: string) => {
      const res = await pool.request({ method: 'GET', path, headers: { authorization: auth } });
      return res.body.json();
    };
    const t0 = performance.now();
    await Promise.all([
      get('/api/overview'),
      get(`/api/queues/${v}/orders.audit`),
      get(`/api/policies/${v}`),
      get(`/api/operator-policies/${v}`),
    ]);
    const ms = performance.now() - t0;
    await pool.close();
    return ms;
  };
  const kept = new PatternCache();
  const ours = async (patterns?: PatternCache) => {
    const client = new LabClient({ url, user, password });
    const t0 = performance.now();
    await which({ name: 'orders.audit', vhost }, client, patterns ? { patterns } : {});
    const ms = performance.now() - t0;
    await client.close();
    return ms;
  };
  try {
    for (let i = 0; i < 5; i++) {
      await bare();
      await ours();
      await ours(kept);
    }
    const b: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Interleaved so that drift in the broker's load hits all three alike.
      b.push(await bare());
      cold.push(await ours());
      warm.push(await ours(kept));
    }
    const ratio = (xs: number[]) => (median(xs) / median(b)).toFixed(2);
    console.log(`which vs its bare management calls (${ROUNDS} rounds, 206 policies, median):`);
    console.log(`  bare calls ${median(b).toFixed(2)} ms`);
    console.log(
      `  which, nothing kept (a CLI run)      ${median(cold).toFixed(2)} ms, ratio ${ratio(cold)} (goal <= 1.2)`,
    );
    console.log(
      `  which, pattern cache kept (the bot)  ${median(warm).toFixed(2)} ms, ratio ${ratio(warm)} (goal <= 1.2)`,
    );
  } finally {
    await admin.deleteVhost(vhost);
    await admin.close();
  }
}

function engine(): void {
  const policies: Policy[] = [];
  for (let i = 0; i < 10_000; i++) {
    const shape = i % 5;
    const pattern =
      shape === 0
        ? `^svc${i}\\.`
        : shape === 1
          ? `svc${i}`
          : shape === 2
            ? `^team${i % 97}\\.(orders|billing)\\.`
            : shape === 3
              ? `^q${i}$`
              : `(?i)^app${i}-[a-z]+`;
    policies.push({
      vhost: '/',
      name: `p${i}`,
      pattern,
      applyTo: 'queues',
      priority: i % 11,
      definition: { 'max-length': i, 'message-ttl': 1000 },
    });
  }
  const operator: Policy[] = [
    {
      vhost: '/',
      name: 'ceiling',
      pattern: '.*',
      applyTo: 'queues',
      priority: 0,
      definition: { 'message-ttl': 500 },
    },
  ];
  const t0 = performance.now();
  const set = buildPolicySet(policies, operator, { major: 3, minor: 10, patch: 8 });
  const compileMs = performance.now() - t0;
  const names = Array.from({ length: 200 }, (_, i) => `team${i % 97}.orders.svc${i * 37}.work`);
  const times: number[] = [];
  for (const name of names) {
    const t = performance.now();
    const r = resolve(set, name, 'classic');
    const [winner] = r.user.candidates;
    explainLosers(r.user, winner ?? null);
    effectiveDefinition(winner?.definition, r.operator.candidates[0]?.definition, set.version);
    times.push(performance.now() - t);
  }
  console.log('engine, one object among 10,000 policies:');
  console.log(`  compile 10,000 patterns once: ${compileMs.toFixed(1)} ms`);
  console.log(
    `  explain one object: median ${median(times).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms (goal < 5 ms)`,
  );
}

async function didYouMean(): Promise<void> {
  const queues = Number(process.env.QUEUES ?? 100_000);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/fakeManagement.ts', '--queues', String(queues)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  try {
    const [line] = (await once(
      createInterface({ input: child.stdout as NodeJS.ReadableStream }),
      'line',
    )) as [string];
    const info = JSON.parse(line) as { url: string; vhost: string };
    const v = encodeURIComponent(info.vhost);
    const bare = async () => {
      const pool = new Pool(info.url, { connections: 2 });
      const t0 = performance.now();
      await Promise.all(
        ['queues', 'exchanges'].map(async (what) => {
          const res = await pool.request({
            method: 'GET',
            path: `/api/${what}/${v}?disable_stats=true&columns=name`,
          });
          return res.body.json();
        }),
      );
      const ms = performance.now() - t0;
      await pool.close();
      return ms;
    };
    // The client's own streaming of the same two listings, names dropped: what the fold adds to.
    const streamed = async () => {
      const client = new LabClient({ url: info.url, user, password });
      const t0 = performance.now();
      await Promise.all(
        (['queues', 'exchanges'] as const).map(async (what) => {
          for await (const _ of client.streamNames(what, info.vhost));
        }),
      );
      const ms = performance.now() - t0;
      await client.close();
      return ms;
    };
    let requests = 0;
    let found: string[] = [];
    const ours = async () => {
      const client = new LabClient({ url: info.url, user, password, onCall: () => void requests++ });
      requests = 0;
      const t0 = performance.now();
      // svc7.audit.1007 exists; one transposition away.
      found = (await closeObjects(client, info.vhost, 'svc7.audti.1007')).map((s) => s.name);
      const ms = performance.now() - t0;
      await client.close();
      return ms;
    };
    for (let i = 0; i < 3; i++) {
      await bare();
      await streamed();
      await ours();
    }
    const b: number[] = [];
    const st: number[] = [];
    const o: number[] = [];
    const rounds = Number(process.env.DYM_ROUNDS ?? 30);
    for (let i = 0; i < rounds; i++) {
      b.push(await bare());
      st.push(await streamed());
      o.push(await ours());
    }
    console.log(
      `did you mean, a missing name among ${queues.toLocaleString()} queues (${rounds} rounds, median):`,
    );
    console.log(`  bare: fetch and parse the two name listings ${median(b).toFixed(1)} ms`);
    console.log(
      `  the client streaming the same two listings, nothing done with them ${median(st).toFixed(1)} ms`,
    );
    console.log(
      `  closeObjects: stream and fold them ${median(o).toFixed(1)} ms: over the client's streaming ${(median(o) / median(st)).toFixed(2)} (goal <= 1.5), over the bare fetch ${(median(o) / median(b)).toFixed(2)}; ${requests} requests; found ${JSON.stringify(found)}`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}

engine();
await didYouMean();
if (!process.argv.includes('--skip-real')) await brokerRatio();
