import type { ObjectOutcome, PolicyChange } from './simulate/simulate.ts';
import type { Definition, Policy, PolicyLayer } from './types.ts';

/**
 * A change, field by field, for the audit: the pattern, apply-to, priority and each key of the
 * definition, with its value before and after. An edit shows exactly what it replaced, a delete
 * everything the policy was, a create everything it is. Pure.
 */

export interface FieldChange<T> {
  readonly before: T | null;
  readonly after: T | null;
}

export interface PolicyDiff {
  readonly action: PolicyChange['action'];
  readonly layer: PolicyLayer;
  readonly vhost: string;
  readonly name: string;
  /** Only the fields whose value differs (all of them for a create or a delete). */
  readonly fields: {
    readonly pattern?: FieldChange<string>;
    readonly applyTo?: FieldChange<string>;
    readonly priority?: FieldChange<number>;
  };
  /** Keys of the definition that differ: added (before null), removed (after null), changed. */
  readonly definition: Record<string, FieldChange<unknown>>;
  /** Nothing differs: an edit that writes the same policy again. */
  readonly unchanged: boolean;
}

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

export function policyDiff(change: PolicyChange): PolicyDiff {
  const { before, after } = change;
  const subject = (after ?? before) as Policy;
  const fields: {
    pattern?: FieldChange<string>;
    applyTo?: FieldChange<string>;
    priority?: FieldChange<number>;
  } = {};
  const field = <K extends 'pattern' | 'applyTo' | 'priority'>(k: K) => {
    const b = before ? before[k] : null;
    const a = after ? after[k] : null;
    if (!same(a, b)) (fields as Record<string, FieldChange<unknown>>)[k] = { before: b, after: a };
  };
  field('pattern');
  field('applyTo');
  field('priority');
  const definition = diffDefinition(before?.definition, after?.definition);
  return {
    action: change.action,
    layer: change.layer,
    vhost: subject?.vhost ?? '',
    name: subject?.name ?? '',
    fields,
    definition,
    unchanged: Object.keys(fields).length === 0 && Object.keys(definition).length === 0,
  };
}

export function diffDefinition(
  before: Definition | undefined,
  after: Definition | undefined,
): Record<string, FieldChange<unknown>> {
  const out: Record<string, FieldChange<unknown>> = {};
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const k of [...keys].sort()) {
    const b = before && k in before ? before[k] : null;
    const a = after && k in after ? after[k] : null;
    if (!same(a, b)) out[k] = { before: b, after: a };
  }
  return out;
}

/** One object in the audit log: which policy governed it before and after, and what it lost, gained, saw change. */
export interface AuditObjectLine {
  readonly name: string;
  readonly kind: string;
  readonly before: string | null;
  readonly after: string | null;
  /** The tie left after the change, when the broker's choice is undefined. */
  readonly candidates?: string[];
  readonly lost: Record<string, unknown>;
  readonly gained: Record<string, unknown>;
  readonly changed: Record<string, { before: unknown; after: unknown }>;
}

export function auditObject(o: ObjectOutcome): AuditObjectLine {
  return {
    name: o.name,
    kind: o.kind,
    before: o.before.policy,
    after: o.after.policy,
    ...(o.after.candidates ? { candidates: [...o.after.candidates] } : {}),
    lost: o.lost,
    gained: o.gained,
    changed: Object.fromEntries(
      Object.entries(o.changed).map(([k, [before, after]]) => [k, { before, after }]),
    ),
  };
}

/** The objects a change moves (governing policy, a tie, or any effective value), for the audit. */
export function auditObjects(objects: readonly ObjectOutcome[]): AuditObjectLine[] {
  return objects
    .filter(
      (o) =>
        o.before.policy !== o.after.policy ||
        o.after.candidates !== undefined ||
        Object.keys(o.lost).length + Object.keys(o.gained).length + Object.keys(o.changed).length > 0,
    )
    .map(auditObject);
}
