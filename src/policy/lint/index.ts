/** The entrance of policy/lint/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { findingWhy } from './kinds.ts';
export { atLeastAsSevere, type Finding, Linter, type LintObject, SEVERITIES, type Severity } from './lint.ts';
export { type DigestDiff, type DigestFinding, diffFindings, findingId } from './lintDigest.ts';
export { LISTED_OBJECTS, type LintContext, type LintWords } from './lintTypes.ts';
