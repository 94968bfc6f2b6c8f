// Over 400 lines: one apply's phases (writing, rolling back, finishing) share the cursor and read it together.
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { ChangeRecord } from '../../audit/index.ts';
import type { Logger } from '../../log/index.ts';
import type { Policy, PolicyAddress } from '../../policy/index.ts';
import { buildPolicySet, resolve } from '../../policy/index.ts';
import { isRabbitError } from '../../rabbit/index.ts';
import type { WorkflowBroker } from '../broker.ts';
import {
  isParameterSetStep,
  type PolicySetStep,
  parameterOf,
  type SetCursor,
  type SetProgress,
  type SetStep,
  stepAction,
  stepsOf,
  transitionOf,
  undoOf,
} from '../changeSet.ts';
import { refusalSentence, type WorkflowRefusal } from '../errors.ts';
import type { RecordingServices } from '../services.ts';
import type { ChangeRequest } from '../types.ts';
import { endApply } from './applyEnd.ts';
import { endFailure, endProgress, filedAsOne, progressOf, writingProgress } from './applyNotice.ts';
import { type EarlyReads, type Prepared, preparedOf, stalePreview, verifyObjects } from './applyOne.ts';
import { leftEntry, oneEntry, stepEntry, undoEntry } from './applyRecords.ts';
import { type ObserveOptions, observeAfterWrite } from './observe.ts';
import type { ApplyJobData } from './queue.ts';
import { type Found, leftHolding, readHeld, standingOf, stepGuard, type Touched } from './stepGuard.ts';

/**
 * The apply of every approved request's writes, as BullMQ's "process step jobs": its steps
 * (`stepsOf`: a change set's, or a single create, edit or delete as a set of one), the job's data
 * holding the cursor (`SetCursor`: the phase, how many steps are written, how many of them undone),
 * saved with `job.updateData` after every write, so a retry, a restart or another replica goes on
 * from the step after the last one written and never writes a step twice.
 *
 *   writing      before step k, the step guard reads (stepGuard.ts): a single change is re-read
 *                and previewed again (applyOne.ts: `loss-grew`; what it found saved in the job's
 *                data before the write); a set's every policy it touches is read; the steps before k must be
 *                as written, the others as planned (step k as planned, or as written by a try that
 *                stopped before it saved the cursor: then it is not written again). Anything else:
 *                stale. Just before a set's first write, its steps planned again on the broker as
 *                it is now: a loss grown beyond the approval's is stale, `loss-grew` (setLoss.ts).
 *                Just before the first write, an environment become read-only refuses it.
 *                Step k written; the cursor saved; then, before step k+1, the queues the
 *                step's patterns find polled until each reports the policy the broker's rule gives
 *                it now (a deadline; never a sleep on hope).
 *   rolling-back a write that failed for good (a 4xx, the last try), a set gone stale, or a step
 *                the broker did not take up by the deadline: the written steps undone in reverse
 *                with the same write (before and after swapped), each saved; the step whose write
 *                failed without an answer first asked (it may have gone through). Each step is
 *                read before its undo, and a read that fails is "not known", never "not written":
 *                the rollback waits and reads again, for as long as it takes, without spending the
 *                job's tries, as it does when it cannot finish (the broker gone); the request's
 *                `setProgress` (and so its message) says meanwhile which policies are written,
 *                undone, as planned, not known. A step someone else changed since is left as
 *                they made it (`left`, with what the broker holds), never overwritten blind.
 *   finished     in one place (`finish`): the audit records (a single change's one record, with
 *                its verification and observed messages; a set's, each step and each undo, or
 *                that the rollback left it, with `set`), then the request applied, or failed / stale saying what was written and
 *                undone (a single change gone stale: with a fresh preview for the Notifier); the
 *                move and what is told are applyEnd.ts's, as are the job's two endings before or
 *                around it (applyJob.ts: refused before the move to applying; `finish` itself
 *                failing on the last try with nothing written). Once a step is written, `finish`
 *                failing (the audit trail unreachable) never ends the request failed as if the
 *                broker were unchanged, nor without its records: it waits and tries again, as a
 *                rollback does (`waitAndRetry`), its records appended once each (by id).
 *
 * The loop does not ask whether it applies a single change or a set: the read before each write
 * is the step guard's (stepGuard.ts: a single change's fresh preview, a set's listings and its loss
 * planned again), and what a single change says differently (its one record, its progress, its
 * failure's words, its stale preview) is said at the edges (applyNotice.ts, `appendRecords`).
 * What a single change checks (applyOne.ts), how an apply ends (applyEnd.ts) and what it records
 * (applyRecords.ts) are modules of their own.
 */

