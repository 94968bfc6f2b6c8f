import type { Redis } from 'ioredis';
import { applyWorkerDeps, workflowDeps } from '../src/bot/botChangeRequests.ts';
import { createLogger } from '../src/log/log.ts';
import type { LabClient } from '../src/rabbit/lab.ts';
import { createApplyQueue } from '../src/workflow/apply/queue.ts';
import { startApplyWorker } from '../src/workflow/apply/worker.ts';
import { createApproverDirectory } from '../src/workflow/filing/approvers.ts';
import { createWorkflow } from '../src/workflow/filing/workflow.ts';
import type { Notifier } from '../src/workflow/types.ts';

/**
 * The workflow as the bot builds it, for the apply benches (bench/apply.ts, bench/applySet.ts):
 * one environment `bench` on `client`, approver U0B, the real BullMQ queue and worker on Redis
 * under `keyPrefix`, nothing logged; `notifier` is the bench's own (it waits on it).
 */
export async function benchWorkflow(o: {
  readonly client: LabClient;
  readonly redis: Redis;
  readonly redisUrl: string;
  readonly keyPrefix: string;
  readonly notifier: Notifier;
}) {
  const { client, redis, redisUrl, keyPrefix, notifier } = o;
  const log = createLogger('silent');
  const queue = createApplyQueue({ redisUrl, keyPrefix });
  const worker = await startApplyWorker({
    redisUrl,
    keyPrefix,
    ...applyWorkerDeps(redisUrl, keyPrefix, log),
    brokerFor: () => client,
    environments: [{ name: 'bench', mode: 'normal' }],
    notifier,
    log,
  });
  const workflow = createWorkflow({
    ...workflowDeps(redis, keyPrefix, log),
    environments: [{ name: 'bench', mode: 'normal', approvalsChannel: 'C0', requestTtlMs: 3_600_000 }],
    brokerFor: () => client,
    approvers: createApproverDirectory({
      approvers: new Map([['bench', ['U0B']]]),
      listMembers: async () => [],
    }),
    queue,
    notifier,
    log,
  });
  return {
    workflow,
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
