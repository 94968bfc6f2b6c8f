import { maskUris } from '../../core/index.ts';
import { fieldsOf } from '../../plan/index.ts';
import type { Parameter, Policy } from '../../policy/index.ts';
import { PARAMETER_COMPONENTS, sameParameterValue, samePolicy } from '../../policy/index.ts';
import type { WorkflowBroker } from '../broker.ts';
import {
  isParameterSetStep,
  type ParameterSetStep,
  type SetCursor,
  type SetStep,
  stepKey,
  transitionOf,
} from '../changeSet.ts';
import type { ChangeRequest } from '../types.ts';
import { type EarlyReads, type Prepared, prepareOne } from './applyOne.ts';
import { setLossGrew } from './setLoss.ts';

/**
 * What the apply asks of the broker before a step's write, the one seam where a single change and
 * a set read differently (applySet.ts's loop does not branch on which): where every step stands,
 * and, just before the first write, whether the loss grew past what the approval accepted.
 *
 * - a single change (its approvers saw a preview of it): its one policy re-read and the preview
 *   run again (applyOne.ts `prepareOne`), loss included, what it found kept for its record;
 * - a set: every policy of the vhosts it touches listed (kept for the polls after each write),
 *   and its loss planned again before the first write (setLoss.ts).
 */

/** Where a step stands on the broker: its after, its before, or neither (someone else changed it). */
export type Standing = 'written' | 'as-planned' | 'changed';

/** What the broker holds at a step's address: a policy, a parameter, or nothing. */
export type Held = Policy | Parameter | null;

export function standingOf(s: SetStep, now: Held): Standing {
  if (isParameterSetStep(s)) {
    const value = now && 'value' in now ? now.value : null;
    if (sameParameterValue(value, s.after)) return 'written';
    if (sameParameterValue(value, s.before)) return 'as-planned';
    return 'changed';
  }
  const policy = now && !('value' in now) ? now : null;
  const t = transitionOf(s);
  if (samePolicy(policy, t.after)) return 'written';
  if (samePolicy(policy, t.before)) return 'as-planned';
  return 'changed';
}

/**
 * Where each step of a set stands before step `k`'s write, as applySet.ts reads it (those before
 * `k` written, those after as planned). A policy the set writes more than once (deleted, then
 * created again: `recreate`) holds one state for all its steps: a step followed by another of the
 * same policy at or before `k` is written (that one is read in its place), and a step after
 * another of the same policy not yet written is as planned (its before is that one's after).
 */
export function setStandings(steps: readonly SetStep[], k: number, held: (s: SetStep) => Held): Standing[] {
  const last = new Map<string, number>();
  const previous = steps.map((s, i) => {
    const key = stepKey(s);
    const before = last.get(key);
    last.set(key, i);
    return before;
  });
  const next: (number | undefined)[] = steps.map(() => undefined);
  previous.forEach((p, i) => {
    if (p !== undefined) next[p] = i;
  });
  return steps.map((s, i) => {
    const after = next[i];
    if (after !== undefined && after <= k) return 'written';
    const before = previous[i];
    if (before !== undefined && before >= k) return 'as-planned';
    return standingOf(s, held(s));
  });
}

/** What the broker holds at the step's address, read alone (a rollback's read). */
export function readHeld(broker: WorkflowBroker, s: SetStep): Promise<Held> {
  return isParameterSetStep(s)
    ? broker.getParameter(s.component, s.vhost, s.name)
    : broker.getPolicy(s.layer, s.vhost, s.name);
}

/** What a rollback records it left at a step: a policy's fields, a parameter's value masked. */
export function leftHolding(held: Held): NonNullable<SetCursor['left']>[number]['holds'] {
  if (held === null) return null;
  return 'value' in held ? (maskUris(held.value) as ParameterSetStep['after']) : fieldsOf(held);
}

/** Every policy of both layers, and every parameter of the components, of the vhosts the steps touch, by step key (absent: none). */
export type Touched = Awaited<ReturnType<typeof readTouched>>;

async function readTouched(broker: WorkflowBroker, steps: readonly SetStep[]) {
  const wanted = new Set(
    steps.map((s) => `${isParameterSetStep(s) ? s.component : s.layer}\u0000${s.vhost}`),
  );
  const byKey = new Map<string, Held>();
  const lists = new Map<string, Policy[]>();
  await Promise.all(
    [...wanted].map(async (w) => {
      const [what, vhost] = w.split('\u0000') as [string, string];
      const component = PARAMETER_COMPONENTS.find((c) => c === what);
      if (component) {
        for (const p of await broker.parameters(component, vhost))
          byKey.set(stepKey({ component, vhost, name: p.name }), {
            component,
            vhost,
            name: p.name,
            value: p.value,
          });
        return;
      }
      const layer = what as 'user' | 'operator';
      const list =
        layer === 'user' ? await broker.listPolicies(vhost) : await broker.listOperatorPolicies(vhost);
      lists.set(w, list);
      for (const p of list) byKey.set(stepKey({ layer, vhost, name: p.name }), p);
    }),
  );
  return {
    held: (s: SetStep) => byKey.get(stepKey(s)) ?? null,
    list: (layer: 'user' | 'operator', vhost: string) => lists.get(`${layer}\u0000${vhost}`),
  };
}

export type StaleCode = 'policy-changed' | 'loss-grew';

export type Found =
  /** Found not as approved before anything was written (a single change's re-read or fresh preview). */
  | { readonly kind: 'stale'; readonly code: StaleCode }
  | {
      readonly kind: 'read';
      /** Where each step stands. */
      readonly states: readonly Standing[];
      /** The listings read, for the polls after a write (a set's); none: nothing to poll. */
      readonly read?: Touched;
      /** What a fresh preview found, to save in the job's data before the write. */
      readonly prepared?: Prepared;
    };

export interface StepGuard {
  /** Where the steps stand before step `k`'s write. Throws what the queue may retry. */
  before(k: number, prepared: Prepared): Promise<Found>;
  /** Just before the first write, nothing written: whether the loss grew past the approval's. */
  lossGrew(): Promise<boolean>;
}

/**
 * The guard of `r`'s steps. `early`: the reads of a single change the job began before its move to
 * applying (applyJob.ts), used by the first read only.
 */
export function stepGuard(
  r: ChangeRequest,
  steps: readonly SetStep[],
  broker: WorkflowBroker,
  now: () => Date,
  early?: EarlyReads,
): StepGuard {
  if (r.set)
    return {
      async before(k) {
        const read = await readTouched(broker, steps);
        return { kind: 'read', states: setStandings(steps, k, read.held), read };
      },
      lossGrew: () => setLossGrew(r, steps, broker),
    };
  let reads = early;
  return {
    // Its re-read is the step's, so its one policy is not listed again; its loss is in the fresh preview.
    async before(_k, prepared) {
      const ready = await prepareOne(r, broker, prepared, now(), reads);
      reads = undefined; // a try's reads, once
      if (ready.kind === 'stale') return ready;
      return {
        kind: 'read',
        states: [ready.kind === 'written' ? 'written' : 'as-planned'],
        ...(ready.kind === 'prepared' ? { prepared: ready.prepared } : {}),
      };
    },
    lossGrew: async () => false,
  };
}
