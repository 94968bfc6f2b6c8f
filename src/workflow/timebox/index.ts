/** The entrance of workflow/timebox/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { type TimeBoxDeadlineDeps, type TimeBoxNotifier, timeBoxHandlers } from './timeboxDeadline.ts';
export {
  createTimeBoxQueue,
  startTimeBoxWorker,
  type TimeBoxQueue,
  type TimeBoxWorker,
} from './timeboxQueue.ts';
