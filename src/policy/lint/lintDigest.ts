import { SEVERITIES, type Severity } from './lintTypes.ts';

/**
 * The lint digest's comparison with the last one: which findings are new, which were fixed, and
 * the rest. A finding is the same finding from one digest to the next when its identity is: its
 * kind, its policy (and layer) and the names of the objects it concerns, whatever its sentence or
 * live numbers say now. Pure.
 */

/** What a digest keeps of a finding, to say next time that it was fixed. */
export interface DigestFinding {
  readonly kind: string;
  readonly severity: Severity;
  readonly policy: string;
  readonly operator: boolean;
  readonly objects: readonly string[];
  readonly why: string;
}

/** The stable identity of a finding: kind, layer, policy and the object names (in any order). */
export function findingId(f: Pick<DigestFinding, 'kind' | 'policy' | 'operator' | 'objects'>): string {
  return JSON.stringify([f.kind, f.operator, f.policy, [...f.objects].sort()]);
}

export interface DigestDiff<F extends DigestFinding> {
  /** Not in the last digest, the most severe first (all of them when there was no last digest). */
  readonly new: readonly F[];
  /** In the last digest, not there now. */
  readonly fixed: readonly DigestFinding[];
  /** There last time and now. */
  readonly rest: readonly F[];
}

/** `previous` undefined: no digest before this one. Order within each part is kept, worst first. */
export function diffFindings<F extends DigestFinding>(
  previous: readonly DigestFinding[] | undefined,
  current: readonly F[],
): DigestDiff<F> {
  const bySeverity = <T extends DigestFinding>(list: readonly T[]) =>
    [...list].sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
  if (previous === undefined) return { new: bySeverity(current), fixed: [], rest: [] };
  const before = new Set(previous.map(findingId));
  const now = new Set(current.map(findingId));
  return {
    new: bySeverity(current.filter((f) => !before.has(findingId(f)))),
    fixed: bySeverity(previous.filter((f) => !now.has(findingId(f)))),
    rest: bySeverity(current.filter((f) => before.has(findingId(f)))),
  };
}
