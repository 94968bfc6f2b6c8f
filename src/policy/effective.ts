import { mergeOperatorValue } from './keys.ts';
import type { BrokerVersion, Definition } from './types.ts';

/**
 * What an object gets from its two policies (user and operator), and how that differs between
 * two states: the effective-value rule, and the diff a preview and an audit are made of.
 */

export interface EffectiveValue {
  readonly value: unknown;
  readonly from: 'policy' | 'operator-policy' | 'both';
}

export type Effective = Record<string, EffectiveValue>;

/**
 * The union of both definitions; a key both set is merged (for limits, the stricter value). Like
 * the broker's effective_policy_definition, this includes keys the type ignores and never
 * includes the object's own x-arguments.
 */
export function effectiveDefinition(
  user: Definition | undefined,
  operator: Definition | undefined,
  version: BrokerVersion,
): Effective {
  const out: Effective = {};
  for (const [k, value] of Object.entries(user ?? {})) out[k] = { value, from: 'policy' };
  for (const [k, value] of Object.entries(operator ?? {})) {
    const mine = out[k];
    out[k] = mine
      ? { value: mergeOperatorValue(k, mine.value, value, version), from: 'both' }
      : { value, from: 'operator-policy' };
  }
  return out;
}

export interface KeyDiff {
  readonly lost: Record<string, unknown>;
  readonly gained: Record<string, unknown>;
  readonly changed: Record<string, [unknown, unknown]>;
}

/** JSON equality for definition values (numbers, strings, the odd list). */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

export function diffEffective(before: Effective, after: Effective): KeyDiff {
  const lost: Record<string, unknown> = {};
  const gained: Record<string, unknown> = {};
  const changed: Record<string, [unknown, unknown]> = {};
  for (const [k, b] of Object.entries(before)) {
    const a = after[k];
    if (!a) lost[k] = b.value;
    else if (!sameValue(a.value, b.value)) changed[k] = [b.value, a.value];
  }
  for (const [k, a] of Object.entries(after)) if (!(k in before)) gained[k] = a.value;
  return { lost, gained, changed };
}

export const isEmptyDiff = (d: KeyDiff): boolean =>
  Object.keys(d.lost).length === 0 &&
  Object.keys(d.gained).length === 0 &&
  Object.keys(d.changed).length === 0;

/** What every diff agrees on (the candidates of a tie). */
export function commonDiff(diffs: readonly KeyDiff[]): KeyDiff {
  const [first, ...rest] = diffs;
  if (!first) return { lost: {}, gained: {}, changed: {} };
  const keep = <T>(pick: (d: KeyDiff) => Record<string, T>) =>
    Object.fromEntries(
      Object.entries(pick(first)).filter(([k, v]) =>
        rest.every((d) => k in pick(d) && sameValue(pick(d)[k], v)),
      ),
    );
  return { lost: keep((d) => d.lost), gained: keep((d) => d.gained), changed: keep((d) => d.changed) };
}
