/** The entrance of commands/lint/: what the other folders of src/ use of it (inside, modules import each other directly). */

export type { DurabilitySource } from './durability.ts';
export {
  asApplied,
  deprecatedSaid,
  LINT_FAIL_EXIT,
  type LintAnswer,
  type LintBroker,
  type LintedFinding,
  type LintInput,
  type LintOptions,
  type LintResult,
  lint,
  lintCounts,
  lintExitCode,
  lintOfVhosts,
  parseLint,
  whyOf,
} from './lint.ts';
