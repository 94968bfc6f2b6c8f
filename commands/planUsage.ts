/** Here rather than beside the plan's parser: help lists it without loading the planner. */
export const PLAN_USAGE = 'plan FILE [--vhost V] [--env E] [--prune] [--detailed-exitcode]';
