import { takesReview } from '../rules.ts';
import type { RequestStore } from '../store.ts';
import type { Notifier } from '../types.ts';

/** Moves every pending request past its deadline to `expired`, each in one atomic step; notifies. */
export async function expireDue(store: RequestStore, notify: Notifier): Promise<number> {
  let expired = 0;
  for (const id of await store.duePending()) {
    const outcome = await store.transition(id, { move: 'expire' });
    if (outcome.kind === 'expired') {
      expired++;
      await notify.stateChanged(outcome.request);
    }
  }
  return expired;
}

/**
 * Reminds the approvers of every pending request past half its time to live, once: the first
 * replica to claim a request's reminder (one HSETNX) sends it. Returns how many were sent.
 */
export async function remindDue(store: RequestStore, notify: Notifier): Promise<number> {
  let sent = 0;
  for (const r of await store.dueReminders()) {
    if (await store.claimReminder(r.id)) {
      sent++;
      await notify.reminder(r);
    }
  }
  return sent;
}

/**
 * Reminds the approvals channel of every break-glass change applied and still unreviewed past its
 * review deadline, once (one HSETNX decides which replica posts). Returns how many were sent.
 */
export async function remindReviewsDue(store: RequestStore, notify: Notifier): Promise<number> {
  let sent = 0;
  for (const r of await store.unreviewed({ due: true })) {
    if (takesReview(r) && !r.reviewRemindedAt && (await store.claimReviewReminder(r.id))) {
      sent++;
      await notify.reviewReminder(r);
    }
  }
  return sent;
}
