import type { Transition } from '../compare.ts';
import { nameView, type PatternCache } from '../pattern/pattern.ts';
import { PolicyIndex } from '../policyIndex.ts';
import type { BrokerVersion, Policy } from '../types.ts';
import type { InventoryObject } from './simulate.ts';

const NONE: readonly number[] = [];

/**
 * Which changes of a burst can touch an object: those whose policy, before or after, has a
 * pattern and apply-to that may reach it. An object neither version reaches is governed alike
 * before and after that change, so its simulation is not fed it (the per-object cost of a burst
 * is then one prefix lookup, not one full resolution per change). A pattern the engine cannot
 * decide for the name, and a queue of a type the bot does not know, count as reaching.
 */
export function touchIndex(
  changes: readonly Transition[],
  version: BrokerVersion,
  cache: PatternCache,
): (o: InventoryObject) => readonly number[] {
  const tagged: Policy[] = [];
  changes.forEach((t, i) => {
    for (const p of [t.before, t.after]) if (p) tagged.push({ ...p, name: String(i), priority: 0 });
  });
  const index = new PolicyIndex(tagged, version, cache).prepare();
  const all = changes.map((_, i) => i);
  return (o) => {
    if (o.kind === null) return all;
    const candidates = index.reachingFor(o.kind, o.name);
    if (candidates.length === 0) return NONE;
    const view = nameView(o.name);
    const hit: number[] = [];
    for (const e of candidates) {
      const i = Number(e.name);
      if (!hit.includes(i) && e.pattern.match(view) !== false) hit.push(i);
    }
    return hit;
  };
}
