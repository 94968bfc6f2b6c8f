import * as z from 'zod';
import {
  ImpactTotalsSchema,
  MAX_LINKS_KEPT,
  PolicyFieldsSchema,
  StepLinksSchema,
  type StoredLinks,
} from '../audit/index.ts';
import {
  type Component,
  fieldsOf,
  isParameterStep,
  linkJson,
  type Plan,
  type StepLinks,
} from '../plan/index.ts';
import { type ImpactTotals, impactTotals } from '../policy/impact/index.ts';
import {
  actionOf,
  PARAMETER_COMPONENTS,
  type Parameter,
  type Policy,
  type Transition,
} from '../policy/index.ts';
import type { ChangeAction } from '../policy/simulate/index.ts';
import type { ImpactSummary } from '../preview/index.ts';

/**
 * A change set: the policy changes one request files, in the order they are written (the
 * planner's, src/plan/). One step per policy; a step is the `Transition` of
 * src/policy/compare.ts as stored (its fields without vhost and name, which the step carries).
 * A file's federation upstreams, upstream sets and shovels are steps of the set too
 * (`ParameterSetStep`: its value as the broker takes it, URIs and passwords included, kept only
 * here to be written; shown masked everywhere). A single create, edit or delete is a set of one
 * (`stepsOf`).
 */

export const PolicySetStepSchema = z.object({
  layer: z.enum(['user', 'operator']),
  vhost: z.string().min(1),
  name: z.string().min(1),
  before: PolicyFieldsSchema.nullable(),
  after: PolicyFieldsSchema.nullable(),
  /**
   * The objects whose safety a later step depends on, with the policy of each layer the broker
   * must report on them once this step is written, before the next write (the planner's
   * `verify`, src/plan/plan.ts). Absent (a set not planned): the queues the step moves are polled.
   */
  verify: z
    .array(
      z.object({
        name: z.string(),
        kind: z.string(),
        policy: z.string().nullable(),
        operatorPolicy: z.string().nullable(),
      }),
    )
    .max(1000)
    .optional(),
  /** The audit record of the step this one undoes (a time-boxed set's revert, timebox.ts `revertSteps`). */
  revertOf: z.string().optional(),
  /** The links it starts and stops, as planned (absent: a set planned before links were, or none worked out). */
  links: StepLinksSchema.optional(),
});
export type PolicySetStep = z.infer<typeof PolicySetStepSchema>;

/** A parameter's step: its value before and after (null: absent). */
export const ParameterSetStepSchema = z.object({
  component: z.enum(PARAMETER_COMPONENTS),
  vhost: z.string().min(1),
  name: z.string().min(1),
  before: z.json(),
  after: z.json(),
  links: StepLinksSchema.optional(),
});
export type ParameterSetStep = z.infer<typeof ParameterSetStepSchema>;

export const SetStepSchema = z.union([ParameterSetStepSchema, PolicySetStepSchema]);
export type SetStep = PolicySetStep | ParameterSetStep;

export const isParameterSetStep = (s: SetStep): s is ParameterSetStep => 'component' in s;

/**
 * A set's policy steps. A set holding parameters is neither time-boxed nor reverted whole
 * (`PARAMETERS_NOT_REVERTED`), so what reverts a set sees its policies alone.
 */
export const policySteps = (steps: readonly SetStep[]): PolicySetStep[] =>
  steps.filter((s): s is PolicySetStep => !isParameterSetStep(s));

/** Why a set holding parameters is not time-boxed nor reverted whole. */
export const PARAMETERS_NOT_REVERTED =
  'A set that writes federation upstreams, upstream sets or shovels is neither time-boxed (--for) nor reverted whole: the bot keeps their URIs only to write them once. Revert it with a file that says what to restore (plan FILE, then import FILE).';

