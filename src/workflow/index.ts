/** Change requests: states and transitions, the Redis store, who may approve, the apply job (the audit trail is src/audit/). */

export type { AnnounceWrite } from './applyJob.ts';
export * from './approvers.ts';
export * from './broker.ts';
export * from './errors.ts';
export { whyIdentityCannotWrite } from './identity.ts';
export { APPLY_QUEUE, type ApplyQueueOptions, createApplyQueue } from './queue.ts';
export { RequestStore } from './store.ts';
export * from './types.ts';
export {
  APPLY_CLIENT_SETTINGS,
  type ApplyWorkerDeps,
  jobConnection,
  startApplyWorker,
} from './worker.ts';
export { createWorkflow, snapshotOf, type WorkflowDeps } from './workflow.ts';
