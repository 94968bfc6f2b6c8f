/** The entrance of plan/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { changesOf } from './changes.ts';
export {
  changeJson,
  fieldsOf,
  MAX_VERIFY,
  type Plan,
  type PlanBroker,
  type PlanObject,
  type PlanOptions,
  type PlanResult,
  type PlanStep,
  planChanges,
  planFile,
  type TransitionalLoss,
  type VerifyObject,
  type VhostPlan,
} from './plan.ts';
