import type { ChangeAction } from './simulate/simulate.ts';
import type { Policy, PolicyLayer } from './types.ts';

/**
 * The recorded state of a broker's policies and what differs from it. Pure.
 *
 * A policy is compared by its content (pattern, apply-to, priority, definition, keys in any
 * order): the broker publishes nothing for a PUT that writes the same policy again, and
 * neither is that a change here.
 */

export interface PolicyAddress {
  readonly layer: PolicyLayer;
  readonly vhost: string;
  readonly name: string;
}

/** One policy's change: before and after (null when absent). */
export interface Transition extends PolicyAddress {
  readonly before: Policy | null;
  readonly after: Policy | null;
}

/**
 * Whether a step creates, edits or deletes its policy: decided here once, from before and after,
 * for every caller (the watcher, the planner, the workflow's steps and requests: whole policies or
 * their fields alike). A step with neither is no change.
 */
export function actionOf(t: { readonly before: object | null; readonly after: object | null }): ChangeAction {
  if (t.before === null && t.after === null)
    throw new Error('actionOf: a step with neither before nor after');
  return t.before === null ? 'create' : t.after === null ? 'delete' : 'edit';
}

/**
 * `actionOf` for a caller that must not throw (a job that already wrote, a notice sent from a
 * catch, the same change asked for again on what is there now): a step with neither before nor
 * after reads as the delete it writes.
 */
export function writeActionOf(t: {
  readonly before: object | null;
  readonly after: object | null;
}): ChangeAction {
  return t.before === null && t.after === null ? 'delete' : actionOf(t);
}

/** The key of a policy in the recorded state. */
export function addressKey(a: PolicyAddress): string {
  return JSON.stringify([a.layer, a.vhost, a.name]);
}

/** The value with every object's keys sorted, for a canonical JSON text. */
export function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The policy's content as a string equal for equal policies; '' for none. */
export function canonical(p: Policy | null): string {
  if (p === null) return '';
  return JSON.stringify([p.pattern, p.applyTo, p.priority, sorted(p.definition)]);
}

/** The policy back from its canonical content. */
export function fromCanonical(a: Pick<PolicyAddress, 'vhost' | 'name'>, text: string): Policy | null {
  if (text === '') return null;
  const [pattern, applyTo, priority, definition] = JSON.parse(text) as [
    string,
    string,
    number,
    Record<string, unknown>,
  ];
  return { vhost: a.vhost, name: a.name, pattern, applyTo, priority, definition };
}

export function samePolicy(a: Policy | null, b: Policy | null): boolean {
  return canonical(a) === canonical(b);
}

/** Every policy of both layers, keyed as in the recorded state, content canonical. */
export function stateOf(layers: Readonly<Record<PolicyLayer, readonly Policy[]>>): Map<string, string> {
  const out = new Map<string, string>();
  for (const layer of ['user', 'operator'] as const) {
    for (const p of layers[layer]) out.set(addressKey({ layer, vhost: p.vhost, name: p.name }), canonical(p));
  }
  return out;
}

/** What differs between the recorded state and the broker's, in a stable order. */
export function differences(
  recorded: ReadonlyMap<string, string>,
  now: ReadonlyMap<string, string>,
): Transition[] {
  const out: Transition[] = [];
  const keys = new Set([...recorded.keys(), ...now.keys()]);
  for (const key of [...keys].sort()) {
    const before = recorded.get(key) ?? '';
    const after = now.get(key) ?? '';
    if (before === after) continue;
    const [layer, vhost, name] = JSON.parse(key) as [PolicyLayer, string, string];
    const a = { layer, vhost, name };
    out.push({ ...a, before: fromCanonical(a, before), after: fromCanonical(a, after) });
  }
  return out;
}
