/** Change requests: states and transitions, the Redis store, who may approve, the apply job (the audit trail is src/audit/). */

export type { AnnounceWrite } from './apply/applyJob.ts';
export * from './filing/approvers.ts';
export * from './broker.ts';
export * from './errors.ts';
export { whyIdentityCannotWrite } from './filing/identity.ts';
export { APPLY_QUEUE, type ApplyQueueOptions, createApplyQueue } from './apply/queue.ts';
export { RequestStore } from './store.ts';
export * from './types.ts';
export {
  APPLY_CLIENT_SETTINGS,
  type ApplyWorkerDeps,
  jobConnection,
  startApplyWorker,
} from './apply/worker.ts';
export { createWorkflow, snapshotOf, type WorkflowDeps } from './filing/workflow.ts';
