/** The entrance of plan/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { changesOf } from './changes.ts';
export type { ParameterLister } from './parameters.ts';
export {
  type Component,
  changeJson,
  componentOf,
  componentWords,
  fieldsOf,
  isParameterStep,
  MAX_VERIFY,
  type ParameterChangeJson,
  type ParameterStep,
  type Plan,
  type PlanBroker,
  type PlanObject,
  type PlanOptions,
  type PlanResult,
  type PlanStep,
  type PolicyPlanBroker,
  type PolicyStep,
  planChanges,
  planFile,
  type TransitionalLoss,
  type VerifyObject,
  type VhostPlan,
} from './plan.ts';
export { type LinkJson, linkJson, linkWords, type StepLinks, stepLinksWords } from './stepLinks.ts';
