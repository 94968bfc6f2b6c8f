/** Here rather than beside its parser: help lists it without loading the command (bench/cli). */
export const LINT_USAGE =
  'lint [FILE] [--vhost V] [--vhost-map FROM=TO …] [--env E] [--fail-on error|warning]';
