import type { KindOrUnknown } from '../policy/index.ts';
import { type PolicySet, type Resolution, resolve } from '../policy/index.ts';
import { nameView, pendingVerdicts } from '../policy/pattern/index.ts';
import type { Simulation } from '../policy/simulate/index.ts';
import { type BacktrackingReader, defaultReader } from './reader.ts';

/**
 * `resolve` with the patterns that need the backtracking engine read first: a first pass
 * collects them (they answer "undecidable" meanwhile), the reader decides them off the main
 * thread, and the second pass has every verdict (or the patterns that ran out of budget are
 * unreadable, as any other unreadable pattern).
 */
export async function resolveRead(
  set: PolicySet,
  name: string,
  kind: KindOrUnknown,
  reader: BacktrackingReader = defaultReader(),
): Promise<Resolution> {
  const view = nameView(name, { collectPending: true });
  const first = resolve(set, name, kind, view);
  if (!view.pending || view.pending.size === 0) return first;
  await reader.decide(pendingVerdicts([view]));
  return resolve(set, name, kind);
}

/**
 * A simulation's parked objects read again once the backtracking engine decided what they wait
 * for (see Simulation.pending): call after the inventory has been fed in.
 */
export async function settleSimulation(
  simulation: Simulation,
  reader: BacktrackingReader = defaultReader(),
): Promise<void> {
  const pending = simulation.pending();
  if (pending.size > 0) await reader.decide(pending);
  simulation.settle();
}
