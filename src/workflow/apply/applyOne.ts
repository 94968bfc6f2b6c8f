import { UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import type { AuditObject } from '../../audit/index.ts';
import { queuesToWatch } from '../../audit/index.ts';
import { lossGrew } from '../../policy/impact/index.ts';
import type { Policy } from '../../policy/index.ts';
import { auditObjects, samePolicy, writeActionOf } from '../../policy/index.ts';
import { type PreviewBroker, type PreviewInput, type PreviewResult, preview } from '../../preview/index.ts';
import {
  narrowedTo,
  PAGE_MAX,
  RABBIT_ERROR_CODES,
  RabbitError,
  type RabbitErrorCode,
  type Unread,
} from '../../rabbit/index.ts';
import type { WorkflowBroker } from '../broker.ts';
import type { ChangeRequest } from '../types.ts';
import type { ApplyJobData } from './queue.ts';

/**
 * What a single create, edit or delete (a request without `set`, applied as a set of one by
 * applySet.ts) checks and keeps besides its step, because its approvers saw a preview of it:
 *
 * - before the write (`prepareOne`): the policy re-read (the broker has no compare-and-set: not
 *   what the approver saw, or for a create the name now taken, and nothing is written: stale), and
 *   the preview re-run on the broker as it is now, so the audit records what each object loses from
 *   the broker as it was; a change that would now remove more than the approval accepted (more
 *   messages, another queue) is not what was approved: stale, `loss-grew`. What the fresh preview
 *   found is saved in the job's data before the write, so a retry that finds the policy already
 *   written goes on with it.
 * - after the write (`verifyObjects`): the affected objects polled until they report the policy the
 *   preview predicted (the statistics lag), up to a deadline: the request's `verification`.
 * - gone stale (`stalePreview`): a fresh preview of the same change, for the Notifier's `stale`.
 */

const VERIFY_INTERVAL_MS = 500;

/** What the single change's fresh preview found, saved in the job's data before the write. */
export type Prepared = Pick<ApplyJobData, 'objects' | 'unpredictable' | 'watch' | 'writtenAt'>;

export const preparedOf = (data: ApplyJobData): Prepared => ({
  ...(data.objects ? { objects: data.objects } : {}),
  ...(data.unpredictable === undefined ? {} : { unpredictable: data.unpredictable }),
  ...(data.watch ? { watch: data.watch } : {}),
  ...(data.writtenAt ? { writtenAt: data.writtenAt } : {}),
});

/**
 * The broker as the job reads it: its queue listings narrowed to the queues the changed policy's
 * patterns find, as it was and as approved (what a change moves, they find: narrowed.ts), unless
 * the request's preview moved more objects than the broker's narrowed listing holds in one page
 * (then asking for them would only add a request before the whole listing).
 */
function readingsOf(r: ChangeRequest, broker: WorkflowBroker): PreviewBroker {
  if (r.preview.summary.objects > PAGE_MAX) return broker;
  const patterns = [r.before, r.after].flatMap((p) => (p ? [p.pattern] : []));
  return { ...narrowedTo(broker, patterns), listVhosts: () => broker.listVhosts() };
}

export const policyOf = (r: ChangeRequest, fields: ChangeRequest['before']): Policy | null =>
  fields && { vhost: r.vhost, name: r.policy, ...fields };

function previewInputOf(r: ChangeRequest, current: Policy | null): PreviewInput {
  // What the same change would be now: an edit of what is there, or a create where nothing is.
  return {
    action: writeActionOf({ before: current, after: r.after }),
    name: r.policy,
    layer: r.layer,
    vhost: r.vhost,
    env: r.env,
    fields: r.after ?? {},
  };
}

/**
 * The change's preview on the broker as it is now, for the objects it moves: the broker is asked
 * for the queues the policy's patterns find alone (their records and numbers), not every queue.
 */
export function freshPreview(r: ChangeRequest, current: Policy | null, broker: WorkflowBroker) {
  return preview(previewInputOf(r, current), readingsOf(r, broker));
}

/** The reads `prepareOne` makes, when the job began them early (applyJob.ts). */
export interface EarlyReads {
  readonly policy: Promise<Policy | null>;
  readonly preview: Promise<PreviewResult>;
}

export type PrepareOutcome =
  | { readonly kind: 'prepared'; readonly prepared: Prepared }
  /** A try before this one wrote it (after saving what it prepared): go on from the write. */
  | { readonly kind: 'written' }
  | { readonly kind: 'stale'; readonly code: 'policy-changed' | 'loss-grew' };

/** The single change's guard before its write (see above). Throws what the queue may retry. */
export async function prepareOne(
  r: ChangeRequest,
  broker: WorkflowBroker,
  saved: Prepared,
  now: Date,
  early?: EarlyReads,
): Promise<PrepareOutcome> {
  const before = policyOf(r, r.before);
  const current = await (early?.policy ?? broker.getPolicy(r.layer, r.vhost, r.policy));
  if (!samePolicy(current, before)) {
    if (saved.objects && samePolicy(current, policyOf(r, r.after))) return { kind: 'written' };
    return { kind: 'stale', code: 'policy-changed' };
  }
  // freshPreview(r, current) is freshPreview(r, before) here: the same policy or none.
  const fresh = await (early?.preview ?? freshPreview(r, current, broker));
  if (fresh.status !== 'answered') throw notAnswered(fresh);
  if (!samePolicy(policyOf(r, fresh.change.before), before)) return { kind: 'stale', code: 'policy-changed' };
  if (fresh.unread?.length) throw lossNotRead(fresh.unread);
  const accepted = r.preview.summary.impact;
  if (accepted && lossGrew(accepted, fresh.summary.impact)) return { kind: 'stale', code: 'loss-grew' };
  return {
    kind: 'prepared',
    prepared: {
      objects: auditObjects(fresh.objects),
      unpredictable: fresh.unpredictable.length,
      watch: { ...queuesToWatch(fresh.objects), sampledBefore: fresh.summary.impact.sampledAt },
      writtenAt: now.toISOString(),
    },
  };
}

/** The same change previewed on the broker as it is now, for the Notifier's `stale` (never throws). */
export async function stalePreview(
  r: ChangeRequest,
  broker: WorkflowBroker,
  log: Logger,
): Promise<PreviewResult> {
  try {
    const current = await broker.getPolicy(r.layer, r.vhost, r.policy);
    return await preview(previewInputOf(r, current), broker);
  } catch (err) {
    log.error({ err }, 'fresh preview failed');
    return {
      status: 'not-asked',
      why: 'broker-error',
      detail: err instanceof Error ? err.message : String(err),
      warnings: [],
      change: {
        action: writeActionOf(r),
        policy: r.policy,
        vhost: r.vhost,
        operator: r.layer === 'operator',
        before: null,
        after: r.after,
      },
    };
  }
}

/**
 * Polls the listings until every affected object reports the policy the preview predicted, or
 * the deadline passes. User policies are on the queue record (current at once); operator
 * policies only in the statistics (seconds behind), and never on exchanges.
 */
export async function verifyObjects(
  r: ChangeRequest,
  objects: readonly AuditObject[],
  broker: WorkflowBroker,
  deadlineMs: number,
): Promise<NonNullable<ChangeRequest['verification']>> {
  const operator = r.layer === 'operator';
  const expect = new Map<string, { kind: string; expected: string | null }>();
  let unchecked = 0;
  for (const o of objects) {
    if (o.candidates || (operator && o.kind === 'exchange')) unchecked++;
    else expect.set(`${o.kind === 'exchange' ? 'e' : 'q'}:${o.name}`, { kind: o.kind, expected: o.after });
  }
  const checksExchanges = [...expect.values()].some((e) => e.kind === 'exchange');
  const narrowed = readingsOf(r, broker);
  const deadline = Date.now() + deadlineMs;
  let mismatches: { name: string; kind: string; expected: string | null }[] = [];
  for (;;) {
    const reported = new Map<string, string | null | undefined>();
    const queues = async () => {
      for await (const q of narrowed.streamQueues(r.vhost, { stats: operator }))
        reported.set(`q:${q.name}`, operator ? q.operatorPolicy : q.policy);
    };
    const exchanges = async () => {
      for await (const e of broker.streamExchanges(r.vhost)) reported.set(`e:${e.name}`, e.policy);
    };
    // Both at once; the exchanges only when one is checked.
    await Promise.all([queues(), checksExchanges ? exchanges() : undefined]);
    mismatches = [];
    for (const [key, { kind, expected }] of expect) {
      // An object deleted meanwhile reports nothing and holds nothing: not a mismatch.
      if (!reported.has(key)) continue;
      const got = reported.get(key);
      if ((got ?? null) !== expected || got === undefined)
        mismatches.push({ name: key.slice(2), kind, expected });
    }
    if (mismatches.length === 0 || Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, VERIFY_INTERVAL_MS));
  }
  return { matched: mismatches.length === 0, mismatches, unchecked };
}

/**
 * The loss could not be read before the write: nothing is written. Thrown as the reading's failure,
 * so the queue retries it like any broker trouble, and a job that runs out of tries fails, said.
 */
export function lossNotRead(unread: readonly Unread[]): RabbitError {
  const [first] = unread;
  const code = RABBIT_ERROR_CODES.find((c) => c === first?.why) ?? 'broker-error';
  return new RabbitError({
    code: code as RabbitErrorCode,
    method: 'GET',
    path: `(the statistics of ${[...new Set(unread.map((u) => u.vhost))].join(', ')} before the write)`,
    reason: `the loss could not be read, nothing written: ${first?.detail ?? 'unknown'}`,
  });
}

function notAnswered(p: Exclude<PreviewResult, { status: 'answered' }>): Error {
  if (p.status === 'not-asked') {
    // Broker trouble: the queue retries it like any other failure that may pass.
    return new RabbitError({
      code: p.why === 'missing-vhost' ? 'not-found' : p.why,
      method: 'GET',
      path: `(preview of ${p.change.vhost})`,
      ...(p.detail ? { reason: p.detail } : {}),
    });
  }
  return new UnrecoverableError(
    `The broker now refuses the change: ${p.refusals.map((x) => x.message).join(' ')}`,
  );
}