/**
 * The bot's own write, announced just before it is made, so the watcher of `env` does not report
 * it as a change made outside the bot (src/watch/store.ts `ownWriteAnnouncer`, wired in src/bot/botChangeRequests.ts).
 */
export type AnnounceWrite = (
  env: string,
  policy: PolicyAddress,
  after: Policy | null,
  requestId: string,
) => Promise<void>;

export const START: SetCursor = { phase: 'writing', written: 0, undone: 0, writtenAt: [], undoneAt: [] };

export interface ApplySetDeps extends RecordingServices {
  readonly announceWrite: AnnounceWrite;
  /** How long to wait for the broker to report a written step's policy on its queues. */
  readonly verifyDeadlineMs: number;
  /**
   * How long what must finish and could not (a rollback, the records of what was written) waits
   * before it tries again: doubled for each try the job has spent, at most a minute.
   */
  readonly rollbackRetryMs: number;
  /** Told once the records are appended, before the request is marked applied (a time box scheduled: src/bot/bot.ts). */
  readonly onRecorded?: (request: ChangeRequest, record: ChangeRecord) => Promise<void>;
  /** How a single change's queues are watched after its write, for the audit's `observed` (observe.ts). */
  readonly observe: ObserveOptions;
  /** The refusal of rules.ts for writing in `env` now, or null: asked again just before the first write. */
  readonly closed: (env: string) => WorkflowRefusal | null;
}

const POLL_MS = 250;

/** The one write of a step: its after written, or the policy (or parameter) deleted. A rollback writes the undo. */
export async function writeStep(broker: WorkflowBroker, step: SetStep): Promise<void> {
  if (isParameterSetStep(step)) {
    const after = parameterOf(step, 'after');
    if (after) await broker.putParameter(after);
    else await broker.deleteParameter(step.component, step.vhost, step.name);
    return;
  }
  const { after } = transitionOf(step);
  if (after) await broker.putPolicy(step.layer, after);
  else await broker.deletePolicy(step.layer, step.vhost, step.name);
}

/**
 * A policy's write announced to the watcher of `env` just before it is made (parameters are not
 * what the watcher compares).
 */
async function announce(deps: ApplySetDeps, env: string, step: SetStep, requestId: string) {
  if (!isParameterSetStep(step)) await deps.announceWrite(env, step, transitionOf(step).after, requestId);
}

export class ApplySet {
  constructor(
    private readonly deps: ApplySetDeps,
    private readonly broker: WorkflowBroker,
  ) {}

