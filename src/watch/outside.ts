import { randomBytes } from 'node:crypto';
import type { ChangeEntry, ChangeRecord, OutsideImpact } from '../audit/index.ts';
import type { Logger } from '../log/index.ts';
import type { Policy } from '../policy/index.ts';
import { auditObject } from '../policy/index.ts';
import type { ImpactSummary } from '../preview/index.ts';
import type { InventorySource } from '../rabbit/index.ts';
import { type ChangeEffect, effectsOfChanges } from './effect.ts';
import type { OutsideChange } from './watcher.ts';

/**
 * Changes made outside the bot, recorded and told, a burst at a time: the changes of one
 * environment and vhost that arrive together (the same actor within `windowMs` of each other, or
 * one comparison that finds many: a definitions import, a first start) are one burst. For a
 * burst, what the objects gained and lost (the preview's simulation on the before state) is
 * computed from one listing of the vhost; each change is still its own out-of-band record in the
 * audit trail (chained like the others: `action: "outside"`, `actor` instead of requester and
 * approver, `detectedBy`); then the burst is ONE post to the environment's approvals channel.
 */

/** What the recorder needs of the audit trail. */
export interface OutsideTrail {
  append(entry: ChangeEntry): Promise<ChangeRecord>;
}

/** What the recorder needs of the Slack side. */
export interface OutsideNotifier {
  /**
   * Posts one message for the records of one burst (one environment and vhost, oldest first) to
   * the approvals channel (none configured: tells nobody).
   */
  outside(records: readonly ChangeRecord[], approvalsChannel: string | undefined): Promise<void>;
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
  /** A burst ends `windowMs` after its last change (default 1.5 s), at most `maxHoldMs` after its first (10 s). */
  readonly windowMs?: number;
  readonly maxHoldMs?: number;
  readonly now?: () => Date;
}

export interface OutsideRecorder {
  /** Takes a change into its burst; recorded and posted when the burst ends. */
  record(change: OutsideChange): void;
  /** Ends every burst now and waits until they are recorded and posted (at stop). */
  flush(): Promise<void>;
}

export const BURST_DEFAULTS = { windowMs: 1_500, maxHoldMs: 10_000 } as const;

const fields = (p: Policy | null) =>
  p && { pattern: p.pattern, applyTo: p.applyTo, priority: p.priority, definition: { ...p.definition } };

/** The impact summary as the record keeps it: the list of every losing queue left out (the objects say the worst). */
function kept({ queues: _, ...rest }: ImpactSummary): OutsideImpact {
  return rest;
}

/** The out-of-band record of a change, before the trail chains it. */
export function outsideEntry(change: OutsideChange, effect: ChangeEffect | undefined, at: Date): ChangeEntry {
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
    ...(change.between
      ? { between: { from: change.between.from.toISOString(), to: change.between.to.toISOString() } }
      : {}),
    before: fields(change.before),
    after: fields(change.after),
    objects: effect ? effect.objects.map(auditObject) : [],
    unpredictable: effect?.unpredictable.length ?? 0,
    ...(effect ? { impact: effect.impact.totals, impactDetail: kept(effect.impact) } : {}),
  };
}

/** `work` tried up to `attempts` times, waiting `baseMs` doubling between tries; the last failure thrown. */
export async function tries<T>(attempts: number, baseMs: number, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts) throw err;
      await new Promise((r) => setTimeout(r, baseMs * 2 ** (attempt - 1)));
    }
  }
}

interface Burst {
  readonly changes: OutsideChange[];
  readonly firstAt: number;
  timer?: NodeJS.Timeout;
}

export function outsideRecorder(o: OutsideRecorderOptions): OutsideRecorder {
  const attempts = o.attempts ?? 3;
  const base = o.retryBaseMs ?? 500;
  const windowMs = o.windowMs ?? BURST_DEFAULTS.windowMs;
  const maxHoldMs = o.maxHoldMs ?? BURST_DEFAULTS.maxHoldMs;
  const bursts = new Map<string, Burst>();
  const recording = new Set<Promise<void>>();
  // Stopping (flush): one try each, so that a Redis or Slack that is gone holds the stop no longer.
  let stopping = false;
  const triesNow = () => (stopping ? 1 : attempts);

  async function recordBurst(changes: readonly OutsideChange[]): Promise<void> {
    const [first] = changes;
    if (!first) return;
    const log = o.log.child({ env: first.env, vhost: first.vhost, changes: changes.length });
    let effects: ChangeEffect[] | undefined;
    // Dated by the event exchange: the messages as they were just before the first change.
    const asOf = changes.every((c) => c.source === 'events')
      ? new Date(Math.min(...changes.map((c) => c.at.getTime())))
      : undefined;
    try {
      effects = await tries(triesNow(), base, () =>
        effectsOfChanges(o.brokerFor(first.env), changes, asOf ? { asOf } : {}),
      );
    } catch (err) {
      // Recorded without it rather than not at all: the vhost may be gone, the broker down.
      log.warn({ err: String(err) }, 'what the objects gained and lost could not be read');
    }
    const records: ChangeRecord[] = [];
    for (const [i, change] of changes.entries()) {
      try {
        records.push(
          await tries(triesNow(), base, () =>
            o.trail.append(outsideEntry(change, effects?.[i], o.now?.() ?? new Date())),
          ),
        );
      } catch (err) {
        // The watcher's state has moved: these changes will not be found again. Said loudly. The
        // rest of the burst is not tried: the trail that refused every try refuses them too, and
        // trying each in turn would hold a stop for the tries of every change.
        log.error(
          { err: String(err), policies: changes.slice(i).map((c) => c.name) },
          changes.length - i === 1
            ? 'a change outside the bot could not be recorded'
            : `${changes.length - i} changes outside the bot could not be recorded`,
        );
        break;
      }
    }
    if (records.length === 0) return;
    try {
      await tries(triesNow(), base, () => o.notifier.outside(records, o.approvalsChannelOf(first.env)));
    } catch (err) {
      log.error(
        { err: String(err), records: records.map((r) => r.id) },
        'recorded, but not posted to the approvals channel',
      );
    }
  }

  function end(key: string): void {
    const burst = bursts.get(key);
    if (!burst) return;
    bursts.delete(key);
    clearTimeout(burst.timer);
    const run = recordBurst(burst.changes)
      .catch((err: unknown) => o.log.error({ err: String(err) }, 'a burst of outside changes failed'))
      .finally(() => recording.delete(run));
    recording.add(run);
  }

  return {
    record(change) {
      // One comparison's changes carry the same time and no actor: one burst, as an actor's events.
      const key = JSON.stringify([change.env, change.vhost, change.actor ?? `${change.source}`]);
      let burst = bursts.get(key);
      if (!burst) {
        burst = { changes: [], firstAt: Date.now() };
        bursts.set(key, burst);
      }
      burst.changes.push(change);
      clearTimeout(burst.timer);
      const wait = Math.max(0, Math.min(windowMs, burst.firstAt + maxHoldMs - Date.now()));
      burst.timer = setTimeout(() => end(key), wait);
      burst.timer.unref();
    },
    async flush() {
      stopping = true;
      for (const key of [...bursts.keys()]) end(key);
      await Promise.allSettled([...recording]);
    },
  };
}
