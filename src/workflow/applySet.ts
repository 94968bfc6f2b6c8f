import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { ChangeEntry, ChangeRecord } from '../audit/types.ts';
import type { Logger } from '../log.ts';
import type { PolicyAddress } from '../policy/compare.ts';
import { actionOf, canonical, samePolicy } from '../policy/compare.ts';
import { buildPolicySet, resolve } from '../policy/resolve.ts';
import type { Policy } from '../policy/types.ts';
import { isRabbitError } from '../rabbit/index.ts';
import type { WorkflowBroker } from './broker.ts';
import {
  type SetCursor,
  type SetProgress,
  type SetStep,
  type StepState,
  stepKey,
  transitionOf,
  undoOf,
} from './changeSet.ts';
import { approvalsOf } from './rules.ts';
import type { RecordingServices } from './services.ts';
import type { ChangeRequest, Failure } from './types.ts';

/**
 * The apply of a change set, as BullMQ's "process step jobs": the job's data holds the cursor
 * (`SetCursor`: the phase, how many steps are written, how many of them undone), saved with
 * `job.updateData` after every write, so a retry, a restart or another replica goes on from the
 * step after the last one written and never writes a step twice.
 *
 *   writing      before step k: every policy the set touches is read; the steps before k must be
 *                as written, the others as planned (step k as planned, or as written by a try that
 *                stopped before it saved the cursor: then it is not written again). Anything else:
 *                stale. Step k written; the cursor saved; then, before step k+1, the queues the
 *                step's patterns find polled until each reports the policy the broker's rule gives
 *                it now (a deadline; never a sleep on hope).
 *   rolling-back a write that failed for good (a 4xx, the last try), a set gone stale, or a step
 *                the broker did not take up by the deadline: the written steps undone in reverse
 *                with the same write (before and after swapped), each saved. A rollback that
 *                cannot finish (the broker gone) waits and tries again, for as long as it takes,
 *                without spending the job's tries; the request's `setProgress` (and so its
 *                message) says meanwhile which policies are written, undone, as planned.
 *   finished     in one place (`finish`): the audit records (each step, each undo, with `set`),
 *                then the request applied, or failed / stale saying what was written and undone.
 */

/**
 * The bot's own write, announced just before it is made, so the watcher of `env` does not report
 * it as a change made outside the bot (src/watch/store.ts `ownWriteAnnouncer`, wired in src/botChangeRequests.ts).
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
  /** How long a rollback that could not finish waits before it tries again (doubled, at most a minute). */
  readonly rollbackRetryMs: number;
  /** Told once the set's records are appended, before it is marked applied (a time box scheduled: applyJob.ts). */
  readonly onRecorded?: (request: ChangeRequest, record: ChangeRecord) => Promise<void>;
}

const POLL_MS = 250;

/** The one write of a step: its after written, or the policy deleted. A rollback writes the undo. */
export async function writeStep(broker: WorkflowBroker, step: SetStep): Promise<void> {
  const { after } = transitionOf(step);
  if (after) await broker.putPolicy(step.layer, after);
  else await broker.deletePolicy(step.layer, step.vhost, step.name);
}

/** Every policy of both layers of the vhosts the steps touch, by step key (absent: none). */
async function readTouched(broker: WorkflowBroker, steps: readonly SetStep[]) {
  const wanted = new Set(steps.map((s) => `${s.layer}\u0000${s.vhost}`));
  const byKey = new Map<string, Policy>();
  const lists = new Map<string, Policy[]>();
  await Promise.all(
    [...wanted].map(async (w) => {
      const [layer, vhost] = w.split('\u0000') as ['user' | 'operator', string];
      const list =
        layer === 'user' ? await broker.listPolicies(vhost) : await broker.listOperatorPolicies(vhost);
      lists.set(w, list);
      for (const p of list) byKey.set(stepKey({ layer, vhost, name: p.name }), p);
    }),
  );
  return {
    policy: (s: SetStep) => byKey.get(stepKey(s)) ?? null,
    list: (layer: 'user' | 'operator', vhost: string) => lists.get(`${layer}\u0000${vhost}`),
  };
}

