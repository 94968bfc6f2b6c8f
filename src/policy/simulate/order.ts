// Over 400 lines: the search over orders and the cost of a state share one memo of simulated steps.
import type { Transition } from '../compare.ts';
import { type Impact, impactOf, type LiveQueue, type World } from '../impact/impact.ts';
import { PatternCache as Cache, type PatternCache } from '../pattern/pattern.ts';
import { PolicyIndex } from '../policyIndex.ts';
import type { BrokerVersion, ObjectKind, Policy } from '../types.ts';
import { objectKey, SequenceDriver, type StateValues, timelines } from './sequence.ts';
import type { InventoryObject } from './simulate.ts';
import { touchIndex } from './touch.ts';

/**
 * The order of writing a set of policy changes, and what a state on the way does that the end
 * state does not. Pure.
 *
 * The loss of a state on the way, for one object: what it removes beyond the end state (messages
 * dropped above the end's, a queue deleted that the end keeps) and the dead-letter or alternate
 * targets it leaves missing that the end does not (`extraImpact`). A tie on the way counts as the
 * worst of its candidates (a tie between policies of the same definition is one set of values, so
 * harmless). An order's cost is, per object, the worst of its states, summed.
 *
 * The search: the changes fall into groups that share no object (two changes are in one group when
 * some object is reached by both); a group of one is in order. Within a group, a depth-first
 * search over orders: at each step the changes are tried least added cost first (ties: creates,
 * then edits that raise a priority most, then the rest, then deletes), so the first order found is
 * the greedy one; it then goes on, pruning every partial order already as costly as the best, until
 * an order without loss is found or a budget of simulated steps is spent (then the rest of the path
 * is completed greedily). A step simulated from a state is the same whatever the order that led to
 * it (the state is the set of changes applied), so it is simulated once.
 */

const removedBy = (list: readonly Impact[]): number => {
  let n = 0;
  for (const x of list) if (x.effect === 'drop') n += x.messages;
  return n;
};

const deletes = (list: readonly Impact[]): boolean => list.some((x) => x.effect === 'delete');

/** A dead-letter or alternate target left missing, as one string (key and target). */
function missingTarget(x: Impact): string | undefined {
  return x.effect === 'missing-target' && (x.key === 'dead-letter-exchange' || x.key === 'alternate-exchange')
    ? `${x.key}\u0000${x.target}`
    : undefined;
}

/** What a state on the way does that the end state does not, and how bad that is (0: nothing). */
export function extraImpact(
  state: readonly Impact[],
  end: readonly Impact[],
): { impact: Impact[]; weight: number } {
  const impact: Impact[] = [];
  let weight = 0;
  if (state.length === 0) return { impact, weight };
  const extraDrop = removedBy(state) - removedBy(end);
  if (extraDrop > 0) {
    impact.push(...state.filter((x) => x.effect === 'drop'));
    weight += extraDrop;
  }
  if (deletes(state) && !deletes(end)) {
    for (const x of state) {
      if (x.effect !== 'delete') continue;
      impact.push(x);
      weight += x.messages + 1;
    }
  }
  let endMissing: Set<string> | undefined;
  for (const x of state) {
    const target = missingTarget(x);
    if (target === undefined) continue;
    endMissing ??= new Set(end.flatMap((e) => missingTarget(e) ?? []));
    if (endMissing.has(target)) continue;
    impact.push(x);
    weight += 1;
  }
  return { impact, weight };
}

export interface LossContext {
  readonly world: World;
  /** The queue's numbers now; null: none (an exchange, or no statistics). */
  readonly live: (name: string, kind: ObjectKind) => LiveQueue | null;
  readonly defaultDeliveryLimit?: number | undefined;
}

/** The impact of one set of values against now. */
export function impactAt(
  o: { readonly name: string; readonly kind: ObjectKind; readonly now: Readonly<Record<string, unknown>> },
  values: Readonly<Record<string, unknown>>,
  ctx: LossContext,
): Impact[] {
  return impactOf(
    {
      name: o.name,
      kind: o.kind,
      before: o.now,
      after: values,
      now: ctx.live(o.name, o.kind),
      ...(ctx.defaultDeliveryLimit === undefined ? {} : { defaultDeliveryLimit: ctx.defaultDeliveryLimit }),
    },
    ctx.world,
  );
}

/** A state on the way against the end state; a tie: its worst candidate. */
export function stateLoss(
  o: { readonly name: string; readonly kind: ObjectKind; readonly now: Readonly<Record<string, unknown>> },
  state: StateValues,
  end: StateValues,
  ctx: LossContext,
): { impact: Impact[]; weight: number } {
  return lossAgainst(
    o,
    state,
    end.map((v) => impactAt(o, v, ctx)),
    ctx,
  );
}

