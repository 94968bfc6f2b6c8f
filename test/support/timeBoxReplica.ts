import type { Logger } from 'pino';
import type { LabClient } from '../../src/rabbit/lab.ts';
import { type TimeBoxNotifier, timeBoxHandlers } from '../../src/workflow/timebox/timeboxDeadline.ts';
import {
  createTimeBoxQueue,
  startTimeBoxWorker,
  type TimeBoxWorker,
} from '../../src/workflow/timebox/timeboxQueue.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';
import { REDIS_URL, type WorkflowFixture } from './workflow.ts';

/**
 * One bot replica's background half, as src/bot/botChangeRequests.ts wires it: the apply worker
 * (scheduling a time box's deadline once its change is recorded) and the time-box worker, on the
 * fixture's Redis and `client`. `workflow`: the fixture's workflow options (one replica's settings).
 */
export async function timeBoxReplica(
  fx: WorkflowFixture,
  client: LabClient,
  notifier: TimeBoxNotifier,
  log: Logger,
  workflow: Parameters<WorkflowFixture['workflow']>[0] = {},
): Promise<{
  wf: ReturnType<WorkflowFixture['workflow']>;
  worker: TimeBoxWorker;
  stop(): Promise<void>;
}> {
  const wf = fx.workflow(workflow);
  const timebox = createTimeBoxQueue({ redisUrl: REDIS_URL, keyPrefix: fx.keyPrefix });
  const apply = await fx.worker(client, {
    onRecorded: async (r, record) => {
      if (r.timeBoxMs !== undefined) await timebox.schedule(r.id, new Date(record.at), r.timeBoxMs);
    },
  });
  const worker = startTimeBoxWorker({
    redisUrl: REDIS_URL,
    keyPrefix: fx.keyPrefix,
    log,
    handlers: timeBoxDeadline(fx, wf, client, notifier, log),
  });
  return {
    wf,
    worker,
    async stop() {
      await Promise.all([apply.close(), worker.close(), timebox.close()]);
    },
  };
}

/** What the time-box worker runs at a deadline (and before it), for `wf` on `client`, as src/bot/botChangeRequests.ts wires it. */
export function timeBoxDeadline(
  fx: WorkflowFixture,
  wf: ReturnType<WorkflowFixture['workflow']>,
  client: LabClient,
  notifier: TimeBoxNotifier,
  log: Logger,
) {
  return timeBoxHandlers({
    workflow: wf,
    redis: fx.redis,
    keyPrefix: fx.keyPrefix,
    revertRequest: async (auditId, user, origin, reason) =>
      (await wf.revertRequestFor(auditId, user, origin, reason)).request,
    brokerFor: () => client,
    notifier,
    log,
  });
}

/** A time-box notifier that keeps each revert asked for (and says nothing else). */
export function askingNotifier(): TimeBoxNotifier & {
  readonly asked: { request: ChangeRequest; revert: ChangeRequest; why: string }[];
} {
  const asked: { request: ChangeRequest; revert: ChangeRequest; why: string }[] = [];
  return {
    asked,
    async timeBoxWarning() {},
    async timeBoxAsk(request, revert, why) {
      asked.push({ request, revert, why });
    },
    async timeBoxNothing() {},
  };
}