  /**
   * Applies the request's steps (`stepsOf`: a single change is a set of one) from the cursor in
   * the job's data. `early`: the single change's reads the job began before it moved the request
   * to applying (applyJob.ts).
   */
  async run(
    job: Job,
    r: ChangeRequest,
    data: ApplyJobData,
    token: string | undefined,
    log: Logger,
    early?: EarlyReads,
  ) {
    const steps = stepsOf(r);
    const guard = stepGuard(r, steps, this.broker, this.deps.now, early);
    let c: SetCursor = data.set ?? START;
    let prepared = preparedOf(data);
    const save = async (next: SetCursor) => {
      c = next;
      await job.updateData({ ...prepared, requestId: r.id, set: c });
    };
    const stop = (because: NonNullable<SetCursor['because']>) =>
      save({ ...c, phase: 'rolling-back', because });
    // A try that starts after a step was written does not know that the broker took it up (the
    // try before may have stopped while it polled): it polls for it before the next write.
    let resumed = c.phase === 'writing' && c.written > 0;
    let told = false;
    while (c.phase === 'writing' && c.written < steps.length) {
      const k = c.written;
      const step = steps[k] as SetStep;
      let found: Found;
      try {
        found = await guard.before(k, prepared);
      } catch (err) {
        if (!isFinal(job, err)) throw err; // the queue tries again
        await stop({ kind: 'failed', step: k, ...failureOf(err) });
        break;
      }
      if (found.kind === 'stale') {
        log.warn({ why: found.code }, 'not applied: stale');
        await stop({ kind: 'stale', step: 0, code: found.code, message: STALE_WHY[found.code] });
        break;
      }
      const { states, read } = found;
      if (found.prepared) {
        prepared = found.prepared;
        await save(c);
      }
      const off = states.findIndex((s, i) =>
        i < k ? s !== 'written' : i > k ? s !== 'as-planned' : s === 'changed',
      );
      if (off >= 0) {
        const s = steps[off] as SetStep;
        log.warn({ step: off, policy: s.name }, 'set stale: a policy it touches is not as planned');
        await stop({
          kind: 'stale',
          step: off,
          code: 'policy-changed',
          message: `${s.name} in ${s.vhost} is not as planned (changed outside this request)`,
        });
        break;
      }
      if (resumed && read) {
        resumed = false;
        const last = steps[k - 1] as SetStep;
        const taken = await this.takenUpOrStop(job, steps.slice(0, k), last, k - 1, read, stop);
        if (!taken) break;
      }
      // The loss, asked again on the broker as it is now just before the first write (a set's planned
      // again: setLoss.ts; a single change's was in its fresh preview), and only then: with nothing
      // written (every step as planned), it measures from the start the approval measured from.
      // Once a step is written (saved, or written by a try that stopped before it saved the cursor:
      // step 0 found `written`) it is not asked again: the try that wrote it asked it first, a plan
      // now would measure from a broker the set has half changed (its own steps' loss already done),
      // and a stale there would leave the set to a rollback instead of finishing what the approval covered.
      if (k === 0 && states[0] === 'as-planned') {
        let grew: boolean;
        try {
          grew = await guard.lossGrew();
        } catch (err) {
          if (!isFinal(job, err)) throw err; // the queue tries again
          await stop({ kind: 'failed', step: 0, ...failureOf(err) });
          break;
        }
        if (grew) {
          log.warn({ why: 'loss-grew' }, 'not applied: stale');
          await stop({ kind: 'stale', step: 0, code: 'loss-grew', message: STALE_WHY['loss-grew'] });
          break;
        }
      }
      if (states[k] !== 'written') {
        // Again just before the first write: the mode is the configuration's now, not the job's start's.
        const closed = k === 0 ? this.deps.closed(r.env) : null;
        if (closed) {
          await stop({ kind: 'refused', step: 0, code: closed.code, message: refusalSentence(closed) });
          break;
        }
        try {
          if (c.attempted !== k) await save({ ...c, attempted: k });
          await announce(this.deps, r.env, step, r.id);
          await writeStep(this.broker, step);
        } catch (err) {
          if (!isFinal(job, err)) {
            // The queue tries again; meanwhile the request says the step's write has no known outcome.
            await this.writingProgress(r, steps, c, log, failureOf(err).message, [k]);
            throw err;
          }
          await stop({
            kind: 'failed',
            step: k,
            ...failureOf(err),
            ...(isRefusal(err) ? { writeRefused: true as const } : {}),
          });
          break;
        }
      }
      await save({ ...c, written: k + 1, writtenAt: [...c.writtenAt, this.deps.now().toISOString()] });
      // A try before this one said the step was not known: said again, now known.
      if (r.setProgress?.unknown?.length && !told) {
        told = true;
        await this.writingProgress(r, steps, c, log);
      }
      log.info({ step: k, of: steps.length, policy: step.name, action: stepAction(step) }, 'step written');
      // The next write waits until the broker runs this one: its safety was planned on it.
      // (A set of one has no next write, and so no listing `read`.)
      resumed = false;
      if (read && k + 1 < steps.length) {
        const taken = await this.takenUpOrStop(job, steps.slice(0, k + 1), step, k, read, stop);
        if (!taken) break;
      }
    }
    if (c.phase === 'rolling-back') await this.rollBack(job, r, steps, c, save, token, log);
    try {
      await this.finish(r, steps, c, prepared, job.attemptsMade + 1, log);
    } catch (err) {
      // Nothing written: the job's tries decide (applyJob.ts ends it as failed on the last).
      if (c.written === 0) throw err;
      // Written: the broker changed, so the request cannot end failed as if it had not, nor
      // without its records. The ending (its records appended again, idempotent by id) is tried
      // again later, for as long as it takes, spending none of the job's tries, as a rollback.
      await this.waitAndRetry(
        job,
        token,
        log,
        err,
        { written: c.written },
        'records not appended; retried',
        () => this.writingProgress(r, steps, c, log, failureOf(err).message),
      );
    }
  }

