import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import { type Observation, queuesToWatch } from '../audit/observed.ts';
import type { AuditObject, ChangeRecord } from '../audit/types.ts';
import { samePolicy, writeActionOf } from '../policy/compare.ts';
import { auditObjects } from '../policy/diff.ts';
import { lossGrew } from '../policy/impact.ts';
import type { Policy } from '../policy/types.ts';
import { type PreviewBroker, type PreviewInput, type PreviewResult, preview } from '../preview/preview.ts';
import { isRabbitError, RabbitError } from '../rabbit/index.ts';
import { narrowedTo } from '../rabbit/inventory.ts';
import { PAGE_MAX } from '../rabbit/listings.ts';
import { type AnnounceWrite, ApplySet, approversOf, breakGlassOf } from './applySet.ts';
import type { WorkflowBroker } from './broker.ts';
import { refusalSentence, type WorkflowRefusal } from './errors.ts';
import type { FreezeStore } from './freeze.ts';
import { type ObserveOptions, observeAfterWrite } from './observe.ts';
import { ApplyJobData } from './queue.ts';
import { environmentRefusal, freezeHolds } from './rules.ts';
import type { RecordingServices } from './services.ts';
import { heldBehind } from './thaw.ts';
import type { ChangeRequest, Failure, WorkflowEnvironment } from './types.ts';

/**
 * The apply job: approved -> applying -> applied | failed | stale.
 *
 * 1. Re-read the policy. The broker has no compare-and-set, so if it is not what the approver
 *    saw (or, for a create, the name is now taken) nothing is written: stale, with a fresh preview.
 * 2. Re-run the preview on the broker as it is now (policies and every object; begun beside step 1,
 *    since it only reads, and used when step 1 finds the policy as approved): the audit records
 *    what each object loses from the broker as it was, not as it was when the request was filed.
 *    If the change would now remove more messages than the approval accepted (or touch another
 *    queue), nothing is written: stale, with the fresh numbers, for the approvers to decide again.
 * 3. Write the whole policy, or delete it. Network trouble, timeouts and 5xx are retried by the
 *    queue with backoff; a 4xx is final (UnrecoverableError) with the broker's reason.
 * 4. Poll until the affected objects report the expected policy (the statistics lag), up to a
 *    deadline, and record whether they match the preview; then poll the touched queues' messages
 *    (observe.ts) until they show what the preview predicted, or the deadline.
 * 5. Append the audit record (once per request): predicted (the loss totals the approvers
 *    accepted) and observed (each touched queue's messages before and after); mark it applied.
 *
 * A retry that finds the policy already as approved (its write went through before a failure or a
 * restart) goes on from step 4 with what step 2 saved in the job.
 */

const VERIFY_INTERVAL_MS = 500;
/** How soon a held request behind another held one looks again whether it is its turn. */
const HELD_TURN_MS = 250;

export type { AnnounceWrite } from './applySet.ts';

/** What one run of the job works with: the worker's stores and clients (worker.ts). */
export interface ApplyJobDeps extends RecordingServices {
  readonly brokerFor: (env: string) => WorkflowBroker;
  readonly environments: readonly Pick<WorkflowEnvironment, 'name' | 'mode'>[];
  readonly announceWrite: AnnounceWrite;
  readonly freezes: FreezeStore;
  readonly verifyDeadlineMs: number;
  /** How long a set's rollback that could not finish waits before it tries again (applySet.ts). */
  readonly rollbackRetryMs?: number;
  readonly observe: ObserveOptions;
  readonly onRecorded?: (request: ChangeRequest, record: ChangeRecord) => Promise<void>;
}

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

const policyOf = (r: ChangeRequest, fields: ChangeRequest['before']): Policy | null =>
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
function freshPreview(r: ChangeRequest, current: Policy | null, broker: WorkflowBroker) {
  return preview(previewInputOf(r, current), readingsOf(r, broker));
}

export class ApplyJob {
  constructor(private readonly deps: ApplyJobDeps) {}

