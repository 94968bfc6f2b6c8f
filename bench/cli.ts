/**
 * bench/cli: `rmq which orders.audit` as a whole process, beside what it is measured against, in
 * one run:
 *
 *   npm run bench:cli [-- --rounds 30] [--broker http://127.0.0.1:15672]
 *
 * Each round runs, in an order that rotates, from start to exit, on a lab vhost of its own
 * (removed after), each with only PATH, HOME and RMQ_* in its environment:
 *
 * - `node bin/rmq.js which orders.audit --vhost V`: the compiled CLI, built first from the
 *   current sources;
 * - the floor, `node bench/cliFloor.cjs orders.audit V`: a bare Node process that makes the same
 *   five calls `which` makes (the overview, the queue, the vhost's policies and operator policies
 *   at once, then the exchange it dead-letters to) with Node's own HTTP client and nothing of
 *   ours. Goal: rmq <= 1.25x it;
 * - `rabbitmqadmin -V V list policies`, the broker's own Python CLI: the system's (`rabbitmqadmin`
 *   on PATH, as the Debian package installs it), else the one the broker under test serves, under
 *   the system interpreter `/usr/bin/python3` (not whatever `python3` PATH finds first: pyenv's
 *   shim adds ~90 ms to every Python start, bench/HISTORY.md). Goal: rmq <= 1.0x it;
 * - `node -e 0`: Node's own start, for scale.
 *
 * The rounds start once the broker's statistics report the queue's policy, so every `which` (and
 * the floor) makes the same five calls. Prints the load average before and after, medians and
 * p90s, and the ratios of the medians (and, pair by pair within a round, their medians), each
 * with its goal, met or not.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { build } from '../scripts/build.ts';
import { setUpLab } from '../scripts/lab.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { waitFor } from '../test/support/broker.ts';
import { benchOptions, quantile } from './options.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
/** The system's interpreter: a version manager's shim in PATH would time the shim, not Python. */
const PYTHON = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
const GOAL_OVER_FLOOR = 1.25;
const GOAL_OVER_ADMIN = 1.0;
const { count: rounds, brokerUrl, user, password } = benchOptions('rounds', 30);
/** rabbitmqadmin is ~45 KB; anything far larger is not it. */
const ADMIN_MAX_BYTES = 1_000_000;

const RMQ = 'rmq which';
const FLOOR = 'floor (the same 5 calls, bare)';
const ADMIN = 'rabbitmqadmin list policies';
const NODE = 'node -e 0';