/** Whether the step creates, edits or deletes (the one rule, `actionOf`; a parameter's value may be any JSON). */
export const stepAction = (s: SetStep): ChangeAction =>
  actionOf({ before: s.before === null ? null : {}, after: s.after === null ? null : {} });

/** What the step writes (as the plan's `componentOf`). */
export const stepComponent = (s: SetStep): Component =>
  isParameterSetStep(s) ? s.component : s.layer === 'operator' ? 'operator-policy' : 'policy';

/** The step's parameter on one side of it (null: absent). */
export function parameterOf(step: ParameterSetStep, side: 'before' | 'after'): Parameter | null {
  const value = step[side];
  return value === null ? null : { component: step.component, vhost: step.vhost, name: step.name, value };
}

/** Where a re-created policy's set says it came from (`Workflow.recreate`). */
export const recreateSource = (policy: string) => `recreate ${policy}`;

/**
 * The policy a set re-creates: a set of two steps, a policy deleted and then created again exactly
 * as it was (`Workflow.recreate`); null for any other set (a file or a revert writes each policy once).
 */
export function recreatedPolicy(set: Pick<ChangeSet, 'steps'>): PolicySetStep | null {
  const [first, second, ...rest] = set.steps;
  if (!first || !second || rest.length || isParameterSetStep(first) || isParameterSetStep(second))
    return null;
  const same =
    stepKey(first) === stepKey(second) &&
    first.after === null &&
    second.before === null &&
    JSON.stringify(first.before) === JSON.stringify(second.after);
  return same ? first : null;
}

/** Most policies a set may hold (docs/plan.md: a file of more is refused). */
export const MAX_SET_STEPS = 5_000;

export const ChangeSetSchema = z.object({
  /** The steps in the order of writing. */
  steps: z.array(SetStepSchema).min(1).max(MAX_SET_STEPS),
  /** Where the set came from (the file's name as given, `-` for standard input). */
  source: z.string().min(1),
  /** What a state on the way would remove that the end state does not (the plan's `transitional`, summed). */
  transitional: ImpactTotalsSchema.optional(),
  /** How many policies the file held unchanged, and what it held that the bot does not manage. */
  unchanged: z.number().int().min(0).optional(),
});
export type ChangeSet = z.infer<typeof ChangeSetSchema>;

/** What a request changes, as a set: its own steps, or its one change as a set of one. */
export function stepsOf(r: {
  readonly set?: ChangeSet | undefined;
  readonly layer: 'user' | 'operator';
  readonly vhost: string;
  readonly policy: string;
  readonly before: PolicySetStep['before'];
  readonly after: PolicySetStep['after'];
}): readonly SetStep[] {
  return (
    r.set?.steps ?? [{ layer: r.layer, vhost: r.vhost, name: r.policy, before: r.before, after: r.after }]
  );
}

/**
 * What a plan (src/plan/plan.ts) gives the filing of its set (`FileSetInput`): the steps in the
 * plan's order of writing, each with what it verifies, and the figures the approval acknowledges:
 * the end state's loss and what the states on the way remove besides (`transitional`, summed).
 */
export function plannedSet(plan: Plan) {
  const transitional = plan.transitional.length
    ? impactTotals(plan.transitional.map((t) => t.impact))
    : undefined;
  return {
    steps: plan.changes.map(
      (s): SetStep =>
        isParameterStep(s)
          ? {
              component: s.component,
              vhost: s.vhost,
              name: s.name,
              before: (s.before?.value ?? null) as ParameterSetStep['before'],
              after: (s.after?.value ?? null) as ParameterSetStep['after'],
              ...storedLinks(s.links),
            }
          : {
              layer: s.layer,
              vhost: s.vhost,
              name: s.name,
              before: fieldsOf(s.before),
              after: fieldsOf(s.after),
              verify: s.verify.map((v) => ({ ...v })),
              ...storedLinks(s.links),
            },
    ),
    impact: plan.impact,
    losing: plan.losing,
    ...(transitional ? { transitional } : {}),
    unchanged: plan.unchanged,
    objects: plan.vhosts.reduce((n, v) => n + v.objects.length, 0),
    unpredictable: plan.vhosts.reduce((n, v) => n + v.unpredictable.length, 0),
    brokerVersion: plan.vhosts[0]?.brokerVersion ?? '',
    ...(plan.unread?.length ? { unread: plan.unread } : {}),
  };
}

