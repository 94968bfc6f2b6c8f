/** Here rather than beside the plan's parser: help lists it without loading the planner. */
export const PLAN_USAGE =
  'plan FILE [--vhost V] [--vhost-map FROM=TO …] [--env E] [--prune] [--detailed-exitcode]';
