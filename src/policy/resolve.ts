import { type NameView, nameView, PatternCache } from './pattern/pattern.ts';
import { type KindOrUnknown, PolicyIndex, whyUnreadable } from './policyIndex.ts';
import { type BrokerVersion, MAX_NAME_BYTES, type Policy, utf8Length } from './types.ts';

/**
 * The broker's resolution rule, for one object and one layer (user or operator):
 * among the vhost's policies whose scope fits the object's kind, whose pattern finds the name,
 * and whose definition holds no key the object's type vetoes, the highest priority wins alone.
 * Equal top priorities leave the winner undefined (the broker takes the first in its store's
 * hash order, which nobody can predict from the outside).
 */

/** The policies of one vhost, both layers indexed, ready to explain objects. */
export interface PolicySet {
  readonly version: BrokerVersion;
  readonly user: PolicyIndex;
  readonly operator: PolicyIndex;
}

export function buildPolicySet(
  user: readonly Policy[],
  operator: readonly Policy[],
  version: BrokerVersion,
  cache: PatternCache = new PatternCache(),
): PolicySet {
  return {
    version,
    user: new PolicyIndex(user, version, cache),
    operator: new PolicyIndex(operator, version, cache),
  };
}

/**
 * Why a match does not govern the object. `key-rules-unknown`: it outranks the policy in force,
 * on a queue of a type whose vetoes this bot does not know; the type probably refuses one of its
 * keys, but which is not known, so none is named.
 */
export type NotApplied = 'lower-priority' | 'same-priority' | 'refused-key' | 'key-rules-unknown';

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
  /** False for a queue of a type this bot does not know: no veto is known, so none is applied. */
  readonly keyRulesKnown: boolean;
}

function resolveLayer(
  index: PolicyIndex,
  kind: KindOrUnknown,
  name: string,
  view: NameView,
): LayerResolution {
  const matches: Match[] = [];
  const unreadable: Unreadable[] = [];
  for (const e of index.reachingFor(kind, name)) {
    const hit = e.pattern.match(view);
    if (hit === 'undecidable') unreadable.push({ policy: e.policy, why: whyUnreadable(e) });
    else if (hit) matches.push({ policy: e.policy, refused: index.refused(e, kind) });
  }
  const applicable = matches.filter((m) => m.refused.length === 0);
  const top = applicable[0]?.policy.priority;
  const candidates =
    top === undefined ? [] : applicable.filter((m) => m.policy.priority === top).map((m) => m.policy);
  const decided = !unreadable.some(
    (u) =>
      index.applicable(u.policy.name, kind) !== undefined && (top === undefined || u.policy.priority >= top),
  );
  return { matches, candidates, unreadable, decided, keyRulesKnown: kind !== null };
}

export interface Resolution {
  readonly name: string;
  readonly kind: KindOrUnknown;
  readonly user: LayerResolution;
  readonly operator: LayerResolution;
}

/** policy/ imports nothing of ours outside it, so not a CodedError; `codeOf()` reads its code all the same. */
export class NameTooLongError extends Error {
  readonly code = 'name-too-long' as const;
  constructor(readonly bytes: number) {
    super(
      `A name of ${bytes} bytes is longer than the ${MAX_NAME_BYTES} bytes RabbitMQ allows, so it names nothing.`,
    );
  }
}

/**
 * Both layers for one object. A name over 255 bytes is refused before any pattern runs. `kind`
 * null: a queue of a type this bot does not know.
 */
export function resolve(
  set: PolicySet,
  name: string,
  kind: KindOrUnknown,
  view: NameView = nameView(name),
): Resolution {
  const bytes = utf8Length(name);
  if (bytes > MAX_NAME_BYTES) throw new NameTooLongError(bytes);
  return {
    name,
    kind,
    user: resolveLayer(set.user, kind, name, view),
    operator: resolveLayer(set.operator, kind, name, view),
  };
}

export interface AlsoMatched {
  readonly policy: Policy;
  readonly reason: NotApplied;
  readonly keys?: readonly string[];
}

/**
 * Why every other match does not govern the object, given the policy in force (the broker's
 * report, or the engine's first candidate when the broker did not report), read or not: a
 * reported policy whose pattern this bot cannot read still has its priority, and what matches
 * below it lost to it, as the broker says.
 * `outranks` lists applicable matches with a higher priority than the one in force: the engine
 * expected one of them to win, so the report and the engine disagree. On a queue type whose key
 * rules are unknown they may simply be vetoed: then they are `key-rules-unknown`, not outranks.
 */
export function explainLosers(
  layer: LayerResolution,
  inForce: Policy | null,
): { alsoMatched: AlsoMatched[]; outranks: Policy[] } {
  const alsoMatched: AlsoMatched[] = [];
  const outranks: Policy[] = [];
  for (const m of layer.matches) {
    if (m.policy.name === inForce?.name) continue;
    if (m.refused.length > 0) {
      alsoMatched.push({ policy: m.policy, reason: 'refused-key', keys: m.refused });
    } else if (inForce === null || m.policy.priority > inForce.priority) {
      if (layer.keyRulesKnown) outranks.push(m.policy);
      else alsoMatched.push({ policy: m.policy, reason: 'key-rules-unknown' });
    } else {
      alsoMatched.push({
        policy: m.policy,
        reason: m.policy.priority === inForce.priority ? 'same-priority' : 'lower-priority',
      });
    }
  }
  return { alsoMatched, outranks };
}
