import { cannotGovernRule } from './cannotGovern.ts';
import { expiresIdleRule } from './expiresIdle.ts';
import { type FindingOf, type LintRule, type LintWords, SEVERITIES, type Severity } from './lintTypes.ts';
import { missingTargetRule } from './missingTarget.ts';
import { operatorNeverStricterRule } from './operatorNeverStricter.ts';
import { shadowedRule } from './shadowed.ts';
import { tieRule } from './tie.ts';
import { unanchoredRule } from './unanchored.ts';
import { upgradeRule } from './upgrade.ts';

/**
 * The kinds of finding, in the order findings of one severity are listed. A new kind is a module
 * beside these (its facts, tallies, severity and sentence: lintTypes.ts `LintRule`) and a line
 * here, in `LINT_RULES`.
 */
export const LINT_RULES = [
  tieRule,
  missingTargetRule,
  expiresIdleRule,
  cannotGovernRule,
  unanchoredRule,
  shadowedRule,
  operatorNeverStricterRule,
  upgradeRule,
] as const;

/** What each kind says beyond the objects it concerns (each kind's module has its own). */
export type LintFact = (typeof LINT_RULES)[number] extends infer R
  ? R extends LintRule<infer F>
    ? F
    : never
  : never;

export type Finding = FindingOf<LintFact>;
export type LintKind = Finding['kind'];

export const LINT_KINDS: readonly LintKind[] = LINT_RULES.map((r) => r.kind);

export const SEVERITY_OF = Object.fromEntries(LINT_RULES.map((r) => [r.kind, r.severity])) as {
  readonly [K in LintKind]: Severity;
};

const RULE_OF = new Map<string, LintRule<LintFact>>(LINT_RULES.map((r) => [r.kind, r as LintRule<LintFact>]));

/** One sentence per finding, in its kind's words; `words` writes what is not ours as the surface does. */
export function findingWhy(f: Finding, words: LintWords): string {
  return (RULE_OF.get(f.kind) as LintRule<LintFact>).why(f, words);
}

/** The most severe first, then by kind (as LINT_RULES lists them), the most objects first, by policy. */
export function bySeverity(a: Finding, b: Finding): number {
  return (
    SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity) ||
    LINT_KINDS.indexOf(a.kind) - LINT_KINDS.indexOf(b.kind) ||
    b.objectCount - a.objectCount ||
    (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0) ||
    Number(a.operator) - Number(b.operator)
  );
}
