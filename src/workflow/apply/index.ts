/** The entrance of workflow/apply/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { bullPrefix, createApplyQueue } from './queue.ts';
export { APPLY_CLIENT_SETTINGS, type ApplyWorkerDeps, jobConnection, startApplyWorker } from './worker.ts';
export { boundedClose } from './workerClose.ts';