  /**
   * What must finish and could not (a rollback, the records of what was written): told where
   * things stand (`tell`, itself allowed to fail), then the job delayed by `rollbackRetryMs` and
   * tried again; moveToDelayed spends none of the job's tries.
   */
  private async waitAndRetry(
    job: Job,
    token: string | undefined,
    log: Logger,
    err: unknown,
    fields: Record<string, unknown>,
    what: string,
    tell: () => Promise<void>,
  ): Promise<never> {
    const wait = Math.min(60_000, this.deps.rollbackRetryMs * 2 ** Math.min(job.attemptsMade, 6));
    log.error({ ...fields, err: err instanceof Error ? err.message : String(err), waitMs: wait }, what);
    await tell().catch((e: unknown) =>
      log.warn({ err: e instanceof Error ? e.message : String(e) }, 'progress not saved'),
    );
    await job.moveToDelayed(Date.now() + wait, token);
    throw new DelayedError();
  }

  /**
   * `takenUp`, and where it is not (by the deadline, or the broker failing on the job's last try)
   * the set stopped at `index` for a rollback: false. A failure that may pass is thrown (the queue
   * tries again; that try polls for the step again before its next write).
   */
  private async takenUpOrStop(
    job: Job,
    written: readonly SetStep[],
    step: SetStep,
    index: number,
    read: Touched,
    stop: (because: NonNullable<SetCursor['because']>) => Promise<void>,
  ): Promise<boolean> {
    let taken: boolean;
    try {
      taken = await this.takenUp(written, step, read);
    } catch (err) {
      if (!isFinal(job, err)) throw err;
      await stop({ kind: 'failed', step: index, ...failureOf(err) });
      return false;
    }
    if (!taken)
      await stop({
        kind: 'not-taken-up',
        step: index,
        code: 'not-taken-up',
        message: `the broker did not report ${step.name} on its queues within ${this.deps.verifyDeadlineMs} ms`,
      });
    return taken;
  }

