import type { ChangeRequest, Notifier, WorkflowOptions } from './types.ts';

/** The Notifier, with each failure logged instead of thrown: a post that fails never undoes a transition. */
export function notifierLogging(n: Notifier, log: WorkflowOptions['log']): Notifier {
  const guard =
    <A extends unknown[]>(what: string, f: (...a: A) => Promise<void>) =>
    async (...a: A) => {
      try {
        await f(...a);
      } catch (err) {
        log.error({ err, requestId: (a[0] as ChangeRequest).id }, `notifier.${what} failed`);
      }
    };
  return {
    stateChanged: guard('stateChanged', (r) => n.stateChanged(r)),
    applied: guard('applied', (r, rec) => n.applied(r, rec)),
    failed: guard('failed', (r) => n.failed(r)),
    stale: guard('stale', (r, p) => n.stale(r, p)),
    reminder: guard('reminder', (r) => n.reminder(r)),
    reviewed: guard('reviewed', (r) => n.reviewed(r)),
    reviewReminder: guard('reviewReminder', (r) => n.reviewReminder(r)),
  };
}
