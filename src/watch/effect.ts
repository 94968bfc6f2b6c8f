import { settleSimulation } from '../patterns/index.ts';
import type { Transition } from '../policy/index.ts';
import type { SimulationResult } from '../policy/simulate/index.ts';
import { SequenceDriver } from '../policy/simulate/index.ts';
import { type ImpactSummary, type PreviewObject, SUMMARY_NAMES, withImpact } from '../preview/index.ts';
import { type InventorySource, openInventory } from '../rabbit/index.ts';

/**
 * What the objects under a policy gained and lost by a change already made (outside the bot):
 * the preview's simulation, run on the state before it. The broker lists the policies as they
 * are now, so the changed layer is put back as it was (the policy's before in place of its
 * after); and the objects' reported policy of that layer, which is already the after, is not
 * used: the engine reads both sides, as it does for the operator layer in every preview.
 *
 * A later change to the same vhost between the change and this listing is read as part of the
 * "before" state: the answer is for the policies as listed, and the summary is dated.
 *
 * What it did to the messages: the preview's rules of immediate effect (src/policy/impact/impact.ts) on
 * that before state, with the queues' numbers read in the same pass. A change is found after the
 * fact, so the numbers now may already show its removal: with `asOf` (when the event exchange
 * dated the change) they are the broker's samples from just before it (its length history),
 * else the numbers as read, said so.
 */

/** A change's effect: what the objects gained and lost, and what that did to the messages. */
export interface ChangeEffect extends SimulationResult {
  readonly objects: PreviewObject[];
  readonly impact: ImpactSummary;
}

/**
 * What each change of one vhost did, from ONE listing of its objects: a simulation per change
 * (each on the state before it, as effectOfChange), all fed by the same pass over the listing
 * (the sequence driver's, src/policy/simulate/sequence.ts, for changes already made).
 * A burst of 300 changes over 100,000 queues reads the queues once, not 300 times.
 */
export async function effectsOfChanges(
  broker: InventorySource,
  changes: readonly Transition[],
  options: { asOf?: Date } = {},
): Promise<ChangeEffect[]> {
  const vhost = changes[0]?.vhost;
  if (vhost === undefined) return [];
  if (changes.some((t) => t.vhost !== vhost)) throw new Error('effectsOfChanges: one vhost at a time');
  // A burst of user-layer changes reads no reported policy (see below): one listing of the
  // queues' records and numbers. An operator change needs the user layer's, current.
  const withoutReportedPolicies = changes.every((t) => t.layer === 'user');
  // There, only the numbers of the queues some change reaches, the only ones the impact reads,
  // not every queue's held until the listing ends (100,000 of them, half the burst's garbage
  // collection). Asked once the queues are handed over, in the order they were (a batch at a
  // time): each name compared with the next one seen reaching, not hashed. (Beside a listing of
  // their own the numbers may come first: all kept.)
  const reached: string[] = [];
  let asked = 0;
  const keep = (name: string) => {
    if (name !== reached[asked]) return false;
    if (++asked === reached.length) {
      reached.length = 0;
      asked = 0;
    }
    return true;
  };
  const inventory = await openInventory(broker, vhost, {
    live: true,
    ...(options.asOf ? { asOf: options.asOf } : {}),
    withoutReportedPolicies,
    // The records first, then the numbers of the queues a change reached alone (statistics.ts).
    afterRecords: withoutReportedPolicies,
    ...(withoutReportedPolicies ? { keepLive: () => keep } : {}),
  });
  // Every simulation reads the same vhost's patterns: each compiled once for the burst, not once
  // per change and layer (30 changes over 1,000 policies compiled 90,000; bench/outside). And each
  // layer indexed once: a change's before is the listed layer with its policy put back as it was
  // (its after taken out), read through that index, not 1,000 policies filed per change. The
  // changed layer's reported policy is already the after: the engine reads both sides.
  const driver = new SequenceDriver({
    version: inventory.version,
    user: inventory.user,
    operator: inventory.operator,
    steps: changes,
    made: true,
  });
  const exchanges = new Set<string>();
  await inventory.each((o) => {
    if (o.kind === 'exchange') exchanges.add(o.name);
    const reaches = driver.add(o);
    if (reaches && withoutReportedPolicies && o.kind !== 'exchange') reached.push(o.name);
  });
  const simulations = driver.simulations;
  await Promise.all(simulations.map((s) => settleSimulation(s)));
  const reading = await inventory.live();
  return simulations.map((s) => {
    const result = s.result();
    const live = withImpact(result.objects, reading, exchanges, inventory.version, SUMMARY_NAMES);
    return { ...result, objects: live.objects, impact: live.summary };
  });
}

export async function effectOfChange(broker: InventorySource, t: Transition): Promise<ChangeEffect> {
  const [effect] = await effectsOfChanges(broker, [t]);
  if (!effect) throw new Error('effectOfChange: no result');
  return effect;
}
