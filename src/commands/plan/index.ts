/** The entrance of commands/plan/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  type PlanInput,
  parsePlan,
  planExitCode,
  planIncompleteWords,
  planJson,
  planReadOptions,
  planVhosts,
  runPlan,
} from './plan.ts';
