import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import type { ChangeRecord } from '../../audit/index.ts';
import type { WorkflowBroker } from '../broker.ts';
import type { FreezeStore } from '../deciding/freeze.ts';
import { heldBehind } from '../deciding/thaw.ts';
import { refusalSentence, type WorkflowRefusal } from '../errors.ts';
import { leavesFrom } from '../moves.ts';
import { environmentRefusal, freezeHolds } from '../rules.ts';
import type { RecordingServices } from '../services.ts';
import type { ChangeRequest, Failure, WorkflowEnvironment } from '../types.ts';
import { endApply } from './applyEnd.ts';
import { type EarlyReads, freshPreview, policyOf } from './applyOne.ts';
import { type AnnounceWrite, ApplySet, failureOf, isFinal } from './applySet.ts';
import type { ObserveOptions } from './observe.ts';
import { ApplyJobData } from './queue.ts';

/**
 * The apply job: approved -> applying -> applied | failed | stale.
 *
 * Here, what comes before any write: an environment that became read-only writes nothing; while
 * it is frozen the job waits (held); released, a held request waits its turn; then the move to
 * applying. Every request's writes then go one way (applySet.ts): its steps (`stepsOf`: a single
 * create, edit or delete is a set of one) with the cursor in the job's data, each re-checked and
 * written with the same write, what was written rolled back in reverse, finished in one place. A
 * single change's guard before its write (the fresh preview, `loss-grew`) and its verification
 * after it are applyOne.ts's. Every way the job ends a request (applied, failed, refused, stale)
 * is one function's, endApply (applyEnd.ts).
 */

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
  /** How long a rollback that could not finish waits before it tries again (applySet.ts). */
  readonly rollbackRetryMs?: number;
  readonly observe: ObserveOptions;
  readonly onRecorded?: (request: ChangeRequest, record: ChangeRecord) => Promise<void>;
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
    /** A single change's reads before its write (applyOne.ts), when begun early (see below). */
    let early: EarlyReads | undefined;
    // A read-only environment writes nothing, whatever was decided before it became read-only.
    const closed = this.closed(r);
    if (closed && leavesFrom('refuse', r.state)) {
      await this.refuse(r, closed, job.attemptsMade + 1, log);
      return;
    }
    if (leavesFrom('start', r.state)) {
      // A single change's guard before its write only reads, and its input is the same whenever
      // it finds the policy as approved (the only case its preview is used in): begun now, its reads
      // overlap the freeze check, the move to applying and the message's update instead of
      // following them (bench/apply). A job held by a freeze drops them; a held one (it may wait its
      // turn again and again) does not begin them. Awaited (and a failure thrown, a missing
      // broker's too) only where used.
      if (!r.held && !r.set) {
        const broker = this.deps.brokerFor(r.env);
        const ahead = r;
        early = {
          preview: (async () => freshPreview(ahead, policyOf(ahead, ahead.before), broker))(),
          policy: (async () => broker.getPolicy(ahead.layer, ahead.vhost, ahead.policy))(),
        };
        early.preview.catch(() => undefined);
        early.policy.catch(() => undefined);
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
    } else if (!leavesFrom('finish', r.state)) {
      log.info({ state: r.state }, 'apply job: request already finished; nothing done');
      return;
    }

    const applying = r;
    try {
      const steps = new ApplySet(
        {
          ...this.deps,
          rollbackRetryMs: this.deps.rollbackRetryMs ?? 2_000,
          closed: (env) => this.closed({ env }),
        },
        this.deps.brokerFor(r.env),
      );
      await steps.run(job, r, data, token, log, early);
    } catch (err) {
      if (err instanceof DelayedError) throw err;
      // Anything that may pass (network, timeout, 5xx, a Redis blip): the queue tries again after
      // its backoff, and the cursor in the job's data says where it got to.
      const final = isFinal(job, err);
      if (!final) {
        log.warn(
          { err: err instanceof Error ? err.message : String(err), attempt: job.attemptsMade + 1 },
          'apply failed; retried with backoff',
        );
        throw err;
      }
      await this.fail(applying, err, job.attemptsMade + 1, log);
      throw new UnrecoverableError(err instanceof Error ? err.message : String(err));
    }
  }

  /** The refusal of rules.ts for writing in the request's environment now, or null (an environment no longer configured writes nothing either). */
  private closed(r: Pick<ChangeRequest, 'env'>): WorkflowRefusal | null {
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
    await endApply(this.deps, r.id, { move: 'refuse', set: { failure } });
  }

  /** Failed for good after the move to applying, where ApplySet's own ending could not (an error thrown from it). */
  private async fail(r: ChangeRequest, err: unknown, attempts: number, log: Logger) {
    const failure: Failure = { ...failureOf(err), attempts, at: this.deps.now().toISOString() };
    log.error({ failure }, 'apply failed for good');
    await endApply(this.deps, r.id, { move: 'fail', set: { failure } });
  }
}