/** The system's rabbitmqadmin (on PATH), else the broker's own, downloaded into `dir`. */
async function rabbitmqadmin(dir: string): Promise<{ path: string; from: string }> {
  const found = spawnSync('sh', ['-c', 'command -v rabbitmqadmin'], { encoding: 'utf8' }).stdout.trim();
  if (found) return { path: found, from: 'the system' };
  const res = await request(`${brokerUrl}/cli/rabbitmqadmin`, {
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200 || text.length > ADMIN_MAX_BYTES || !text.startsWith('#!')) {
    throw new Error(
      `${brokerUrl}/cli/rabbitmqadmin: HTTP ${res.statusCode}, ${text.length} bytes: not the script`,
    );
  }
  const path = join(dir, 'rabbitmqadmin');
  writeFileSync(path, text);
  return { path, from: 'the broker' };
}

/** Milliseconds from spawn to exit; a non-zero exit fails the bench (a fast wrong answer is no figure). */
function timed(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const deadline = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code, signal) => {
      clearTimeout(deadline);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (code === 0) resolve(ms);
      else reject(new Error(`${command} ${args.join(' ')}: exit ${code ?? signal}: ${err.trim()}`));
    });
  });
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const started = Date.now();
  await build();
  const buildMs = Date.now() - started;
  const admin = new LabClient({ url: brokerUrl, user, password });
  const vhost = `rmq-bench-cli-${process.pid}`;
  const cwd = mkdtempSync(join(tmpdir(), 'rmq-bench-cli-'));
  try {
    await setUpLab(admin, vhost);
    // Until the statistics report the queue's policy, `which` reads it from the queue's record
    // (a sixth call) and the floor cannot name the exchange: both would be timed on another path.
    await waitFor(async () => (await admin.getQueue(vhost, 'orders.audit'))?.policy, {
      deadlineMs: 60_000,
      intervalMs: 500,
      what: "the broker's statistics to report orders.audit's policy",
    });
    const adminScript = await rabbitmqadmin(cwd);
    const url = new URL(brokerUrl);
    // Nothing else of this shell's: NODE_EXTRA_CA_CERTS alone adds ~35 ms of CPU to every Node
    // start (the CA file read and parsed), NODE_OPTIONS whatever it loads (bench/HISTORY.md).
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: cwd,
      RMQ_URL: brokerUrl,
      RMQ_USER: user,
      RMQ_PASSWORD: password,
    };
    const node = (args: readonly string[]) => () => timed(process.execPath, args, cwd, env);
    const runs: Record<string, () => Promise<number>> = {
      [RMQ]: node([join(root, 'bin/rmq.js'), 'which', 'orders.audit', '--vhost', vhost]),
      [FLOOR]: node([join(root, 'bench/cliFloor.cjs'), 'orders.audit', vhost]),
      [ADMIN]: () =>
        timed(
          PYTHON,
          [
            adminScript.path,
            ...['-H', url.hostname, '-P', url.port || '80', '-u', user, '-p', password],
            ...['-V', vhost, 'list', 'policies'],
          ],
          cwd,
          env,
        ),
      [NODE]: node(['-e', '0']),
    };
    const names = Object.keys(runs);
    const ms: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const loadBefore = load();
    for (const run of Object.values(runs)) await run(); // warm the page cache and the broker once
    for (let i = 0; i < rounds; i++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length] as string;
        ms[name]?.push(await (runs[name] as () => Promise<number>)());
      }
    }
    const median = (name: string) => quantile(ms[name] ?? [], 0.5);
    // Within a round the two ran seconds apart, under the same load: the ratio of each pair.
    const paired = (a: string, b: string) =>
      quantile(
        (ms[a] ?? []).map((x, i) => x / (ms[b]?.[i] ?? Number.NaN)),
        0.5,
      );
    const ratio = (over: string, goal?: number) => {
      const r = median(RMQ) / median(over);
      const verdict =
        goal === undefined ? '' : `  goal <= ${goal.toFixed(2)}: ${r <= goal ? 'met' : 'NOT met'}`;
      return `  ratio ${RMQ} / ${over}: ${r.toFixed(2)} (pair by pair ${paired(RMQ, over).toFixed(2)})${verdict}\n`;
    };
    process.stdout.write(
      `bench/cli: ${rounds} rounds against ${brokerUrl} (build ${buildMs} ms; load average ${loadBefore} before, ${load()} after; rabbitmqadmin from ${adminScript.from}, under ${PYTHON})\n`,
    );
    for (const name of names) {
      process.stdout.write(
        `  ${name.padEnd(32)} median ${median(name).toFixed(0).padStart(4)} ms   p90 ${quantile(
          ms[name] ?? [],
          0.9,
        )
          .toFixed(0)
          .padStart(4)} ms\n`,
      );
    }
    process.stdout.write(
      ratio(FLOOR, GOAL_OVER_FLOOR) +
        ratio(ADMIN, GOAL_OVER_ADMIN) +
        ratio(NODE) +
        `  floor / ${NODE}: ${(median(FLOOR) / median(NODE)).toFixed(2)}\n`,
    );
  } finally {
    await admin.deleteVhost(vhost);
    await admin.close();
    rmSync(cwd, { recursive: true, force: true });
  }
}

await main();
