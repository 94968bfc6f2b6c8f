import { settleSimulation } from '../patterns/resolveRead.ts';
import type { Transition } from '../policy/compare.ts';
import { nameView, PatternCache } from '../policy/pattern.ts';
import { PolicyIndex } from '../policy/policyIndex.ts';
import type { ChangeAction, InventoryObject, SimulationResult } from '../policy/simulate.ts';
import { Simulation } from '../policy/simulate.ts';
import type { BrokerVersion, Policy } from '../policy/types.ts';
import { type InventorySource, openInventory } from '../rabbit/inventory.ts';

/**
 * What the objects under a policy gained and lost by a change already made (outside the bot):
 * the preview's simulation, run on the state before it. The broker lists the policies as they
 * are now, so the changed layer is put back as it was (the policy's before in place of its
 * after); and the objects' reported policy of that layer, which is already the after, is not
 * used: the engine reads both sides, as it does for the operator layer in every preview.
 *
 * A later change to the same vhost between the change and this listing is read as part of the
 * "before" state: the answer is for the policies as listed, and the summary is dated.
 */

export function actionOf(t: Pick<Transition, 'before' | 'after'>): ChangeAction {
  return t.before === null ? 'create' : t.after === null ? 'delete' : 'edit';
}

/** The layer's policies as they were before the change, from the list as it is now. */
export function listBefore(now: readonly Policy[], t: Transition): Policy[] {
  const others = now.filter((p) => p.name !== t.name);
  return t.before ? [...others, t.before] : others;
}

/**
 * What each change of one vhost did, from ONE listing of its objects: a simulation per change
 * (each on the state before it, as effectOfChange), all fed by the same pass over the listing.
 * A burst of 300 changes over 100,000 queues reads the queues once, not 300 times.
 */
export async function effectsOfChanges(
  broker: InventorySource,
  changes: readonly Transition[],
): Promise<SimulationResult[]> {
  const vhost = changes[0]?.vhost;
  if (vhost === undefined) return [];
  if (changes.some((t) => t.vhost !== vhost)) throw new Error('effectsOfChanges: one vhost at a time');
  const inventory = await openInventory(broker, vhost);
  // Every simulation reads the same vhost's patterns: each compiled once for the burst, not once
  // per change and layer (30 changes over 1,000 policies compiled 90,000; bench/outside).
  const cache = new PatternCache();
  const simulations = changes.map((t) => {
    const user = t.layer === 'user' ? listBefore(inventory.user, t) : inventory.user;
    const operator = t.layer === 'operator' ? listBefore(inventory.operator, t) : inventory.operator;
    return new Simulation({
      version: inventory.version,
      user,
      operator,
      change: { action: actionOf(t), layer: t.layer, before: t.before, after: t.after },
      cache,
    });
  });
  // The changed layer's reported policy is already the after: the engine reads both sides.
  const layers = changes.map((t) => t.layer);
  const touched = touchIndex(changes, inventory.version, cache);
  await inventory.each((o) => {
    const reach = touched(o);
    if (reach.length === 0) return;
    // Copied only for the layers the object's changes are in.
    let withoutUser: InventoryObject | undefined;
    let withoutOperator: InventoryObject | undefined;
    for (const i of reach) {
      if (layers[i] === 'user') {
        withoutUser ??= { ...o, policy: undefined };
        simulations[i]?.add(withoutUser);
      } else {
        withoutOperator ??= { ...o, operatorPolicy: undefined };
        simulations[i]?.add(withoutOperator);
      }
    }
  });
  await Promise.all(simulations.map((s) => settleSimulation(s)));
  return simulations.map((s) => s.result());
}

/**
 * Which changes of a burst can touch an object: those whose policy, before or after, has a
 * pattern and apply-to that may reach it. An object neither version reaches is governed alike
 * before and after that change, so its simulation is not fed it (the per-object cost of a burst
 * is then one prefix lookup, not one full resolution per change). A pattern the engine cannot
 * decide for the name, and a queue of a type the bot does not know, count as reaching.
 */
function touchIndex(
  changes: readonly Transition[],
  version: BrokerVersion,
  cache: PatternCache,
): (o: InventoryObject) => number[] {
  const tagged: Policy[] = [];
  changes.forEach((t, i) => {
    for (const p of [t.before, t.after]) if (p) tagged.push({ ...p, name: String(i), priority: 0 });
  });
  const index = new PolicyIndex(tagged, version, cache).prepare();
  const all = changes.map((_, i) => i);
  return (o) => {
    if (o.kind === null) return all;
    const candidates = index.reachingFor(o.kind, o.name);
    if (candidates.length === 0) return [];
    const view = nameView(o.name);
    const hit = new Set<number>();
    for (const e of candidates) if (e.pattern.match(view) !== false) hit.add(Number(e.name));
    return [...hit];
  };
}

export async function effectOfChange(broker: InventorySource, t: Transition): Promise<SimulationResult> {
  const [effect] = await effectsOfChanges(broker, [t]);
  if (!effect) throw new Error('effectOfChange: no result');
  return effect;
}
