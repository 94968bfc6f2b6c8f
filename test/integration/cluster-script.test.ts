/**
 * `scripts/cluster` itself: run again while the cluster is up it leaves every node alone (exit 0,
 * the version printed, no node restarted: their uptimes go on); a node number outside 1-3 is
 * refused (exit 2); where it cannot be built (here: not root, and no chroot at BROKER43_DIR) it
 * exits 3, the code on which `.ci/run` skips the cluster's suites, loudly.
 */
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokerCredentials } from '../support/broker.ts';
import { CLUSTER, reachable } from '../support/brokers.ts';
import { CLUSTER_WAIT_MS, lockCluster } from '../support/clusterLock.ts';

const up = (await reachable(CLUSTER)) || CLUSTER.required;
if (!up)
  console.warn(`\n*** SKIPPED: the cluster at ${CLUSTER.url} is not running (run ${CLUSTER.script}). ***\n`);

/**
 * The script's exit code and output; never throws on a non-zero exit. `asNobody`: a copy of the
 * script and its library, in a directory anyone may read (the checkout may not be), run as nobody.
 */
async function script(args: string[], options: { env?: NodeJS.ProcessEnv; asNobody?: boolean } = {}) {
  const dir = options.asNobody ? mkdtempSync(join(tmpdir(), 'rmq-cluster-script-')) : undefined;
  let file = 'scripts/cluster';
  let argv = args;
  if (dir) {
    cpSync('scripts/cluster', join(dir, 'cluster'));
    cpSync('scripts/lib/chroot-broker.bash', join(dir, 'lib', 'chroot-broker.bash'));
    for (const d of [dir, join(dir, 'lib')]) chmodSync(d, 0o755);
    file = 'setpriv';
    argv = ['--reuid=65534', '--regid=65534', '--clear-groups', join(dir, 'cluster'), ...args];
  }
  try {
    return await new Promise<{ code: number; out: string; err: string }>((resolve) => {
      execFile(file, argv, { timeout: 240_000, env: { ...process.env, ...options.env } }, (e, out, err) => {
        const code = e ? (typeof e.code === 'number' ? e.code : 1) : 0;
        resolve({ code, out, err });
      });
    });
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

async function uptimes(): Promise<Map<string, number>> {
  const { user, password } = brokerCredentials();
  const res = await fetch(`${CLUSTER.url}/api/nodes?columns=name,uptime`, {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
  });
  const nodes = (await res.json()) as { name: string; uptime?: number }[];
  return new Map(nodes.map((n) => [n.name, n.uptime ?? -1]));
}

describe('scripts/cluster', () => {
  it.skipIf(!up)(
    'run again while the cluster is up: exit 0, every node left running as it was',
    async () => {
      // Alone on the cluster: run while a fault suite has a node stopped, it would start that node.
      const release = await lockCluster();
      try {
        const before = await uptimes();
        expect(before.size).toBe(3);
        const r = await script([]);
        expect(r.code, r.err).toBe(0);
        expect(r.out).toMatch(/^4\.3\./);
        const after = await uptimes();
        for (const [name, ms] of before) expect(after.get(name)).toBeGreaterThanOrEqual(ms);
        expect((await script(['status'])).code).toBe(0);
      } finally {
        release();
      }
    },
    CLUSTER_WAIT_MS + 60_000,
  );

  it('a node number outside 1-3 is refused with exit 2', async () => {
    for (const args of [['stop', '4'], ['start', '0'], ['kill']]) {
      const r = await script(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain('usage');
    }
  });

  it.skipIf(process.getuid?.() !== 0)(
    'where it cannot be built (not root, no chroot): exit 3, nothing started',
    async () => {
      const r = await script([], { asNobody: true, env: { BROKER43_DIR: '/nonexistent/i27/root' } });
      expect(r.code, r.err).toBe(3);
      expect(r.err).toContain('cannot build');
    },
  );
});
