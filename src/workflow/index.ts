/** The entrance of workflow/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  type ChangeSet,
  isParameterSetStep,
  plannedSet,
  recreatedPolicy,
  type SetStep,
  type StepState,
  setRecordId,
  setVhosts,
  stepAction,
  stepComponent,
  stepStates,
} from './changeSet.ts';
export { type Freeze, type FreezeOutcome, FreezeSchema, FreezeStore } from './deciding/freeze.ts';
export {
  isWorkflowError,
  orStoreUnavailable,
  type RefusalOf,
  refusalSentence,
  storeUnavailable,
  WorkflowError,
} from './errors.ts';
export {
  approvalsNeeded,
  approvalsOf,
  awaitsReview,
  hasApproved,
  MAX_FREEZE_MS,
  MAX_REASON,
} from './rules.ts';
export {
  type ApproveOutcome,
  newRequestId,
  REVERT_CLAIM_AFTER_DEADLINE_MS,
  RequestStore,
  type RequestStoreOptions,
  type TransitionInput,
  type TransitionOutcome,
} from './store.ts';
export { MAX_TIMEBOX_MS, MIN_TIMEBOX_MS, parseTimeBox } from './timebox/timebox.ts';
export {
  type ApplyWorker,
  type ChangeRequest,
  type DecisionKind,
  type Filed,
  type FiledSet,
  type Notifier,
  type Origin,
  REVIEW_OUTCOMES,
  type RecreateInput,
  type RequestState,
  type ReviewInput,
  type ReviewOutcome,
  type ReviewResult,
  type Workflow,
} from './types.ts';