/** A step's links as a set keeps them: at most MAX_LINKS_KEPT of each, with the counts; none kept when it moves none. */
function storedLinks(links: StepLinks): { links?: StoredLinks } {
  if (links.start.length + links.stop.length === 0) return {};
  return {
    links: {
      start: links.start.slice(0, MAX_LINKS_KEPT).map(linkJson),
      stop: links.stop.slice(0, MAX_LINKS_KEPT).map(linkJson),
      startCount: links.start.length,
      stopCount: links.stop.length,
    },
  };
}

/** The links a step's undo starts and stops: those the step stopped and started. */
export function undoLinks(links: StoredLinks): StoredLinks {
  return { start: links.stop, stop: links.start, startCount: links.stopCount, stopCount: links.startCount };
}

/**
 * A set's loss to acknowledge, as the request keeps a preview's: the end state's, and what its way
 * removes besides (the plan's `transitional`), added, so the approver acknowledges both in numbers.
 */
export function setImpact(
  end: ImpactTotals,
  losing: readonly string[],
  transitional: ImpactTotals | undefined,
): ImpactSummary {
  const t = transitional;
  return {
    totals: {
      messagesDeadLettered: end.messagesDeadLettered + (t?.messagesDeadLettered ?? 0),
      messagesLost: end.messagesLost + (t?.messagesLost ?? 0),
      queuesDeleted: end.queuesDeleted + (t?.queuesDeleted ?? 0),
      queuesRefusingPublishes: end.queuesRefusingPublishes + (t?.queuesRefusingPublishes ?? 0),
    },
    queues: [...losing],
    sampledAt: null,
    objects: [],
    count: losing.length,
    unknown: 0,
    notes: [],
  };
}

/** The step as a transition of whole policies (null: absent). */
export function transitionOf(step: PolicySetStep): Transition {
  const whole = (f: PolicySetStep['before']): Policy | null =>
    f && { vhost: step.vhost, name: step.name, ...f };
  return {
    layer: step.layer,
    vhost: step.vhost,
    name: step.name,
    before: whole(step.before),
    after: whole(step.after),
  };
}

/** The step undone: what a rollback writes (the same write, before and after swapped). */
export function undoOf<S extends SetStep>(step: S): S {
  return { ...step, before: step.after, after: step.before };
}

/** The audit record of a set's step (`a-` + the set's id + its place in the order of writing). */
export const setRecordId = (setId: string, index: number) => `a-${setId}-${index}`;

/** The vhosts a set's steps touch, each once, in the order of writing. */
export function setVhosts(set: Pick<ChangeSet, 'steps'>): string[] {
  return [...new Set(set.steps.map((s) => s.vhost))];
}

/** The address of a step, as a key (a policy's layer, or a parameter's component). */
export const stepKey = (
  s: Pick<PolicySetStep, 'layer' | 'vhost' | 'name'> | Pick<ParameterSetStep, 'component' | 'vhost' | 'name'>,
) => JSON.stringify(['component' in s ? s.component : s.layer, s.vhost, s.name]);

/** A step the rollback left as someone else changed it, and what the broker held then (null: no policy). */
const LeftSchema = z.object({
  step: z.number().int().min(0),
  /** A policy's fields; a parameter's value with every URI masked (what it holds is never written back). */
  holds: z.union([PolicyFieldsSchema, z.json()]).nullable(),
});

