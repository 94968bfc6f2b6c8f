import { mergeOperatorValue, refusedKeys, scopeFits, vetoedKeys } from './keys.ts';
import { type CompiledPattern, matchView, type NameView, nameView, PatternCache } from './pattern.ts';
import {
  type BrokerVersion,
  type Definition,
  MAX_NAME_BYTES,
  type ObjectKind,
  type Policy,
  utf8Length,
} from './types.ts';

/**
 * The broker's resolution rule, for one object and one layer (user or operator):
 * among the vhost's policies whose scope fits the object's kind, whose pattern finds the name,
 * and whose definition holds no key the object's type vetoes, the highest priority wins alone.
 * Equal top priorities leave the winner undefined (the broker takes the first in its store's
 * hash order, which nobody can predict from the outside).
 */

export interface CompiledPolicy extends Policy {
  readonly compiled: CompiledPattern;
}

/** The policies of one vhost, compiled and sorted highest priority first, ready to explain objects. */
export interface PolicySet {
  readonly version: BrokerVersion;
  readonly user: readonly CompiledPolicy[];
  readonly operator: readonly CompiledPolicy[];
  /** @internal memo of `reaching` */
  readonly byKind: Map<string, readonly CompiledPolicy[]>;
}

export function buildPolicySet(
  user: readonly Policy[],
  operator: readonly Policy[],
  version: BrokerVersion,
  cache: PatternCache = new PatternCache(),
): PolicySet {
  const compile = (list: readonly Policy[]) =>
    list
      .map((p) => ({ ...p, compiled: cache.get(p.pattern) }))
      // Code-unit order, not localeCompare: ICU collation is slow, and any stable order will do.
      .sort((a, b) => b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { version, user: compile(user), operator: compile(operator), byKind: new Map() };
}

/** The policies whose scope reaches this kind, computed once per kind. */
function reaching(set: PolicySet, layer: 'user' | 'operator', kind: ObjectKind): readonly CompiledPolicy[] {
  const key = `${layer}:${kind}`;
  let list = set.byKind.get(key);
  if (!list) {
    list = set[layer].filter((p) => scopeFits(p.applyTo, kind));
    set.byKind.set(key, list);
  }
  return list;
}

export type NotApplied = 'lower-priority' | 'same-priority' | 'refused-key';

export interface Match {
  readonly policy: Policy;
  /** Keys the object's type vetoes; non-empty means the policy can never govern this object. */
  readonly refused: readonly string[];
}

export interface Unreadable {
  readonly policy: Policy;
  readonly why: string;
}

export interface LayerResolution {
  /** Every policy whose scope fits and whose pattern finds the name, highest priority first. */
  readonly matches: readonly Match[];
  /** The applicable matches sharing the top priority. One: the winner. More: a tie. None: nothing. */
  readonly candidates: readonly Policy[];
  /** Policies whose scope fits but whose pattern this bot cannot read for this name. */
  readonly unreadable: readonly Unreadable[];
  /**
   * False when an unreadable policy could change the answer: its priority is at least the
   * candidates' (or there are none) and its definition would not be vetoed.
   */
  readonly decided: boolean;
}

function resolveLayer(
  policies: readonly CompiledPolicy[],
  name: NameView,
  vetoes: ReadonlySet<string>,
): LayerResolution {
  const matches: Match[] = [];
  const unreadable: Unreadable[] = [];
  for (const policy of policies) {
    const hit = matchView(policy.compiled, name);
    if (hit === 'undecidable') {
      const why =
        policy.compiled.why ?? 'the broker and this bot may read this pattern differently for this name';
      unreadable.push({ policy: strip(policy), why });
    } else if (hit) {
      matches.push({ policy: strip(policy), refused: refusedKeys(policy.definition, vetoes) });
    }
  }
  const applicable = matches.filter((m) => m.refused.length === 0);
  const top = applicable[0]?.policy.priority;
  const candidates =
    top === undefined ? [] : applicable.filter((m) => m.policy.priority === top).map((m) => m.policy);
  const decided = !unreadable.some(
    (u) =>
      refusedKeys(u.policy.definition, vetoes).length === 0 &&
      (top === undefined || u.policy.priority >= top),
  );
  return { matches, candidates, unreadable, decided };
}

function strip(p: CompiledPolicy): Policy {
  const { compiled: _compiled, ...policy } = p;
  return policy;
}

export interface EffectiveValue {
  readonly value: unknown;
  readonly from: 'policy' | 'operator-policy' | 'both';
}

/**
 * What the object gets from the two layers: the union of both definitions; a key both set is
 * merged (for limits, the stricter value). Like the broker's effective_policy_definition, this
 * includes keys the type ignores and never includes the object's own x-arguments.
 */
export function effectiveDefinition(
  user: Definition | undefined,
  operator: Definition | undefined,
  version: BrokerVersion,
): Record<string, EffectiveValue> {
  const out: Record<string, EffectiveValue> = {};
  for (const [k, value] of Object.entries(user ?? {})) out[k] = { value, from: 'policy' };
  for (const [k, value] of Object.entries(operator ?? {})) {
    const mine = out[k];
    out[k] = mine
      ? { value: mergeOperatorValue(k, mine.value, value, version), from: 'both' }
      : { value, from: 'operator-policy' };
  }
  return out;
}

export interface Resolution {
  readonly name: string;
  readonly kind: ObjectKind;
  readonly user: LayerResolution;
  readonly operator: LayerResolution;
}

export class NameTooLongError extends Error {
  readonly code = 'name-too-long';
  constructor(readonly bytes: number) {
    super(
      `A name of ${bytes} bytes is longer than the ${MAX_NAME_BYTES} bytes RabbitMQ allows, so it names nothing.`,
    );
  }
}

/** Both layers for one object. A name over 255 bytes is refused before any pattern runs. */
export function resolve(set: PolicySet, name: string, kind: ObjectKind): Resolution {
  const bytes = utf8Length(name);
  if (bytes > MAX_NAME_BYTES) throw new NameTooLongError(bytes);
  const view = nameView(name);
  const vetoes = vetoedKeys(kind, set.version);
  return {
    name,
    kind,
    user: resolveLayer(reaching(set, 'user', kind), view, vetoes),
    operator: resolveLayer(reaching(set, 'operator', kind), view, vetoes),
  };
}

export interface AlsoMatched {
  readonly policy: Policy;
  readonly reason: NotApplied;
  readonly keys?: readonly string[];
}

/**
 * Why every other match does not govern the object, given the policy in force (the broker's
 * report, or the engine's first candidate when the broker did not report).
 * `outranks` lists applicable matches with a higher priority than the one in force: the engine
 * expected one of them to win, so the report and the engine disagree.
 */
export function explainLosers(
  layer: LayerResolution,
  inForce: string | null,
): { alsoMatched: AlsoMatched[]; outranks: Policy[] } {
  const winner = layer.matches.find((m) => m.policy.name === inForce)?.policy;
  const alsoMatched: AlsoMatched[] = [];
  const outranks: Policy[] = [];
  for (const m of layer.matches) {
    if (m.policy.name === inForce) continue;
    if (m.refused.length > 0) {
      alsoMatched.push({ policy: m.policy, reason: 'refused-key', keys: m.refused });
    } else if (winner === undefined || m.policy.priority > winner.priority) {
      outranks.push(m.policy);
    } else {
      alsoMatched.push({
        policy: m.policy,
        reason: m.policy.priority === winner.priority ? 'same-priority' : 'lower-priority',
      });
    }
  }
  return { alsoMatched, outranks };
}
