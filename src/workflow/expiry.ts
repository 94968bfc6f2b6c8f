import type { RequestStore } from './store.ts';
import type { Notifier } from './types.ts';

/** Moves every pending request past its deadline to `expired`, each in one atomic step; notifies. */
export async function expireDue(store: RequestStore, notify: Notifier): Promise<number> {
  let expired = 0;
  for (const id of await store.duePending()) {
    const outcome = await store.transition(id, { from: [], to: 'expired', checkDeadline: true });
    if (outcome.kind === 'expired') {
      expired++;
      await notify.stateChanged(outcome.request);
    }
  }
  return expired;
}
