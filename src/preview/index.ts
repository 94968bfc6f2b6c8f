/** The entrance of preview/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  defaultDeliveryLimit,
  type ImpactSummary,
  type LiveNow,
  objectJson,
  type PreviewObject,
  withImpact,
  worldOf,
} from './impact.ts';
export {
  type PolicyFields,
  PREVIEW_ACTIONS,
  type PreviewAction,
  type PreviewAnswer,
  type PreviewBroker,
  type PreviewChange,
  type PreviewInput,
  type PreviewNotAsked,
  type PreviewNotAskedWhy,
  type PreviewOptions,
  type PreviewRefused,
  type PreviewResult,
  preview,
} from './preview.ts';
export {
  nothingAfterWords,
  type OutcomeGroup,
  type PreviewSummary,
  RISK_WORDS,
  SUMMARY_NAMES,
} from './summary.ts';