/** `stateLoss` against the end state's impacts, one per candidate (worked out once per object). */
export function lossAgainst(
  o: { readonly name: string; readonly kind: ObjectKind; readonly now: Readonly<Record<string, unknown>> },
  state: StateValues,
  ends: readonly (readonly Impact[])[],
  ctx: LossContext,
): { impact: Impact[]; weight: number } {
  // The end's best candidate: a loss the end may avoid is not counted against the way.
  let worst = { impact: [] as Impact[], weight: 0 };
  for (const v of state) {
    const here = impactAt(o, v, ctx);
    let least: { impact: Impact[]; weight: number } | undefined;
    for (const e of ends) {
      const x = extraImpact(here, e);
      if (!least || x.weight < least.weight) least = x;
    }
    if (least && least.weight > worst.weight) worst = least;
  }
  return worst;
}

export interface OrderInput {
  readonly version: BrokerVersion;
  readonly user: readonly Policy[];
  readonly operator: readonly Policy[];
  /** The set, in any order; each policy at most once. */
  readonly changes: readonly Transition[];
  /** The objects of the vhost some change may reach (others are not read). */
  readonly objects: readonly InventoryObject[];
  readonly loss: LossContext;
  /** Steps simulated at most per group beyond the greedy order (default 20·n² + 200). */
  readonly budget?: number;
  readonly cache?: PatternCache;
}

export interface ChosenOrder {
  /** Indices into `changes`, in the order of writing. */
  readonly order: number[];
  /** The cost of that order (0: no state on the way loses anything the end state does not). */
  readonly cost: number;
  /** Steps simulated to find it. */
  readonly simulated: number;
}

/** The order the changes are tried in, all else equal: creates, rising priorities, edits, deletes. */
function rank(t: Transition): number {
  if (t.before === null) return 0;
  if (t.after === null) return 3;
  return t.after.priority > t.before.priority ? 1 : 2;
}

export function heuristicOrder(changes: readonly Transition[]): number[] {
  const rise = (t: Transition) => (t.before && t.after ? t.after.priority - t.before.priority : 0);
  return changes
    .map((t, i) => ({ t, i }))
    .sort((a, b) => rank(a.t) - rank(b.t) || rise(b.t) - rise(a.t) || a.i - b.i)
    .map((x) => x.i);
}

/** Groups of changes that share no object, each in heuristic order; groups by their first change's rank. */
export function groupsOf(changes: readonly Transition[], reach: readonly (readonly number[])[]): number[][] {
  const parent = changes.map((_, i) => i);
  const find = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    return r;
  };
  for (const list of reach) {
    const [first, ...rest] = list;
    if (first === undefined) continue;
    for (const j of rest) parent[find(j)] = find(first);
  }
  const groups = new Map<number, number[]>();
  for (const i of heuristicOrder(changes)) {
    const r = find(i);
    let g = groups.get(r);
    if (!g) {
      g = [];
      groups.set(r, g);
    }
    g.push(i);
  }
  return [...groups.values()];
}

interface Objectish {
  readonly key: string;
  readonly object: InventoryObject;
  readonly reach: readonly number[];
}

export function chooseOrder(input: OrderInput): ChosenOrder {
  const cache = input.cache ?? new Cache();
  const touched = touchIndex(input.changes, input.version, cache);
  const objects: Objectish[] = input.objects.map((o) => ({
    key: objectKey(o),
    object: o,
    reach: touched(o),
  }));
  const groups = groupsOf(
    input.changes,
    objects.map((o) => o.reach),
  );
  const order: number[] = [];
  let cost = 0;
  let simulated = 0;
  let base: Layers | undefined;
  for (const group of groups) {
    if (group.length === 1) {
      order.push(...group);
      continue;
    }
    const inGroup = new Set(group);
    const mine = objects.filter((o) => o.reach.some((i) => inGroup.has(i)));
    base ??= {
      user: new PolicyIndex(input.user, input.version, cache),
      operator: new PolicyIndex(input.operator, input.version, cache),
    };
    const found = searchGroup(input, base, group, mine, cache);
    order.push(...found.order);
    cost += found.cost;
    simulated += found.simulated;
  }
  return { order, cost, simulated };
}

/** The one step of a driver that simulates one change. */
const ONLY_STEP: readonly number[] = [0];

/** The vhost's two layers, indexed once; a state on the way reads through them (`layersAfter`). */
interface Layers {
  readonly user: PolicyIndex;
  readonly operator: PolicyIndex;
}

/**
 * The layers after the changes of `applied` (a set: the order does not matter, as each policy is
 * changed at most once), read through the vhost's index rather than indexed anew per state.
 */
function layersAfter(
  input: OrderInput,
  base: Layers,
  applied: readonly number[],
  cache: PatternCache,
): Layers {
  let layers = base;
  for (const i of applied) {
    const t = input.changes[i] as Transition;
    const next = layers[t.layer].replacing([t.before?.name, t.after?.name], t.after, cache);
    layers =
      t.layer === 'user' ? { user: next, operator: layers.operator } : { user: layers.user, operator: next };
  }
  return layers;
}

/** A next change tried from a partial order: what it adds to the cost, and to which objects. */
interface Child {
  readonly c: number;
  readonly i: number;
  readonly added: number;
  readonly changes: [string, number][];
}

