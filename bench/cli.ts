/**
 * bench/cli: `rmq which orders.audit` as a whole process, beside the two floors it is measured
 * against, in one run:
 *
 *   npm run bench:cli [-- --rounds 30] [--broker http://127.0.0.1:15672]
 *
 * Each round runs, in an order that rotates, `node bin/rmq.js which orders.audit --vhost V` (the
 * compiled CLI, built first from the current sources), `rabbitmqadmin -V V list policies` (the
 * broker's own Python CLI, downloaded from the broker under test) under the system interpreter
 * `/usr/bin/python3` (not whatever `python3` PATH finds first: pyenv's shim adds ~90 ms to every
 * Python start, which made rabbitmqadmin look slower than it is, issue 28), and `node -e 0` (Node's
 * own start, the floor of any Node CLI), each from start to exit, on a lab vhost of its own
 * (removed after). Prints medians and p90s and both ratios of the medians: rmq over rabbitmqadmin,
 * and rmq over `node -e 0`, whose goal is <= 1.5. Printed whether or not it is met.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { build } from '../scripts/build.ts';
import { setUpLab } from '../scripts/lab.ts';
import { LabClient } from '../src/rabbit/lab.ts';
import { benchOptions, quantile } from './options.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
/** The system's interpreter: a version manager's shim in PATH would time the shim, not Python. */
const PYTHON = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
const GOAL_OVER_NODE = 1.5;
const { count: rounds, brokerUrl, user, password } = benchOptions('rounds', 30);
/** rabbitmqadmin is ~45 KB; anything far larger is not it. */
const ADMIN_MAX_BYTES = 1_000_000;

async function downloadRabbitmqadmin(dir: string): Promise<string> {
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
  return path;
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

async function main(): Promise<void> {
  const started = Date.now();
  await build();
  const buildMs = Date.now() - started;
  const admin = new LabClient({ url: brokerUrl, user, password });
  const vhost = `rmq-bench-cli-${process.pid}`;
  const cwd = mkdtempSync(join(tmpdir(), 'rmq-bench-cli-'));
  try {
    await setUpLab(admin, vhost);
    const adminScript = await downloadRabbitmqadmin(cwd);
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
    const runs: Record<string, { run: () => Promise<number>; ms: number[] }> = {
      'rmq which (compiled)': {
        run: () =>
          timed(
            process.execPath,
            [join(root, 'bin/rmq.js'), 'which', 'orders.audit', '--vhost', vhost],
            cwd,
            env,
          ),
        ms: [],
      },
      'rabbitmqadmin list policies': {
        run: () =>
          timed(
            PYTHON,
            [
              adminScript,
              '-H',
              url.hostname,
              '-P',
              url.port || '80',
              '-u',
              user,
              '-p',
              password,
              '-V',
              vhost,
              'list',
              'policies',
            ],
            cwd,
            env,
          ),
        ms: [],
      },
      'node -e 0': { run: () => timed(process.execPath, ['-e', '0'], cwd, env), ms: [] },
    };
    const order = Object.values(runs);
    for (const r of order) await r.run(); // warm the page cache and the broker once
    for (let i = 0; i < rounds; i++) {
      for (let j = 0; j < order.length; j++) {
        const r = order[(i + j) % order.length]!;
        r.ms.push(await r.run());
      }
    }
    process.stdout.write(`bench/cli: ${rounds} rounds against ${brokerUrl} (build ${buildMs} ms)\n`);
    for (const [name, r] of Object.entries(runs)) {
      process.stdout.write(
        `  ${name.padEnd(30)} median ${quantile(r.ms, 0.5).toFixed(0).padStart(4)} ms   p90 ${quantile(r.ms, 0.9).toFixed(0).padStart(4)} ms\n`,
      );
    }
    const rmq = quantile(runs['rmq which (compiled)']!.ms, 0.5);
    const py = quantile(runs['rabbitmqadmin list policies']!.ms, 0.5);
    const node = quantile(runs['node -e 0']!.ms, 0.5);
    process.stdout.write(
      `  ratio rmq which / rabbitmqadmin (${PYTHON}, medians): ${(rmq / py).toFixed(2)}\n` +
        `  ratio rmq which / node -e 0 (medians): ${(rmq / node).toFixed(2)}  goal <= ${GOAL_OVER_NODE.toFixed(2)}: ${rmq / node <= GOAL_OVER_NODE ? 'met' : 'NOT met'}\n`,
    );
  } finally {
    await admin.deleteVhost(vhost);
    await admin.close();
    rmSync(cwd, { recursive: true, force: true });
  }
}

await main();