  async run(job: Job<ApplyJobData>, token?: string): Promise<void> {
    const data = ApplyJobData.parse(job.data);
    const { store, log: parentLog, notify } = this.deps;
    let r = await store.get(data.requestId);
    if (!r) {
      parentLog.warn({ requestId: data.requestId }, 'apply job for an unknown request; nothing done');
      return;
    }
    const log = parentLog.child({ requestId: r.id, env: r.env, vhost: r.vhost, policy: r.policy });
    const before = policyOf(r, r.before);
    const after = policyOf(r, r.after);
    /** Step 2's preview when begun before step 1 (see below); otherwise it starts after it. */
    let early: Promise<PreviewResult> | undefined;
    /** Step 1's read, begun with step 2's for the same reason. */
    let earlyPolicy: Promise<Policy | null> | undefined;
    // A read-only environment writes nothing, whatever was decided before it became read-only.
    const closed = this.closed(r);
    if (closed && (r.state === 'approved' || r.state === 'applying')) {
      await this.refuse(r, closed, job.attemptsMade + 1, log);
      return;
    }
    if (r.state === 'approved') {
      // Steps 1 and 2 only read, and step 2's input is the same whenever step 1 finds the policy as
      // approved (the only case it is used in): begun now, they overlap the freeze check, the move
      // to applying and the message's update instead of following them (bench/apply). A job held
      // by a freeze drops them; a held one (it may wait its turn again and again) does not begin them.
      // Awaited (and a failure thrown, a missing broker's too) only where used.
      if (!r.held) {
        early = (async () => freshPreview(r, before, this.deps.brokerFor(r.env)))();
        early.catch(() => undefined);
        earlyPolicy = (async () => this.deps.brokerFor(r.env).getPolicy(r.layer, r.vhost, r.policy))();
        earlyPolicy.catch(() => undefined);
      }
      // 0. While its environment is frozen, the job waits (delayed) until the freeze ends; lifting
      //    it runs the job at once (releaseHeld). The request's message says it is held, once.
      //    Whom a freeze holds is rules.ts's (freezeHolds: not a break-glass change).
      const freeze = freezeHolds(r) ? await this.deps.freezes.current(r.env, this.deps.now()) : undefined;
      if (freeze) {
        if (await store.hold(r.id, freeze)) {
          log.info({ until: freeze.until }, 'approved while frozen: held until the freeze ends');
          const held = await store.get(r.id);
          if (held) await notify.stateChanged(held);
        }
        await job.moveToDelayed(Date.parse(freeze.until), token);
        throw new DelayedError();
      }
      //    Released, a held request waits its turn: those approved before it go first.
      if (await heldBehind(store, r)) {
        await job.moveToDelayed(Date.now() + HELD_TURN_MS, token);
        throw new DelayedError();
      }
      const moved = await store.transition(r.id, {
        move: 'start',
        set: { applyingAt: this.deps.now().toISOString() },
      });
      if (moved.kind !== 'ok') {
        log.info(
          { state: moved.kind === 'missing' ? 'missing' : moved.request.state },
          'not applying: moved',
        );
        return;
      }
      r = moved.request;
      await notify.stateChanged(r);
    } else if (r.state !== 'applying') {
      log.info({ state: r.state }, 'apply job: request already finished; nothing done');
      return;
    }

    const broker = this.deps.brokerFor(r.env);
    if (r.set) {
      const set = new ApplySet({ ...this.deps, rollbackRetryMs: this.deps.rollbackRetryMs ?? 2_000 }, broker);
      await set.run(job, r, data.set, token, log);
      return;
    }
    try {
      const current = await (earlyPolicy ?? broker.getPolicy(r.layer, r.vhost, r.policy));
      let saved = data;
      if (!samePolicy(current, before)) {
        if (!(data.objects && samePolicy(current, after))) {
          await this.stale(r, current, broker, log);
          return;
        }
        log.info('the policy already is as approved (an earlier try wrote it); verifying');
      } else {
        // previewInputOf(r, current) is previewInputOf(r, before) here: the same policy or none.
        const fresh = await (early ?? freshPreview(r, current, broker));
        if (fresh.status !== 'answered') throw notAnswered(fresh);
        if (!samePolicy(policyOf(r, fresh.change.before), before)) {
          await this.stale(r, policyOf(r, fresh.change.before), broker, log);
          return;
        }
        // The approval accepted a loss: if the change would now remove more (more messages,
        // another queue), it is not what was approved.
        const accepted = r.preview.summary.impact;
        if (accepted && lossGrew(accepted, fresh.summary.impact)) {
          await this.stale(r, current, broker, log, 'loss-grew');
          return;
        }
        saved = {
          requestId: r.id,
          objects: auditObjects(fresh.objects),
          unpredictable: fresh.unpredictable.length,
          watch: { ...queuesToWatch(fresh.objects), sampledBefore: fresh.summary.impact.sampledAt },
          writtenAt: this.deps.now().toISOString(),
        };
        // Both before the write, neither needs the other: one wait for Redis, not two.
        await Promise.all([
          job.updateData(saved),
          this.deps.announceWrite(r.env, { layer: r.layer, vhost: r.vhost, name: r.policy }, after, r.id),
        ]);
        // Again just before the write: the mode is the configuration's now, not the job's start's.
        const closedNow = this.closed(r);
        if (closedNow) {
          await this.refuse(r, closedNow, job.attemptsMade + 1, log);
          return;
        }
        if (after) await broker.putPolicy(r.layer, after);
        else await broker.deletePolicy(r.layer, r.vhost, r.policy);
        log.info({ action: writeActionOf(r) }, 'policy written');
      }
      const verification = await this.verify(r, saved.objects ?? [], broker);
      // A job saved before the bot watched the messages has no plan: its record has no `observed`.
      const observed =
        saved.watch &&
        (await observeAfterWrite(
          broker,
          r.vhost,
          saved.watch,
          new Date(saved.writtenAt ?? this.deps.now().toISOString()),
          this.deps.observe,
        ));
      await this.record(r, saved, verification, observed, log);
    } catch (err) {
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      // Final: a 4xx, a change the broker now refuses, or the last try. Anything else (network,
      // timeout, 5xx, a Redis blip) may pass: the queue tries again after its backoff.
      const final = last || err instanceof UnrecoverableError || (isRabbitError(err) && !err.isRetryable);
      if (!final) {
        log.warn(
          { err: err instanceof Error ? err.message : String(err), attempt: job.attemptsMade + 1 },
          'apply failed; retried with backoff',
        );
        throw err;
      }
      await this.fail(r, err, job.attemptsMade + 1, log);
      throw new UnrecoverableError(err instanceof Error ? err.message : String(err));
    }
  }

