/**
 * One suite at a time on the cluster (`scripts/cluster`): the fault suite stops nodes, which a
 * differential running beside it (vitest runs files in parallel) would read as its own failure.
 * A lock file made with O_EXCL holds the writing process's pid; a lock whose process is gone is
 * taken over. No vitest here: a benchmark takes the lock too (bench/cluster.ts); the suites' hook
 * is clusterHooks.ts.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '../../src/core/retry.ts';

const LOCK = join(tmpdir(), 'rmq-cluster-suites.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * How long a suite waits for the cluster: every suite on it in turn takes about 4 minutes in CI
 * (2026-12-02), so a generous ceiling; a hook that takes the lock allows this and its own work.
 */
export const CLUSTER_WAIT_MS = 900_000;

/** Takes the cluster for this process; waits up to `deadlineMs` for another suite to finish. */
export async function lockCluster(deadlineMs = CLUSTER_WAIT_MS): Promise<() => void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(LOCK, { force: true });
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') throw e;
      const holder = Number(readFileSync(LOCK, 'utf8').trim() || 'NaN');
      // A holder that is gone (or a file being written this instant, empty: retried).
      if (Number.isInteger(holder) && !alive(holder)) rmSync(LOCK, { force: true });
      if (Date.now() > until)
        throw new Error(`the cluster is still taken by process ${holder} after ${deadlineMs} ms`);
      await sleep(500);
    }
  }
}
