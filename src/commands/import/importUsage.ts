/** Here rather than beside the parser: help lists it without loading the planner. */
export const IMPORT_USAGE =
  'import FILE --reason TEXT [--vhost V] [--vhost-map FROM=TO …] [--env E] [--prune] [--thread LINK] [--for DURATION] [--break-glass]';