  private async stale(
    r: ChangeRequest,
    current: Policy | null,
    broker: WorkflowBroker,
    log: Logger,
    why: NonNullable<ChangeRequest['staleBecause']> = 'policy-changed',
  ) {
    log.warn({ current, why }, 'not applied: stale');
    const moved = await this.deps.store.transition(r.id, {
      move: 'markStale',
      set: { staleBecause: why },
    });
    if (moved.kind !== 'ok') return;
    let fresh: PreviewResult;
    try {
      fresh = await preview(previewInputOf(r, current), broker);
    } catch (err) {
      log.error({ err }, 'fresh preview failed');
      fresh = {
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
    await this.deps.notify.stateChanged(moved.request);
    await this.deps.notify.stale(moved.request, fresh);
  }

  /** The refusal of rules.ts for writing in the request's environment now, or null (an environment no longer configured writes nothing either). */
  private closed(r: ChangeRequest): WorkflowRefusal | null {
    const env = this.deps.environments.find((e) => e.name === r.env);
    return environmentRefusal(env ?? { name: r.env, mode: 'read-only' }, 'applied');
  }

  /** Not applied, for good, because of `refusal`: the request says so (failed, with the refusal's code and sentence). */
  private async refuse(r: ChangeRequest, refusal: WorkflowRefusal, attempts: number, log: Logger) {
    const failure: Failure = {
      code: refusal.code,
      message: refusalSentence(refusal),
      attempts,
      at: this.deps.now().toISOString(),
    };
    log.warn({ failure }, 'not applied: refused');
    const moved = await this.deps.store.transition(r.id, {
      move: 'refuse',
      set: { failure },
    });
    if (moved.kind !== 'ok') return;
    await this.deps.notify.stateChanged(moved.request);
    await this.deps.notify.failed(moved.request);
  }

  private async fail(r: ChangeRequest, err: unknown, attempts: number, log: Logger) {
    const failure: Failure = {
      code: isRabbitError(err) ? err.code : 'internal',
      message: isRabbitError(err)
        ? (err.reason ?? err.message)
        : err instanceof Error
          ? err.message
          : String(err),
      ...(isRabbitError(err) && err.status !== undefined ? { status: err.status } : {}),
      attempts,
      at: this.deps.now().toISOString(),
    };
    log.error({ failure }, 'apply failed for good');
    const moved = await this.deps.store.transition(r.id, {
      move: 'fail',
      set: { failure },
    });
    if (moved.kind !== 'ok') return;
    await this.deps.notify.stateChanged(moved.request);
    await this.deps.notify.failed(moved.request);
  }

  /**
   * Polls the listings until every affected object reports the policy the preview predicted, or
   * the deadline passes. User policies are on the queue record (current at once); operator
   * policies only in the statistics (seconds behind), and never on exchanges.
   */
  private async verify(r: ChangeRequest, objects: readonly AuditObject[], broker: WorkflowBroker) {
    const operator = r.layer === 'operator';
    const expect = new Map<string, { kind: string; expected: string | null }>();
    let unchecked = 0;
    for (const o of objects) {
      if (o.candidates || (operator && o.kind === 'exchange')) unchecked++;
      else expect.set(`${o.kind === 'exchange' ? 'e' : 'q'}:${o.name}`, { kind: o.kind, expected: o.after });
    }
    const checksExchanges = [...expect.values()].some((e) => e.kind === 'exchange');
    const narrowed = readingsOf(r, broker);
    const deadline = Date.now() + this.deps.verifyDeadlineMs;
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

  private async record(
    r: ChangeRequest,
    saved: ApplyJobData,
    verification: NonNullable<ChangeRequest['verification']>,
    observed: Observation | undefined,
    log: Logger,
  ) {
    const at = this.deps.now().toISOString();
    const record = await this.deps.audit.append({
      id: `a-${r.id}`,
      at,
      env: r.env,
      vhost: r.vhost,
      policy: r.policy,
      operator: r.layer === 'operator',
      action: r.action === 'import' ? writeActionOf(r) : r.action,
      requestId: r.id,
      requester: r.requester,
      ...approversOf(r),
      ...breakGlassOf(r),
      requestedAt: r.createdAt,
      ...(r.decision ? { approvedAt: r.decision.at } : {}),
      appliedAt: at,
      before: r.before,
      after: r.after,
      objects: saved.objects ?? [],
      unpredictable: saved.unpredictable ?? 0,
      matchedPreview: verification.matched,
      ...(r.preview.summary.impact ? { impact: r.preview.summary.impact.totals } : {}),
      ...(observed ? { observed } : {}),
      ...(r.revertOf ? { revertOf: r.revertOf } : {}),
    });
    // Before the move to applied: a retry after a crash here calls it again (idempotent callers).
    await this.deps.onRecorded?.(r, record);
    const moved = await this.deps.store.transition(r.id, {
      move: 'finish',
      set: { appliedAt: record.at, auditId: record.id, verification },
    });
    if (moved.kind !== 'ok') return;
    log.info({ auditId: record.id, matched: verification.matched }, 'applied and recorded');
    await this.deps.notify.stateChanged(moved.request);
    await this.deps.notify.applied(moved.request, record);
  }
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
