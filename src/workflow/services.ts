import type { AuditTrail } from '../audit/index.ts';
import type { Logger } from '../log/index.ts';
import type { RequestStore } from './store.ts';
import type { Notifier } from './types.ts';

/**
 * What each part of the workflow that moves a request and records it works with (the apply job,
 * break-glass): the request store, the audit trail, the notifier, the log and the clock, handed in
 * by the composition root through createWorkflow or the worker.
 */
export interface RecordingServices {
  readonly store: RequestStore;
  readonly audit: AuditTrail;
  readonly notify: Notifier;
  readonly log: Logger;
  readonly now: () => Date;
}