/**
 * Where each step stands on the broker: `written` (its after), `as-planned` (its before), or
 * `unknown` (neither: someone else changed it). A step whose before and after are the same
 * policy cannot be told apart; it is in no set.
 */
export function standing(steps: readonly SetStep[], current: (s: SetStep) => Policy | null): StepState[] {
  return steps.map((s) => {
    const t = transitionOf(s);
    const now = current(s);
    if (samePolicy(now, t.after)) return 'written';
    if (samePolicy(now, t.before)) return 'as-planned';
    return 'unknown';
  });
}

export class ApplySet {
  constructor(
    private readonly deps: ApplySetDeps,
    private readonly broker: WorkflowBroker,
  ) {}

  async run(
    job: Job,
    r: ChangeRequest,
    cursorIn: SetCursor | undefined,
    token: string | undefined,
    log: Logger,
  ) {
    const steps = r.set?.steps ?? [];
    let c: SetCursor = cursorIn ?? START;
    const save = async (next: SetCursor) => {
      c = next;
      await job.updateData({ requestId: r.id, set: c });
    };
    while (c.phase === 'writing' && c.written < steps.length) {
      const k = c.written;
      const step = steps[k] as SetStep;
      const read = await readTouched(this.broker, steps);
      const states = standing(steps, read.policy);
      const off = states.findIndex((s, i) =>
        i < k ? s !== 'written' : i > k ? s !== 'as-planned' : s === 'unknown',
      );
      if (off >= 0) {
        const s = steps[off] as SetStep;
        log.warn({ step: off, policy: s.name }, 'set stale: a policy it touches is not as planned');
        await save({
          ...c,
          phase: 'rolling-back',
          because: {
            kind: 'stale',
            step: off,
            code: 'policy-changed',
            message: `${s.name} in ${s.vhost} is not as planned (changed outside this request)`,
          },
        });
        break;
      }
      if (states[k] !== 'written') {
        await this.deps.announceWrite(r.env, step, transitionOf(step).after, r.id);
        try {
          await writeStep(this.broker, step);
        } catch (err) {
          const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
          if (!last && !(isRabbitError(err) && !err.isRetryable)) throw err; // the queue tries again
          await save({
            ...c,
            phase: 'rolling-back',
            because: { kind: 'failed', step: k, ...failureOf(err) },
          });
          break;
        }
      }
      await save({ ...c, written: k + 1, writtenAt: [...c.writtenAt, this.deps.now().toISOString()] });
      log.info({ step: k, of: steps.length, policy: step.name }, 'set: step written');
      // The next write waits until the broker runs this one: its safety was planned on it.
      if (k + 1 < steps.length && !(await this.takenUp(steps.slice(0, k + 1), step, read))) {
        await save({
          ...c,
          phase: 'rolling-back',
          because: {
            kind: 'not-taken-up',
            step: k,
            code: 'not-taken-up',
            message: `the broker did not report ${step.name} on its queues within ${this.deps.verifyDeadlineMs} ms`,
          },
        });
      }
    }
    if (c.phase === 'rolling-back') await this.rollBack(job, r, steps, c, save, token, log);
    await this.finish(r, steps, c, log);
  }

