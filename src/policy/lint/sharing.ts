import { type EffectiveValue, effectiveDefinition } from '../effective.ts';
import { type SourcedValue, withArguments } from '../provenance.ts';
import type { BrokerVersion, ObjectKind, Policy } from '../types.ts';
import type { Count, GovernedReading, LintObject, Names } from './lintTypes.ts';

/**
 * What objects alike share in the pass (lint.ts), so that per object it only applies what was
 * worked out for the first of them: the `Outcome` of objects whose lists and masks are the same
 * (reading.ts), and what a governing pair does to objects of one type with the same arguments.
 */

/**
 * What reading one object does to the pass's tallies: the same for every object of the same kind
 * whose two lists are the same and whose patterns find it alike (`maskOf`), so it is worked out
 * for the first of them and then only applied: the bench's 100,000 queues come to a few thousand
 * outcomes. What it changes once and for all (a tie found, a policy unsure, the winners over a
 * policy, the keys a type refuses) the kinds do when it is worked out.
 */
export interface Outcome {
  /** The lists of names the object joins (caught, lost, refused, tied: whatever the kinds keep). */
  readonly names: readonly Names[];
  /** The numbers it adds one to. */
  readonly counts: readonly Count[];
  /**
   * Under a tie the broker breaks as it likes: every pair it may pick (at most MAX_ALTERNATIVES).
   * What holds for each of them holds; set only when `governing` is not.
   */
  readonly alternatives?: readonly Alternative[];
  /** No policy of either layer governs it (decided). */
  readonly none?: true;
  /** The pair that governs it, decided; undefined: none, or not decided. */
  readonly governing:
    | {
        readonly kind: ObjectKind;
        readonly user: Policy | null;
        readonly operator: Policy | null;
        readonly pair: Pair;
        readonly root: ArgumentsNode;
      }
    | undefined;
}

/** One pair of policies the broker may pick for an object under a tie. */
export interface Alternative {
  readonly user: Policy | null;
  readonly operator: Policy | null;
  readonly pair: Pair;
  readonly root: ArgumentsNode;
}

/** Pairs weighed for one tied object at most: past this, nothing is claimed for it. */
export const MAX_ALTERNATIVES = 16;

/** What the policies of one pair do to objects of a kind, by arguments; the parts the arguments do not change made once. */
export interface Pair {
  /** Both layers merged. */
  effective: Record<string, EffectiveValue> | undefined;
  /** The user layer's alone (what an operator limit is weighed against). */
  own: Record<string, EffectiveValue> | undefined;
  readonly byKind: Map<ObjectKind, ArgumentsNode>;
}

export const newPair = (): Pair => ({ effective: undefined, own: undefined, byKind: new Map() });

/**
 * What the governing pair does to the objects whose arguments are the same keys, in the same
 * order, with the same values: one node per argument read, the next key and value each a Map
 * lookup (no string made per object; most objects have none or only `x-queue-type`). A value
 * that is an object or an array is looked up by its JSON, apart from the strings. `governed`: by
 * kind of finding, what it does (undefined: nothing).
 */
export interface ArgumentsNode {
  governed: readonly unknown[] | undefined;
  next: Map<string, Map<unknown, ArgumentsNode>> | undefined;
  nextJson: Map<string, Map<string, ArgumentsNode>> | undefined;
}

export const argumentsNode = (): ArgumentsNode => ({
  governed: undefined,
  next: undefined,
  nextJson: undefined,
});

/** The node of `args` under `root`, made on the way. */
export function argumentsNodeOf(root: ArgumentsNode, args: Readonly<Record<string, unknown>>): ArgumentsNode {
  let node = root;
  for (const k in args) {
    const v = args[k];
    let byValue: Map<unknown, ArgumentsNode> | undefined;
    let value: unknown = v;
    if (typeof v === 'object' && v !== null) {
      node.nextJson ??= new Map();
      byValue = node.nextJson.get(k) as Map<unknown, ArgumentsNode> | undefined;
      if (!byValue) {
        byValue = new Map();
        node.nextJson.set(k, byValue as Map<string, ArgumentsNode>);
      }
      value = JSON.stringify(v);
    } else {
      node.next ??= new Map();
      byValue = node.next.get(k);
      if (!byValue) {
        byValue = new Map();
        node.next.set(k, byValue);
      }
    }
    let child = byValue.get(value);
    if (!child) {
      child = argumentsNode();
      byValue.set(value, child);
    }
    node = child;
  }
  return node;
}

/** Whether the object has arguments (most have none). */
export function hasArguments(args: Readonly<Record<string, unknown>>): boolean {
  for (const _ in args) return true;
  return false;
}

/**
 * The pairs of policies that govern objects, by the user policy, then the operator policy: what
 * the pair does is made once per type and arguments (most objects share both: every quorum queue
 * has the same `x-queue-type`). Made anew each time when `unshared`.
 */
export class Pairs {
  readonly #byUser = new Map<Policy | null, Map<Policy | null, Pair>>();
  readonly #unshared: boolean;

  constructor(unshared: boolean) {
    this.#unshared = unshared;
  }

  /** The pair's entry and its root for the type. */
  of(kind: ObjectKind, user: Policy | null, operator: Policy | null): { pair: Pair; root: ArgumentsNode } {
    if (this.#unshared) return { pair: newPair(), root: argumentsNode() };
    let byOperator = this.#byUser.get(user);
    if (!byOperator) {
      byOperator = new Map();
      this.#byUser.set(user, byOperator);
    }
    let pair = byOperator.get(operator);
    if (!pair) {
      pair = newPair();
      byOperator.set(operator, pair);
    }
    let root = pair.byKind.get(kind);
    if (!root) {
      root = argumentsNode();
      pair.byKind.set(kind, root);
    }
    return { pair, root };
  }

  /**
   * The pairs the broker may pick for a tied object: each of a layer's candidates with each of the
   * other's (a decided layer gives its one winner); undefined when a layer has none (not decided
   * for another reason: a pattern not read, a type unknown) or there are too many.
   */
  alternatives(kind: ObjectKind, users: readonly (Policy | null)[], operators: readonly (Policy | null)[]) {
    if (users.length === 0 || operators.length === 0 || users.length * operators.length > MAX_ALTERNATIVES)
      return undefined;
    const out: Alternative[] = [];
    for (const u of users)
      for (const op of operators) out.push({ user: u, operator: op, ...this.of(kind, u, op) });
    return out;
  }
}

/**
 * What a kind reads of an object its pair governs: the values it uses (both layers merged, its
 * own arguments on top; without arguments the pair's values as they are, which `withArguments`
 * would copy) and, if asked, what it would use without the operator policy.
 */
export function governedReading(
  o: LintObject,
  kind: ObjectKind,
  user: Policy | null,
  operator: Policy | null,
  pair: Pair,
  version: BrokerVersion,
  unshared: boolean,
): GovernedReading {
  const readArguments = unshared || hasArguments(o.arguments);
  pair.effective ??= effectiveDefinition(user?.definition, operator?.definition, version);
  const sourced: Readonly<Record<string, SourcedValue>> = readArguments
    ? withArguments(pair.effective, o.arguments, kind, version)
    : pair.effective;
  return {
    object: o,
    kind,
    user,
    operator,
    version,
    sourced,
    own: () => {
      pair.own ??= effectiveDefinition(user?.definition, undefined, version);
      return readArguments ? withArguments(pair.own, o.arguments, kind, version) : pair.own;
    },
  };
}
