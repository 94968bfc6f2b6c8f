import type { Redis } from 'ioredis';

/**
 * The one rule for what must survive a Redis failover (the audit trail's records, the change
 * requests' state): a write is acknowledged only once Redis says a replica has it, where the
 * primary has replicas (`WAIT 1`). A primary without replicas (or one that will not say, INFO
 * refused) acknowledges as it writes. A write that no replica confirmed in time is in the
 * primary but not acknowledged: the caller reports it as not done, and doing it again is safe
 * (each writer's scripts are idempotent or check the state they expect).
 */

/** How long a write waits for a replica to have it before it is refused (NotReplicatedError). */
export const REPLICATION_WAIT_MS = 5_000;

/** A write Redis took but no replica confirmed in time: not acknowledged. */
export class NotReplicatedError extends Error {
  override readonly name = 'NotReplicatedError';
  readonly code = 'not-replicated';
}

/** `connected_slaves` of `INFO replication`; undefined when Redis would not say. */
function connectedReplicas(info: string): number | undefined {
  const m = /^connected_slaves:(\d+)/m.exec(info);
  return m ? Number(m[1]) : undefined;
}

/**
 * Resolves once one replica has every write made so far on this connection, when the primary
 * has any; `what` names the write in the error.
 */
export async function replicated(redis: Redis, what: string, waitMs = REPLICATION_WAIT_MS): Promise<void> {
  const info = await redis.info('replication').catch(() => '');
  if (!connectedReplicas(info)) return;
  const acked = await redis.wait(1, waitMs);
  if (acked < 1) {
    throw new NotReplicatedError(`${what} is in Redis but no replica confirmed it within ${waitMs} ms`);
  }
}
