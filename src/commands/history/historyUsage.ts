/** Here rather than beside its parser: help lists it without loading the command (bench/cli). */
export const HISTORY_USAGE = 'history [POLICY or NAME] [--vhost V] [--env E] [--verify [--against FILE]]';
