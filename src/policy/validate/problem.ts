/**
 * A problem found with a proposed policy: a refusal (nothing is filed) or a warning (said beside
 * the preview), with a stable code and the field or key it is about. validate.ts checks names,
 * layers and patterns, validateDefinition.ts the definition's keys; both say what they find in
 * this one shape.
 */

export type ProblemCode =
  | 'name-empty'
  | 'name-too-long'
  | 'name-taken'
  | 'no-such-policy'
  | 'wrong-layer'
  | 'nothing-to-change'
  | 'unset-missing-key'
  | 'definition-not-object'
  | 'definition-empty'
  | 'unknown-key'
  | 'bad-value'
  | 'number-inexact'
  | 'negative-limit'
  | 'apply-to-unsupported'
  | 'priority-not-number'
  | 'mirroring-removed'
  | 'mirroring-deprecated'
  | 'mirroring-incomplete'
  | 'operator-key'
  | 'federation-conflict'
  | 'federation-plugin'
  | 'plugin-disabled'
  | 'pattern-invalid'
  | 'pattern-too-long'
  | 'pattern-unreadable'
  | 'pattern-unanchored'
  | 'vetoed-everywhere'
  | 'deprecated-key'
  | 'same-name-other-layer';

export interface Problem {
  readonly code: ProblemCode;
  readonly message: string;
  readonly field?: 'name' | 'pattern' | 'apply-to' | 'priority' | 'definition';
  readonly key?: string;
}