/** The apply job's cursor (its data, saved after each step; a single change's too): see applySet.ts. */
export const SetCursorSchema = z.object({
  phase: z.enum(['writing', 'rolling-back']),
  /** Steps written, from the first (0..written-1). */
  written: z.number().int().min(0),
  /**
   * The step whose write was begun last (saved just before it is announced and written): while
   * `written` has not passed it, whether it went through is not known. Absent: no write begun.
   */
  attempted: z.number().int().min(0).optional(),
  /** Of those, how many the rollback has gone back over, from the last written: undone, or `left`. */
  undone: z.number().int().min(0),
  /** When each written step was written (ISO), in order: the audit's `appliedAt`. */
  writtenAt: z.array(z.string()),
  /** When each undone step was undone, in the order undone. */
  undoneAt: z.array(z.string()),
  /**
   * The steps the rollback left as it found them, never overwritten blind: each policy neither as
   * the step wrote it nor as the set found it (someone else changed it since), with what the
   * broker held then (`holds`, null: no policy). A step's write whose outcome was not known and
   * that the broker then showed changed so is one of them too, though not counted in `written`.
   */
  left: z.array(LeftSchema).optional(),
  /** Why the set is rolled back. */
  because: z
    .object({
      /** `refused`: the environment became read-only before the first write (rules.ts `environmentRefusal`). */
      kind: z.enum(['failed', 'stale', 'not-taken-up', 'refused']),
      /** The step it happened at (its index). */
      step: z.number().int().min(0),
      code: z.string(),
      message: z.string(),
      status: z.number().int().optional(),
      /**
       * The broker answered the step's write with a refusal (a 4xx), read just before as not
       * written: it is known not written, and the rollback need not ask. Absent: the write's
       * outcome is not known (no answer, a 5xx), and the rollback asks the broker.
       */
      writeRefused: z.literal(true).optional(),
    })
    .optional(),
});
export type SetCursor = z.infer<typeof SetCursorSchema>;

export const SetProgressSchema = z.object({
  size: z.number().int().min(1),
  written: z.number().int().min(0),
  undone: z.number().int().min(0),
  /** As the cursor's: the steps the rollback left as someone else changed them, with what the broker holds. */
  left: z.array(LeftSchema).optional(),
  /**
   * The steps whose policy is not known now: the read or the write of it failed (no answer), so
   * neither written nor not written can be said; asked again until the broker answers.
   */
  unknown: z.array(z.number().int().min(0)).optional(),
  /** While a rollback waits for the broker: what stopped it, and when it was last tried. */
  retrying: z.object({ why: z.string(), at: z.string() }).optional(),
});
export type SetProgress = z.infer<typeof SetProgressSchema>;

/**
 * Where a step's policy stands: written, undone by a rollback, as planned (not written), left by
 * the rollback as someone else changed it, or not known (the broker did not answer).
 */
export type StepState = 'written' | 'undone' | 'as-planned' | 'left' | 'unknown';

/**
 * What each step's policy is: the first `written - undone` steps written, the next ones undone,
 * the rest as planned; but `left` and `unknown` as they say.
 */
export function stepStates(p: SetProgress): StepState[] {
  const left = new Set(p.left?.map((l) => l.step));
  const unknown = new Set(p.unknown);
  return Array.from({ length: p.size }, (_, i) =>
    unknown.has(i)
      ? 'unknown'
      : left.has(i)
        ? 'left'
        : i < p.written - p.undone
          ? 'written'
          : i < p.written
            ? 'undone'
            : 'as-planned',
  );
}

/** How many of the steps the rollback went back over it undid (those it left aside). */
export function undoneCount(c: Pick<SetCursor, 'written' | 'undone' | 'left'>): number {
  return c.undone - (c.left ?? []).filter((l) => l.step < c.written).length;
}

export const NO_LOSS: ImpactTotals = {
  messagesDeadLettered: 0,
  messagesLost: 0,
  queuesDeleted: 0,
  queuesRefusingPublishes: 0,
};