  /**
   * Polls the queues the step moves (those it now governs or governed) until each reports the policy the broker's rule
   * gives it with the steps so far written (ties and patterns this bot cannot read left out; an
   * operator policy through the statistics, which lag). False at the deadline.
   */
  private async takenUp(
    written: readonly SetStep[],
    step: SetStep,
    before: Awaited<ReturnType<typeof readTouched>>,
  ): Promise<boolean> {
    if (step.verify) return this.reported(step.vhost, step.verify);
    const layerOf = (layer: 'user' | 'operator') => {
      const list = new Map((before.list(layer, step.vhost) ?? []).map((p) => [p.name, p]));
      for (const s of written) {
        if (s.vhost !== step.vhost || s.layer !== layer) continue;
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
  private async reported(vhost: string, objects: NonNullable<SetStep['verify']>): Promise<boolean> {
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
    // The write that failed may have gone through all the same (its answer lost): then it is undone too.
    const failedAt = c.because?.kind === 'failed' ? c.because.step : undefined;
    if (failedAt === c.written && c.undone === 0) {
      const step = steps[failedAt] as SetStep;
      const now = await this.broker.getPolicy(step.layer, step.vhost, step.name).catch(() => undefined);
      if (now !== undefined && samePolicy(now, transitionOf(step).after)) {
        c = { ...c, written: c.written + 1, writtenAt: [...c.writtenAt, this.deps.now().toISOString()] };
        await save(c);
      }
    }
    while (c.undone < c.written) {
      const j = c.written - 1 - c.undone;
      const step = steps[j] as SetStep;
      try {
        const now = await this.broker.getPolicy(step.layer, step.vhost, step.name);
        const t = transitionOf(step);
        // Undone already by a try that stopped before it saved; or changed by someone else since:
        // then it is left as they made it (said in the outcome), never overwritten blind.
        if (samePolicy(now, t.after)) {
          const undo = undoOf(step);
          await this.deps.announceWrite(r.env, undo, transitionOf(undo).after, r.id);
          await writeStep(this.broker, undo);
        } else if (!samePolicy(now, t.before)) {
          log.warn(
            { step: j, policy: step.name, now: canonical(now) },
            'rollback: changed by someone else; left',
          );
        }
      } catch (err) {
        // The rollback must finish: told where things stand, then tried again later, for as long
        // as it takes (moveToDelayed spends none of the job's tries).
        const wait = Math.min(60_000, this.deps.rollbackRetryMs * 2 ** Math.min(job.attemptsMade, 6));
        log.error(
          { err: err instanceof Error ? err.message : String(err), step: j },
          'rollback interrupted; retried',
        );
        await this.progress(r, steps, c, failureOf(err).message);
        await job.moveToDelayed(Date.now() + wait, token);
        throw new DelayedError();
      }
      c = { ...c, undone: c.undone + 1, undoneAt: [...c.undoneAt, this.deps.now().toISOString()] };
      await save(c);
      log.info({ step: j }, 'set: step undone');
    }
  }

  /** The request's `setProgress` and its message: each policy's state while the rollback waits. */
  private async progress(r: ChangeRequest, steps: readonly SetStep[], c: SetCursor, retrying?: string) {
    const moved = await this.deps.store.transition(r.id, {
      move: 'progress',
      set: { setProgress: progressOf(steps.length, c, retrying, this.deps.now()) },
    });
    if (moved.kind === 'ok') await this.deps.notify.stateChanged(moved.request);
  }

  /** Finished in one place: the records, then the request's last state. */
  private async finish(r: ChangeRequest, steps: readonly SetStep[], c: SetCursor, log: Logger) {
    const records: ChangeRecord[] = [];
    for (let i = 0; i < c.written; i++) {
      records.push(
        await this.deps.audit.append(stepEntry(r, steps, i, c.writtenAt[i] ?? c.writtenAt.at(-1) ?? '')),
      );
    }
    for (let n = 0; n < c.undone; n++) {
      const i = c.written - 1 - n;
      records.push(await this.deps.audit.append(undoEntry(r, steps, i, c.undoneAt[n] ?? '')));
    }
    const setProgress = progressOf(steps.length, c, undefined, this.deps.now());
    if (c.phase === 'writing') {
      const last = records.at(-1);
      if (last) await this.deps.onRecorded?.(r, last);
      const moved = await this.deps.store.transition(r.id, {
        move: 'finish',
        set: {
          appliedAt: this.deps.now().toISOString(),
          ...(last ? { auditId: last.id } : {}),
          setProgress,
          verification: { matched: true, mismatches: [], unchecked: 0 },
        },
      });
      if (moved.kind !== 'ok') return;
      log.info({ steps: steps.length }, 'set applied and recorded');
      await this.deps.notify.stateChanged(moved.request);
      if (last) await this.deps.notify.applied(moved.request, last);
      return;
    }
    const because = c.because;
    const stale = because?.kind === 'stale';
    const failure: Failure = {
      code: because?.code ?? 'internal',
      message: `${because?.message ?? 'the set was rolled back'}: ${c.written} of ${steps.length} steps written, ${c.undone} rolled back`,
      ...(because?.status !== undefined ? { status: because.status } : {}),
      attempts: 1,
      at: this.deps.now().toISOString(),
    };
    const moved = await this.deps.store.transition(r.id, {
      move: stale ? 'markStale' : 'fail',
      set: stale ? { staleBecause: 'policy-changed', setProgress } : { failure, setProgress },
    });
    if (moved.kind !== 'ok') return;
    log.warn({ written: c.written, undone: c.undone, because }, 'set rolled back');
    await this.deps.notify.stateChanged(moved.request);
    if (!stale) await this.deps.notify.failed(moved.request);
  }
}

function failureOf(err: unknown): { code: string; message: string; status?: number } {
  if (isRabbitError(err))
    return {
      code: err.code,
      message: err.reason ?? err.message,
      ...(err.status !== undefined ? { status: err.status } : {}),
    };
  if (err instanceof UnrecoverableError) return { code: 'refused', message: err.message };
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

function progressOf(size: number, c: SetCursor, retrying: string | undefined, now: Date): SetProgress {
  return {
    size,
    written: c.written,
    undone: c.undone,
    ...(retrying ? { retrying: { why: retrying, at: now.toISOString() } } : {}),
  };
}

function baseEntry(r: ChangeRequest, steps: readonly SetStep[], i: number) {
  const step = steps[i] as SetStep;
  return {
    env: r.env,
    vhost: step.vhost,
    policy: step.name,
    operator: step.layer === 'operator',
    requestId: r.id,
    requester: r.requester,
    ...approversOf(r),
    requestedAt: r.createdAt,
    ...(r.decision ? { approvedAt: r.decision.at } : {}),
    ...breakGlassOf(r),
    set: { id: r.id, index: i, size: steps.length },
    objects: [],
    unpredictable: 0,
  };
}

function stepEntry(r: ChangeRequest, steps: readonly SetStep[], i: number, at: string): ChangeEntry {
  const step = steps[i] as SetStep;
  return {
    ...baseEntry(r, steps, i),
    id: `a-${r.id}-${i}`,
    at,
    appliedAt: at,
    ...(step.revertOf ? { action: 'revert' as const, revertOf: step.revertOf } : { action: actionOf(step) }),
    before: step.before,
    after: step.after,
    ...(i === 0 && r.preview.summary.impact ? { impact: r.preview.summary.impact.totals } : {}),
  };
}

function undoEntry(r: ChangeRequest, steps: readonly SetStep[], i: number, at: string): ChangeEntry {
  const step = steps[i] as SetStep;
  return {
    ...baseEntry(r, steps, i),
    id: `a-${r.id}-${i}-undo`,
    at,
    appliedAt: at,
    action: 'revert',
    revertOf: `a-${r.id}-${i}`,
    before: step.after,
    after: step.before,
  };
}

/** The audit record's approvers: every approval in order (`approver` the first); a request decided before approvals were counted has its decision. */
export function approversOf(r: ChangeRequest): Pick<ChangeRecord, 'approver' | 'approvers'> {
  const given = approvalsOf(r);
  const people = (given.length ? given : r.decision ? [r.decision] : []).map((a) => ({
    user: a.by,
    reason: a.reason,
  }));
  const [first] = people;
  return first ? { approver: first, approvers: people } : {};
}

/** A break-glass change's record says so: who applied it without approval, and why. */
export function breakGlassOf(r: ChangeRequest): Pick<ChangeRecord, 'breakGlass'> {
  return r.breakGlass ? { breakGlass: { user: r.breakGlass.by, reason: r.breakGlass.reason } } : {};
}
