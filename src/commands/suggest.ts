import { CloseNames } from '../core/index.ts';
import type { ObjectKind } from '../policy/index.ts';

/**
 * "Did you mean" for an object `which` did not find (a policy's and a vhost's are folded over
 * lists already at hand: `didYouMean.ts`, `vhosts.ts`). Only a hint: a listing that fails leaves
 * it empty and the answer stands.
 */

export type NamedKind = 'queue' | 'exchange';

export interface Suggestion {
  readonly name: string;
  readonly kind: NamedKind;
}

/** What the object suggestions need of the management API. ManagementClient satisfies it. */
export interface NameLister {
  /** One streamed listing of a vhost's queue or exchange names. */
  streamNames?(what: 'queues' | 'exchanges', vhost: string): AsyncIterable<{ name: string }>;
}

/**
 * The existing queues and exchanges closest to `name`, at most three: one streamed listing of
 * names per type (both at once), folded as they arrive, never a call per name. A `kind` narrows
 * it to that type.
 */
export async function closeObjects(
  broker: NameLister,
  vhost: string,
  name: string,
  kind?: ObjectKind,
): Promise<Suggestion[]> {
  const streamNames = broker.streamNames?.bind(broker);
  if (!streamNames) return [];
  const close = new CloseNames<NamedKind>(name);
  const fold = async (what: 'queues' | 'exchanges', tag: NamedKind) => {
    for await (const o of streamNames(what, vhost)) close.add(o.name, tag);
  };
  const kinds: NamedKind[] = kind === 'exchange' ? ['exchange'] : kind ? ['queue'] : ['queue', 'exchange'];
  try {
    await Promise.all(kinds.map((k) => fold(k === 'queue' ? 'queues' : 'exchanges', k)));
  } catch {
    return [];
  }
  return close.matches().map((m) => ({ name: m.name, kind: m.tag }));
}
