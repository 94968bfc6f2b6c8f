/**
 * bench/cluster: `rmq which` against the three-node cluster (`scripts/cluster`) with node 1 (the
 * first URL) stopped, over the same question with every node up. Goal <= 1.5: the dead node costs
 * one refused connect per process, then the client asks the node that answered (remembered).
 *
 *   npm run bench:cluster [-- --rounds 40]
 *
 * The lab is declared through node 2, so its queues stay up (and the question the same) while
 * node 1 is stopped. Each round is one `runCli(['which', 'orders.audit', …])`, as a terminal run: a new client, so
 * each pays the failed connect once; the rounds of both sets alternate in blocks around one stop
 * and one start of node 1 (the stop and the rejoin take ~6 s and ~17 s, not timed). Also printed:
 * how many attempts a question made, and, for one client asked twice, that the second question
 * goes straight to node 2. Node 1 is started again at the end, whatever happens. It holds the
 * cluster's lock (test/support/clusterLock.ts) throughout: no cluster suite runs beside it.
 */
import { execFileSync } from 'node:child_process';
import { setUpLab } from '../scripts/lab.ts';
import { ManagementClient } from '../src/rabbit/client.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import type { CallInfo } from '../src/rabbit/transport.ts';
import { runCli } from '../src/terminal/cli.ts';
import { lockCluster } from '../test/support/clusterLock.ts';

const URLS = ['http://127.0.0.1:15691', 'http://127.0.0.1:15692', 'http://127.0.0.1:15693'];
const credentials = { user: process.env.RMQ_USER ?? 'guest', password: process.env.RMQ_PASSWORD ?? 'guest' };
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg('rounds', 40);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const cluster = (...args: string[]) =>
  execFileSync('scripts/cluster', args, { stdio: ['ignore', 'ignore', 'inherit'] });

// The lab declared through node 2: its queues live there (a classic queue on the node that
// declared it, a quorum queue's leader too), so with node 1 stopped the question is the same one.
const admin = new LabClient({ url: [URLS[1], URLS[2], URLS[0]] as string[], ...credentials });
const vhost = `rmq-bench-cluster-${process.pid}`;
const env = { RMQ_URL: URLS.join(','), RMQ_USER: credentials.user, RMQ_PASSWORD: credentials.password };
const quiet = { out: () => {}, err: () => {} };

async function rounds(n: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const code = await runCli(['which', 'orders.audit', '--vhost', vhost, '--json'], env, quiet);
    ms.push(performance.now() - t0);
    if (code !== 0) throw new Error(`rmq which exited ${code}`);
  }
  return ms;
}

/** One client asked twice: the attempts of each question, by node. */
async function remembered(): Promise<string[][]> {
  const calls: CallInfo[] = [];
  const client = new ManagementClient({ url: URLS, ...credentials, onCall: (c) => calls.push(c) });
  const asked: string[][] = [];
  try {
    for (let i = 0; i < 2; i++) {
      calls.length = 0;
      await client.forQuestion(15_000).listPolicies(vhost);
      asked.push(calls.map((c) => `${c.node.slice(-5)}${c.error ? ` ${c.error}` : ''}`));
    }
  } finally {
    await client.close(0);
  }
  return asked;
}

const up: number[] = [];
const down: number[] = [];
// It stops node 1: the cluster's suites (test/support/clusterLock.ts) must not run meanwhile.
const release = await lockCluster(900_000);
try {
  await setUpLab(admin, vhost);
  await rounds(5); // warm: the modules, the first connections
  const block = Math.max(1, Math.floor(ROUNDS / 2));
  up.push(...(await rounds(block)));
  cluster('stop', '1');
  down.push(...(await rounds(ROUNDS)));
  const asked = await remembered();
  cluster('start', '1');
  up.push(...(await rounds(ROUNDS - block)));
  const ratio = median(down) / median(up);
  console.log(
    `rmq which orders.audit on the cluster, ${ROUNDS} rounds each (load average ${(await import('node:os')).loadavg()[0]?.toFixed(1)}):`,
  );
  console.log(`  every node up:   median ${median(up).toFixed(1)} ms`);
  console.log(`  node 1 stopped:  median ${median(down).toFixed(1)} ms`);
  console.log(`  ratio ${ratio.toFixed(2)} (goal <= 1.5) ${ratio <= 1.5 ? 'met' : 'NOT met'}`);
  console.log(
    `  one client asked twice with node 1 stopped: ${asked.map((a) => `[${a.join(', ')}]`).join(' then ')}`,
  );
} finally {
  try {
    cluster('start', '1');
  } catch {
    console.error('bench/cluster: could not start node 1 again: run scripts/cluster start 1');
  }
  await admin.deleteVhost(vhost);
  await admin.close();
  release();
}