  /**
   * Polls the queues the step moves (those it now governs or governed) until each reports the policy the broker's rule
   * gives it with the steps so far written (ties and patterns this bot cannot read left out; an
   * operator policy through the statistics, which lag). False at the deadline.
   */
  private async takenUp(written: readonly SetStep[], step: SetStep, before: Touched): Promise<boolean> {
    // A parameter governs no object: nothing reports it.
    if (isParameterSetStep(step)) return true;
    if (step.verify) return this.reported(step.vhost, step.verify);
    const layerOf = (layer: 'user' | 'operator') => {
      const list = new Map((before.list(layer, step.vhost) ?? []).map((p) => [p.name, p]));
      for (const s of written) {
        if (isParameterSetStep(s) || s.vhost !== step.vhost || s.layer !== layer) continue;
        const after = transitionOf(s).after;
        if (after) list.set(s.name, after);
        else list.delete(s.name);
      }
      return [...list.values()];
    };
    const version = (await this.broker.overview()).version;
    const expected = buildPolicySet(layerOf('user'), layerOf('operator'), version);
    const operator = step.layer === 'operator';
    const deadline = Date.now() + this.deps.verifyDeadlineMs;
    for (;;) {
      let pending = 0;
      for await (const q of this.broker.streamQueues(step.vhost, { stats: operator })) {
        // The queues this step moves: those it should now govern, and those it governed.
        const got = (operator ? q.operatorPolicy : q.policy) ?? null;
        const layer = resolve(expected, q.name, q.kind)[step.layer];
        if (!layer.decided || layer.candidates.length > 1) continue;
        const want = layer.candidates[0]?.name ?? null;
        if ((want === step.name || got === step.name) && got !== want) pending++;
      }
      if (pending === 0) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Polls until each object reports the policies the plan expects of it after the step (deleted ones aside), or the deadline. */
  private async reported(vhost: string, objects: NonNullable<PolicySetStep['verify']>): Promise<boolean> {
    if (objects.length === 0) return true;
    const want = new Map(objects.map((o) => [`${o.kind === 'exchange' ? 'e' : 'q'}:${o.name}`, o]));
    const stats = objects.some((o) => o.kind !== 'exchange' && o.operatorPolicy !== null);
    const exchanges = objects.some((o) => o.kind === 'exchange');
    const deadline = Date.now() + this.deps.verifyDeadlineMs;
    for (;;) {
      let pending = 0;
      for await (const q of this.broker.streamQueues(vhost, { stats })) {
        const o = want.get(`q:${q.name}`);
        if (!o) continue;
        if ((q.policy ?? null) !== o.policy || (stats && (q.operatorPolicy ?? null) !== o.operatorPolicy))
          pending++;
      }
      if (exchanges)
        for await (const e of this.broker.streamExchanges(vhost)) {
          const o = want.get(`e:${e.name}`);
          if (o && (e.policy ?? null) !== o.policy) pending++;
        }
      if (pending === 0) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /**
   * The written steps undone in reverse (see the head). What the broker holds is read before each
   * undo, and a read that fails says nothing: the step's state is not known, never taken for "not
   * written" (that left a write with no record), and the rollback waits and reads again for as
   * long as it takes, the request saying meanwhile which step is not known. A step someone else
   * changed since is left as they made it, never overwritten blind, and recorded as left.
   */
  private async rollBack(
    job: Job,
    r: ChangeRequest,
    steps: readonly SetStep[],
    start: SetCursor,
    save: (c: SetCursor) => Promise<void>,
    token: string | undefined,
    log: Logger,
  ) {
    let c = start;
    const waitFor = (err: unknown, step: number, what: string): Promise<never> =>
      this.waitAndRetry(job, token, log, err, { step }, what, () =>
        this.progress(r, steps, c, failureOf(err).message, [step]),
      );
    // The write that failed may have gone through all the same (its answer lost): then it is undone
    // too. One never begun, or that the broker refused, did not.
    const failedAt = c.because?.kind === 'failed' && !c.because.writeRefused ? c.because.step : undefined;
    if (
      failedAt === c.written &&
      c.attempted === failedAt &&
      c.undone === 0 &&
      !c.left?.some((l) => l.step === failedAt)
    ) {
      const step = steps[failedAt] as SetStep;
      let now: Awaited<ReturnType<typeof readHeld>>;
      try {
        now = await readHeld(this.broker, step);
      } catch (err) {
        return waitFor(
          err,
          failedAt,
          'rollback: whether the failed write went through is not known; read again',
        );
      }
      const found = standingOf(step, now);
      if (found === 'written') {
        c = { ...c, written: c.written + 1, writtenAt: [...c.writtenAt, this.deps.now().toISOString()] };
        await save(c);
      } else if (found === 'changed') {
        log.warn(
          { step: failedAt, policy: step.name, now: leftHolding(now) },
          'rollback: changed by someone else; left',
        );
        c = { ...c, left: [...(c.left ?? []), { step: failedAt, holds: leftHolding(now) }] };
        await save(c);
      }
    }
    while (c.undone < c.written) {
      const j = c.written - 1 - c.undone;
      const step = steps[j] as SetStep;
      let left = c.left;
      let leftAlone = false;
      try {
        const now = await readHeld(this.broker, step);
        const found = standingOf(step, now);
        // Undone already by a try that stopped before it saved; or changed by someone else since:
        // then it is left as they made it (said in the outcome and recorded), never overwritten blind.
        if (found === 'written') {
          const undo = undoOf(step);
          await announce(this.deps, r.env, undo, r.id);
          await writeStep(this.broker, undo);
        } else if (found === 'changed') {
          log.warn(
            { step: j, policy: step.name, now: leftHolding(now) },
            'rollback: changed by someone else; left',
          );
          left = [...(left ?? []), { step: j, holds: leftHolding(now) }];
          leftAlone = true;
        }
      } catch (err) {
        // The rollback must finish: told where things stand (this step not known), then tried again later.
        await waitFor(err, j, 'rollback interrupted; retried');
      }
      c = {
        ...c,
        undone: c.undone + 1,
        undoneAt: [...c.undoneAt, this.deps.now().toISOString()],
        ...(left ? { left } : {}),
      };
      await save(c);
      log.info({ step: j }, leftAlone ? 'set: step left as found' : 'set: step undone');
    }
  }

  /**
   * The request's `setProgress` and its message: each policy's state while the apply waits (why:
   * `retrying`), `unknown` the steps whose state is not known then.
   */
  private async progress(
    r: ChangeRequest,
    steps: readonly SetStep[],
    c: SetCursor,
    retrying?: string,
    unknown?: readonly number[],
  ) {
    await this.tell(r, progressOf(steps.length, c, retrying, this.deps.now(), unknown));
  }

  /** The steps' progress while writing (applyNotice.ts: none for a single change), its failure logged: what is told never stops the apply. */
  private async writingProgress(
    r: ChangeRequest,
    steps: readonly SetStep[],
    c: SetCursor,
    log: Logger,
    retrying?: string,
    unknown?: readonly number[],
  ) {
    const setProgress = writingProgress(r, steps.length, c, this.deps.now(), retrying, unknown);
    if (!setProgress) return;
    await this.tell(r, setProgress).catch((e: unknown) =>
      log.warn({ err: e instanceof Error ? e.message : String(e) }, 'progress not saved'),
    );
  }

  private async tell(r: ChangeRequest, setProgress: SetProgress) {
    const moved = await this.deps.store.transition(r.id, { move: 'progress', set: { setProgress } });
    if (moved.kind === 'ok') await this.deps.notify.stateChanged(moved.request);
  }

  /**
   * The apply's audit records (applyRecords.ts): a single change written has its one record, with
   * its verification and what its queues' messages did; anything else, each written step, each
   * undo or that it was left, as a set's.
   */
  private async appendRecords(
    r: ChangeRequest,
    steps: readonly SetStep[],
    c: SetCursor,
    prepared: Prepared,
    at: string,
  ): Promise<{ records: ChangeRecord[]; verification: NonNullable<ChangeRequest['verification']> }> {
    if (filedAsOne(r) && c.phase === 'writing') {
      const verification = await verifyObjects(
        r,
        prepared.objects ?? [],
        this.broker,
        this.deps.verifyDeadlineMs,
      );
      // A job saved before the bot watched the messages has no plan: its record has no `observed`.
      const observed =
        prepared.watch &&
        (await observeAfterWrite(
          this.broker,
          r.vhost,
          prepared.watch,
          new Date(prepared.writtenAt ?? at),
          this.deps.observe,
        ));
      const record = await this.deps.audit.append(oneEntry(r, prepared, verification.matched, observed, at));
      return { records: [record], verification };
    }
    const records: ChangeRecord[] = [];
    for (let i = 0; i < c.written; i++)
      records.push(
        await this.deps.audit.append(stepEntry(r, steps, i, c.writtenAt[i] ?? c.writtenAt.at(-1) ?? at)),
      );
    const left = new Map((c.left ?? []).map((l) => [l.step, l.holds]));
    for (let n = 0; n < c.undone; n++) {
      const i = c.written - 1 - n;
      const when = c.undoneAt[n] ?? at;
      records.push(
        await this.deps.audit.append(
          left.has(i) ? leftEntry(r, steps, i, left.get(i) ?? null, when) : undoEntry(r, steps, i, when),
        ),
      );
    }
    // A write whose outcome was not known, found changed by someone else: left, not written.
    for (const l of c.left ?? [])
      if (l.step >= c.written)
        records.push(await this.deps.audit.append(leftEntry(r, steps, l.step, l.holds, at)));
    return { records, verification: { matched: true, mismatches: [], unchecked: 0 } };
  }

  /**
   * Finished in one place: the records, then the request's last state. A single change's record
   * is the one users know (`a-` + its id, the objects its fresh preview found, whether they report
   * it, what its queues' messages did); a set's, one per step and one per undo, each with `set`.
   */
  private async finish(
    r: ChangeRequest,
    steps: readonly SetStep[],
    c: SetCursor,
    prepared: Prepared,
    attempts: number,
    log: Logger,
  ) {
    const at = this.deps.now().toISOString();
    const { records, verification } = await this.appendRecords(r, steps, c, prepared, at);
    const progress = endProgress(r, steps.length, c, this.deps.now());
    if (c.phase === 'writing') {
      const last = records.at(-1);
      // Before the move to applied: a retry after a crash here calls it again (idempotent callers).
      if (last) await this.deps.onRecorded?.(r, last);
      const ended = await endApply(this.deps, r.id, {
        move: 'finish',
        set: { appliedAt: last?.at ?? at, ...(last ? { auditId: last.id } : {}), ...progress, verification },
        ...(last ? { record: last } : {}),
      });
      if (ended)
        log.info(
          { steps: steps.length, auditId: last?.id, matched: verification.matched },
          'applied and recorded',
        );
      return;
    }
    const because = c.because;
    if (because?.kind === 'stale') {
      const ended = await endApply(this.deps, r.id, {
        move: 'markStale',
        set: { staleBecause: because.code === 'loss-grew' ? 'loss-grew' : 'policy-changed', ...progress },
        ...(filedAsOne(r) ? { fresh: () => stalePreview(r, this.broker, log) } : {}),
      });
      if (ended)
        log.warn({ written: c.written, undone: c.undone, because }, 'stale; what was written rolled back');
      return;
    }
    const failure = endFailure(r, steps, c, attempts, at);
    const ended = await endApply(this.deps, r.id, {
      // Refused: the environment took no writes before the first one (rules.ts); else the write failed.
      move: because?.kind === 'refused' ? 'refuse' : 'fail',
      set: { failure, ...progress },
    });
    if (ended)
      log.warn(
        { written: c.written, undone: c.undone, because },
        'not applied; what was written rolled back',
      );
  }
}

const STALE_WHY = {
  'policy-changed': 'the policy is not as approved (changed outside this request)',
  'loss-grew': 'the change would now remove more than its approval accepted',
} as const;

/** Final: a 4xx, a change the broker now refuses, or the last try; anything else may pass. */
export function isFinal(job: Job, err: unknown): boolean {
  const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  return last || err instanceof UnrecoverableError || (isRabbitError(err) && !err.isRetryable);
}

/** The broker's refusal (a 4xx): it answered, so what it refused was not done. */
function isRefusal(err: unknown): boolean {
  return isRabbitError(err) && err.status !== undefined && err.status >= 400 && err.status < 500;
}

/** What a failure says: the broker's code and reason, `refused` for a change it now refuses, else `internal`. */
export function failureOf(err: unknown): { code: string; message: string; status?: number } {
  if (isRabbitError(err))
    return {
      code: err.code,
      message: err.reason ?? err.message,
      ...(err.status !== undefined ? { status: err.status } : {}),
    };
  if (err instanceof UnrecoverableError) return { code: 'refused', message: err.message };
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}
