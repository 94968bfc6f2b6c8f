/**
 * bench/path: what `rmq path NAME` costs beyond the management calls it needs.
 *
 *   npm run bench:path
 *
 * On the bench's double (bench/fakeManagement.ts, in a child process): a vhost of 10,000 queues,
 * 2,000 exchanges and 500 channels. `path` on a queue bound through two exchanges against the
 * bare calls it needs, each sent over one new keep-alive pool and parsed as JSON, in the order
 * `path` must wait for them (the object, policies and overview together; then its bindings, the
 * channels, the vhost's counters, the nodes, and the dead-letter target its policy names with
 * that target's bindings, together; then the exchanges on the way and the one above). Medians of
 * ROUNDS runs, each with a new client, as a CLI run. Goal <= 1.5.
 */
import { Pool } from 'undici';
import { path } from '../src/commands/path/index.ts';
import { ManagementClient } from '../src/rabbit/client.ts';
import { startFakeManagement } from './fakeManagement.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const { child, info } = await startFakeManagement<{ url: string; vhost: string }>([
  '--queues',
  '10000',
  '--exchanges',
  '2000',
  '--channels',
  '500',
]);
try {
  const v = encodeURIComponent(info.vhost);
  const queue = 'svc2.orders.2';
  const q = encodeURIComponent(queue);
  const bare = async () => {
    const pool = new Pool(info.url, { connections: 6 });
    const get = async (p: string) => (await pool.request({ method: 'GET', path: p })).body.json();
    const t0 = performance.now();
    await Promise.all([
      get('/api/overview'),
      get(`/api/queues/${v}/${q}`),
      get(`/api/policies/${v}`),
      get(`/api/operator-policies/${v}`),
    ]);
    await Promise.all([
      get(`/api/queues/${v}/${q}/bindings`),
      get(`/api/vhosts/${v}/channels?columns=confirm,message_stats.publish`),
      get(`/api/vhosts/${v}?columns=message_stats`),
      get('/api/nodes?columns=name'),
      get(`/api/exchanges/${v}/dlx.2`),
      get(`/api/exchanges/${v}/dlx.2/bindings/source`),
    ]);
    await Promise.all([
      get(`/api/exchanges/${v}/svc2.in`),
      get(`/api/exchanges/${v}/svc2.in/bindings/destination`),
    ]);
    await Promise.all([
      get(`/api/exchanges/${v}/svc2.top`),
      get(`/api/exchanges/${v}/svc2.top/bindings/destination`),
    ]);
    const ms = performance.now() - t0;
    await pool.close();
    return ms;
  };
  const asked = async () => {
    const client = new ManagementClient({ url: info.url, user: 'guest', password: 'guest' });
    const t0 = performance.now();
    const r = await path({ name: queue, vhost: info.vhost }, client, { env: 'bench' });
    const ms = performance.now() - t0;
    if (r.answer !== 'answered' || r.in.exchanges.length !== 3 || r.queue.deadLetter.routes !== true)
      throw new Error(`path did not read the chain: ${JSON.stringify({ in: r.in, queue: r.queue })}`);
    await client.close();
    return ms;
  };
  for (let i = 0; i < 5; i++) {
    await bare();
    await asked();
  }
  const b: number[] = [];
  const p: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    b.push(await bare());
    p.push(await asked());
  }
  const w: number[] = [];
  const { which } = await import('../src/commands/which/index.ts');
  for (let i = 0; i < ROUNDS; i++) {
    const client = new ManagementClient({ url: info.url, user: 'guest', password: 'guest' });
    const t0 = performance.now();
    await which({ name: queue, vhost: info.vhost }, client);
    w.push(performance.now() - t0);
    await client.close();
  }
  const ratio = median(p) / median(b);
  console.log('path NAME, 10,000 queues, 2,000 exchanges, 500 channels (the double):');
  console.log(`  bare calls: median ${median(b).toFixed(1)} ms`);
  console.log(`  path:       median ${median(p).toFixed(1)} ms`);
  console.log(`  ratio ${ratio.toFixed(2)} (goal <= 1.5)`);
  console.log(
    `  \`which\` alone (the policy in force explained among 1,000 policies; path asks only what governs): median ${median(w).toFixed(1)} ms`,
  );
} finally {
  child.kill();
}
