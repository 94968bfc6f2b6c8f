/** Here rather than beside its parser: help lists it without loading the command (bench/cli). */
export const REQUESTS_USAGE = 'requests [--env E]';
