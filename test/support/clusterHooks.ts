import { afterAll, beforeAll } from 'vitest';
import { CLUSTER_WAIT_MS, lockCluster } from './clusterLock.ts';

/**
 * In a `describe` block that runs on each broker: the cluster to this block alone from its first
 * test to its last, when it runs on the cluster (a fault suite stops nodes, which this block would
 * read as its own failure). Nothing otherwise.
 */
export function aloneOnCluster(isCluster: boolean): void {
  if (!isCluster) return;
  let release: (() => void) | undefined;
  beforeAll(async () => {
    release = await lockCluster();
  }, CLUSTER_WAIT_MS + 10_000);
  afterAll(() => release?.());
}
