import { randomBytes } from 'node:crypto';
import type { AuditEntry, AuditRecord } from '../audit/types.ts';
import type { Logger } from '../log.ts';
import { auditObject } from '../policy/diff.ts';
import type { SimulationResult } from '../policy/simulate.ts';
import type { Policy } from '../policy/types.ts';
import type { InventorySource } from '../rabbit/inventory.ts';
import { effectOfChange } from './effect.ts';
import type { OutsideChange } from './watcher.ts';

/**
 * A change made outside the bot, recorded and told: what the objects under the policy gained
 * and lost (the preview's simulation on the before state), one out-of-band record appended to
 * the audit trail (chained like the others: `action: "outside"`, `actor` instead of requester
 * and approver, `detectedBy`), then posted to the environment's approvals channel.
 */

/** What the recorder needs of the audit trail. */
export interface OutsideTrail {
  append(entry: AuditEntry): Promise<AuditRecord>;
}

/** What the recorder needs of the Slack side. */
export interface OutsideNotifier {
  /** Posts the record to the approvals channel (none configured: tells nobody). */
  outside(record: AuditRecord, approvalsChannel: string | undefined): Promise<void>;
}

export interface OutsideRecorderOptions {
  readonly brokerFor: (env: string) => InventorySource;
  readonly approvalsChannelOf: (env: string) => string | undefined;
  readonly trail: OutsideTrail;
  readonly notifier: OutsideNotifier;
  readonly log: Logger;
  /** Tries of the append and of the post, each (Redis or Slack may blink). Default 3. */
  readonly attempts?: number;
  readonly retryBaseMs?: number;
  readonly now?: () => Date;
}

const fields = (p: Policy | null) =>
  p && { pattern: p.pattern, applyTo: p.applyTo, priority: p.priority, definition: { ...p.definition } };

/** The out-of-band record of a change, before the trail chains it. */
export function outsideEntry(
  change: OutsideChange,
  effect: SimulationResult | undefined,
  at: Date,
): AuditEntry {
  return {
    id: `o-${randomBytes(10).toString('hex')}`,
    at: at.toISOString(),
    env: change.env,
    vhost: change.vhost,
    policy: change.name,
    operator: change.layer === 'operator',
    action: 'outside',
    ...(change.actor === null ? {} : { actor: change.actor }),
    detectedBy: change.source,
    appliedAt: change.at.toISOString(),
    before: fields(change.before),
    after: fields(change.after),
    objects: effect ? effect.objects.map(auditObject) : [],
    unpredictable: effect?.unpredictable.length ?? 0,
  };
}

async function tries<T>(attempts: number, baseMs: number, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts) throw err;
      await new Promise((r) => setTimeout(r, baseMs * 2 ** (attempt - 1)));
    }
  }
}

export function outsideRecorder(o: OutsideRecorderOptions): (change: OutsideChange) => Promise<void> {
  const attempts = o.attempts ?? 3;
  const base = o.retryBaseMs ?? 500;
  return async (change) => {
    const log = o.log.child({ env: change.env, vhost: change.vhost, policy: change.name });
    let effect: SimulationResult | undefined;
    try {
      effect = await tries(attempts, base, () => effectOfChange(o.brokerFor(change.env), change));
    } catch (err) {
      // Recorded without it rather than not at all: the vhost may be gone, the broker down.
      log.warn({ err: String(err) }, 'what the objects gained and lost could not be read');
    }
    const record = await tries(attempts, base, () =>
      o.trail.append(outsideEntry(change, effect, o.now?.() ?? new Date())),
    );
    try {
      await tries(attempts, base, () => o.notifier.outside(record, o.approvalsChannelOf(change.env)));
    } catch (err) {
      log.error({ err: String(err), record: record.id }, 'recorded, but not posted to the approvals channel');
    }
  };
}