function searchGroup(
  input: OrderInput,
  base: Layers,
  group: readonly number[],
  objects: readonly Objectish[],
  cache: PatternCache,
): ChosenOrder {
  const n = group.length;
  const budget = input.budget ?? 20 * n * n + 200;
  let simulated = 0;
  const byKey = new Map(objects.map((o) => [o.key, o]));

  // One step from a state (the set applied, as a sorted key): the values of every object it moves.
  const memo = new Map<string, Map<string, StateValues>>();
  const nowValues = new Map<string, Readonly<Record<string, unknown>>>();
  const endImpacts = new Map<string, Impact[][]>();
  const step = (applied: readonly number[], c: number): Map<string, StateValues> => {
    const key = `${[...applied].sort((a, b) => a - b).join(',')}|${c}`;
    const known = memo.get(key);
    if (known) return known;
    simulated++;
    const layers = layersAfter(input, base, applied, cache);
    const t = input.changes[c] as Transition;
    // The layers some applied change touched are read by the engine, as in the sequence driver.
    const earlier = applied.map((i) => input.changes[i] as Transition);
    const driver = new SequenceDriver({
      version: input.version,
      user: layers.user,
      operator: layers.operator,
      steps: [t],
      cache,
      unreported: {
        user: earlier.some((e) => e.layer === 'user'),
        operator: earlier.some((e) => e.layer === 'operator'),
      },
    });
    for (const o of objects) if (o.reach.includes(c)) driver.addTo(o.object, ONLY_STEP);
    const result = driver.simulations[0]?.result();
    const out = new Map<string, StateValues>();
    for (const line of timelines(1, result ? [result] : [], input.version)) {
      const k = objectKey(line);
      if (!nowValues.has(k)) nowValues.set(k, line.now);
      out.set(k, line.states[0] as StateValues);
    }
    memo.set(key, out);
    return out;
  };

  // The end state: the group written in heuristic order (any order ends there).
  const end = new Map<string, StateValues>();
  {
    const applied: number[] = [];
    for (const c of group) {
      for (const [k, v] of step(applied, c)) end.set(k, v);
      applied.push(c);
    }
  }

  const weightOf = (k: string, state: StateValues): number => {
    const o = byKey.get(k);
    const now = nowValues.get(k);
    const e = end.get(k);
    if (!o || !now || !e || o.object.kind === null) return 0;
    const object = { name: o.object.name, kind: o.object.kind, now };
    let ends = endImpacts.get(k);
    if (!ends) {
      ends = e.map((v) => impactAt(object, v, input.loss));
      endImpacts.set(k, ends);
    }
    return lossAgainst(object, state, ends, input.loss).weight;
  };

  let best: { order: number[]; cost: number } | undefined;
  const worst = new Map<string, number>();
  const path: number[] = [];
  let total = 0;
  const dfs = (greedyOnly: boolean): void => {
    if (best && best.cost === 0) return;
    if (path.length === n) {
      if (!best || total < best.cost) best = { order: [...path], cost: total };
      return;
    }
    const remaining = group.filter((c) => !path.includes(c));
    const last = path.length === n - 1;
    const child = (c: number, i: number): Child => {
      const moved = step(path, c);
      const changes: [string, number][] = [];
      let added = 0;
      if (!last) {
        for (const [k, v] of moved) {
          const w = weightOf(k, v);
          const was = worst.get(k) ?? 0;
          if (w > was) {
            added += w - was;
            changes.push([k, w]);
          }
        }
      }
      return { c, i, added, changes };
    };
    // Tried least added first (then in heuristic order): the first child that adds nothing is the
    // first tried whatever the others add, so they are worked out (simulated) only if the search
    // goes on past it, which it rarely does (it stops at an order without loss).
    const children: Child[] = [];
    let first: Child | undefined;
    for (let i = 0; i < remaining.length && !first; i++) {
      const ch = child(remaining[i] as number, i);
      children.push(ch);
      if (ch.added === 0) first = ch;
    }
    if (first && !visit(first, greedyOnly)) return;
    for (let i = children.length; i < remaining.length; i++) children.push(child(remaining[i] as number, i));
    children.sort((a, b) => a.added - b.added || a.i - b.i);
    for (const ch of children) {
      if (ch === first) continue;
      if (!visit(ch, greedyOnly)) return;
    }
  };
  /** Goes down to a child; false when the search stops there. */
  const visit = (child: Child, greedyOnly: boolean): boolean => {
    if (best && total + child.added >= best.cost) return true;
    const saved = child.changes.map(([k]) => [k, worst.get(k)] as const);
    for (const [k, w] of child.changes) worst.set(k, w);
    total += child.added;
    path.push(child.c);
    dfs(greedyOnly || simulated >= budget);
    path.pop();
    total -= child.added;
    for (const [k, w] of saved) {
      if (w === undefined) worst.delete(k);
      else worst.set(k, w);
    }
    return !(greedyOnly || simulated >= budget || (best && best.cost === 0));
  };
  dfs(false);
  const chosen = best ?? { order: [...group], cost: 0 };
  return { order: chosen.order, cost: chosen.cost, simulated };
}
