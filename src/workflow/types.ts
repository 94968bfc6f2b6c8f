// Over 400 lines: the workflow's contract in one place: what is stored (zod schemas) and what callers are promised.
import type { Logger } from 'pino';
import * as z from 'zod';
import { type ChangeRecord, IsoTime, PolicyFieldsSchema } from '../audit/index.ts';
import type { ImpactTotals } from '../policy/impact/index.ts';
import type { PolicyDiff } from '../policy/index.ts';
import type { DefinitionPatch, Problem } from '../policy/validate/index.ts';
import type { PreviewAnswer, PreviewResult, PreviewSummary } from '../preview/index.ts';
import type { Unread } from '../rabbit/index.ts';
import type { RedisTrouble } from '../redis/index.ts';
import type { ObserveOptions } from './apply/observe.ts';
import type { WorkflowBroker } from './broker.ts';
import { type ChangeSet, ChangeSetSchema, SetProgressSchema, type SetStep } from './changeSet.ts';
import { type Freeze, FreezeSchema } from './deciding/freeze.ts';
import type { ApproverDirectory } from './filing/approvers.ts';

/**
 * Change requests: what is stored, what the workflow promises its callers (the Slack handlers,
 * the terminal commands), and what it asks of them (a Notifier). Every value read back from
 * Redis or a job is parsed with these schemas.
 *
 * A request's life: the named moves of moves.ts (MOVES), which the store's scripts and every
 * caller use; docs/change-requests.md draws the same table.
 */

// --- vocabulary ----------------------------------------------------------------------------

export const REQUEST_STATES = [
  'pending',
  'approved',
  'applying',
  'applied',
  'failed',
  'rejected',
  'expired',
  'stale',
] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

/** States in which a request still waits for something (listed by `requests`): those a move of moves.ts may still leave from. */
export const OPEN_STATES: readonly RequestState[] = ['pending', 'approved', 'applying'];

/**
 * `revert` restores the before state of an audit record; it is a create, edit or delete on the broker.
 * `import`: a change set (`set`), filed from a definitions file.
 */
export const REQUEST_ACTIONS = ['create', 'edit', 'delete', 'revert', 'import'] as const;
export type RequestAction = (typeof REQUEST_ACTIONS)[number];

export const DECISION_KINDS = ['approve', 'reject'] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

// --- schemas -------------------------------------------------------------------------------

export const RequesterSchema = z.object({
  /** Slack user id (`U…`/`W…`). */
  user: z.string().min(1),
  reason: z.string().min(1).optional(),
});
export type Requester = z.infer<typeof RequesterSchema>;

/** Where the request was made: its result is posted there too (the incident thread). */
export const OriginSchema = z.object({
  channel: z.string().min(1),
  threadTs: z.string().min(1).optional(),
});
export type Origin = z.infer<typeof OriginSchema>;

/** A posted Slack message, to update in place. */
export const MessageRefSchema = z.object({ channel: z.string().min(1), ts: z.string().min(1) });
export type MessageRef = z.infer<typeof MessageRefSchema>;

/** Who (a Slack user id), why and when: what every decision, approval and break-glass records. */
const WHO_WHY_WHEN = { by: z.string().min(1), reason: z.string().min(1), at: IsoTime };

/** `by`: the approver (or rejecter). */
export const DecisionSchema = z.object({ kind: z.enum(DECISION_KINDS), ...WHO_WHY_WHEN });
export type Decision = z.infer<typeof DecisionSchema>;

/** One approver's approval: a request needs `approvalsRequired` of them, from distinct approvers. */
export const ApprovalSchema = z.object(WHO_WHY_WHEN);
export type Approval = z.infer<typeof ApprovalSchema>;

export const FailureSchema = z.object({
  /** A RabbitErrorCode (`refused-by-broker`, `forbidden`, `unreachable`, …) or `internal`. */
  code: z.string().min(1),
  /** One sentence for people; the broker's own reason when it gave one. */
  message: z.string(),
  /** HTTP status when the broker answered. */
  status: z.number().int().optional(),
  /** Attempts made before giving up. */
  attempts: z.number().int().min(1),
  at: IsoTime,
});
export type Failure = z.infer<typeof FailureSchema>;

/** Applied without an approval by its requester (break-glass): who, why, and by when an approver must review it. */
export const BreakGlassSchema = z.object({
  ...WHO_WHY_WHEN,
  /** The environment's `reviewWithin` after `at`: unreviewed past it, the approvals channel is reminded. */
  reviewBy: IsoTime,
});
export type BreakGlass = z.infer<typeof BreakGlassSchema>;

export const REVIEW_OUTCOMES = ['reviewed', 'reverted'] as const;
export type ReviewOutcome = (typeof REVIEW_OUTCOMES)[number];

/** An approver's review of a break-glass change: kept (`reviewed`) or a revert filed (`reverted`). */
export const ReviewSchema = z.object({
  outcome: z.enum(REVIEW_OUTCOMES),
  by: z.string().min(1),
  reason: z.string().min(1),
  at: IsoTime,
  /** For `reverted`: the revert request filed (it needs its own approval). */
  revertRequestId: z.string().optional(),
});
export type Review = z.infer<typeof ReviewSchema>;

/**
 * What the requester's preview showed, kept to render the request (the approvals message, the
 * terminal's `requests`) long after it was filed. The full object list is not stored: it is in
 * the `PreviewAnswer` that `Workflow.file` returns (for the CSV attachment) and is recomputed by
 * the apply job.
 */
export const PreviewSnapshotSchema = z.object({
  brokerVersion: z.string(),
  summary: z.custom<PreviewSummary>((v) => typeof v === 'object' && v !== null),
  warnings: z.array(z.custom<Problem>((v) => typeof v === 'object' && v !== null)),
  diff: z.custom<PolicyDiff>((v) => typeof v === 'object' && v !== null),
  /** How many objects the simulation reported (changed or not). */
  objects: z.number().int().min(0),
  /** Objects whose outcome the bot could not predict. */
  unpredictable: z.number().int().min(0),
  /**
   * What the loss depends on and could not be read when it was filed (the queues' statistics):
   * the loss is unknown, the approval message says so first, and the approval accepts no loss.
   */
  unread: z.array(z.custom<Unread>((v) => typeof v === 'object' && v !== null)).optional(),
});
export type PreviewSnapshot = z.infer<typeof PreviewSnapshotSchema>;

export const ChangeRequestSchema = z.object({
  /** `r-` + 20 random hex characters; also the apply job's id. */
  id: z.string().regex(/^r-[0-9a-f]{20}$/),
  env: z.string().min(1),
  vhost: z.string().min(1),
  layer: z.enum(['user', 'operator']),
  action: z.enum(REQUEST_ACTIONS),
  /** The policy's name (for a set: where it came from, its `source`). */
  policy: z.string().min(1),
  /** The policy as the requester's preview read it (null: there was none). */
  before: PolicyFieldsSchema.nullable(),
  /** The policy to write (null: delete it). */
  after: PolicyFieldsSchema.nullable(),
  preview: PreviewSnapshotSchema,
  requester: RequesterSchema,
  origin: OriginSchema,
  /** The environment's approvals channel when filed (else SLACK_APPROVALS_CHANNEL); none: not configured. */
  approvalsChannel: z.string().min(1).optional(),
  /** The request message in the approvals channel, once posted (`attachMessage`). */
  message: MessageRefSchema.optional(),
  state: z.enum(REQUEST_STATES),
  createdAt: IsoTime,
  expiresAt: IsoTime,
  /** When the state last changed. */
  updatedAt: IsoTime,
  /** The decision that moved it out of `pending`: a rejection, or the last approval needed. */
  decision: DecisionSchema.optional(),
  /** Distinct approvers it needs, none the requester (the environment's when filed; absent: 1). */
  approvalsRequired: z.number().int().min(1).optional(),
  /** The approvals given so far, in order (absent: none). */
  approvals: z.array(ApprovalSchema).optional(),
  /** When the apply job started, and when the change was recorded. */
  applyingAt: IsoTime.optional(),
  appliedAt: IsoTime.optional(),
  failure: FailureSchema.optional(),
  /** Approved while its environment was frozen: the freeze that holds it (the apply waits for its end). */
  held: FreezeSchema.optional(),
  /** Why the request went stale: the policy changed, or the change would now remove more than approved. */
  staleBecause: z.enum(['policy-changed', 'loss-grew']).optional(),
  /** When its approvers were reminded (half its time to live passed without a decision). */
  remindedAt: IsoTime.optional(),
  /** Its environment allowed break-glass when it was filed: its message offers the requester the button. */
  breakGlassOffered: z.boolean().optional(),
  /** Applied without approval by its requester; `review`: an approver's review of it afterwards. */
  breakGlass: BreakGlassSchema.optional(),
  review: ReviewSchema.optional(),
  /** When the approvals channel was reminded of its review (unreviewed past `breakGlass.reviewBy`). */
  reviewRemindedAt: IsoTime.optional(),
  /** The audit record of the applied change. */
  auditId: z.string().optional(),
  /** For a revert: the audit record whose before state it restores. */
  revertOf: z.string().optional(),
  /** Filed again by the bot from this request, gone stale because the change would remove more than approved. */
  againOf: z.string().optional(),
  /**
   * `--for`: the change is reverted this long after it is applied (approved together with its
   * revert; src/workflow/timebox/timebox.ts). Only create and edit.
   */
  timeBoxMs: z.number().int().positive().optional(),
  /**
   * A change set (`action: import`): its steps in the order of writing. `layer`, `vhost`,
   * `before` and `after` are then its first step's; `stepsOf` (changeSet.ts) reads any request as a set.
   */
  set: ChangeSetSchema.optional(),
  /** A set being applied or rolled back: how far it got (applySet.ts), shown in its message. */
  setProgress: SetProgressSchema.optional(),
  /** After applying: whether every affected object reported the policy the preview predicted. */
  verification: z
    .object({
      matched: z.boolean(),
      /** Objects that did not report the expected policy by the deadline. */
      mismatches: z.array(z.object({ name: z.string(), kind: z.string(), expected: z.string().nullable() })),
      /** Objects that could not be checked (no broker report, undecided outcome). */
      unchecked: z.number().int().min(0),
    })
    .optional(),
});
export type ChangeRequest = z.infer<typeof ChangeRequestSchema>;

// --- the facade ----------------------------------------------------------------------------

/** What `Workflow.file` takes: the preview's input plus who asks, why, and from where. */
export interface FileInput {
  /** Environment name; undefined: the only (or first) one. */
  readonly env?: string | undefined;
  readonly vhost: string;
  readonly layer: 'user' | 'operator';
  readonly action: 'create' | 'edit' | 'delete';
  readonly policy: string;
  /** Only the fields given; for an edit the rest keep their current value (as `preview`). */
  readonly fields: {
    readonly pattern?: unknown;
    readonly applyTo?: unknown;
    readonly priority?: unknown;
    readonly definition?: unknown;
    /** `edit --set/--unset`: applied to the definition the broker has when the request is filed. */
    readonly definitionPatch?: DefinitionPatch;
  };
  readonly requester: Requester;
  readonly origin: Origin;
  /** `--for`: revert this long after applying (parseTimeBox in src/workflow/timebox/timebox.ts). */
  readonly timeBoxMs?: number;
  /** `--break-glass`: applied at once without approval (where allowed), the requester's reason its reason. */
  readonly breakGlass?: boolean;
}

/**
 * What `Workflow.fileSet` takes: a change set planned from a definitions file (src/definitions/),
 * its steps in the order of writing, and what the plan says the set and its way do to the messages.
 */
export interface FileSetInput {
  readonly env?: string | undefined;
  /** Where the set came from (the file's name as given). */
  readonly source: string;
  readonly steps: readonly SetStep[];
  /** The end state against now: what the approvers acknowledge (with `transitional`). */
  readonly impact?: ImpactTotals;
  /** The queues whose messages the end state removes, or that it deletes. */
  readonly losing?: readonly string[];
  /** What the states on the way remove that the end state does not, summed. */
  readonly transitional?: ImpactTotals;
  /** Objects the plan compared, and those it could not predict. */
  readonly objects?: number;
  readonly unpredictable?: number;
  readonly unchanged?: number;
  /** What the plan's loss depends on and could not be read (`PreviewSnapshot.unread`). */
  readonly unread?: readonly Unread[];
  readonly brokerVersion: string;
  /** Slack user id, or `api:NAME` for a set filed through the bot's API with a token. */
  readonly requester: Requester;
  readonly origin: Origin;
  readonly breakGlass?: boolean;
  /** `--for`: the whole set reverted this long after it is applied (timebox.ts `revertSteps`). */
  readonly timeBoxMs?: number;
  /**
   * A re-created policy's (`Workflow.recreate`): what every object it governs goes through between
   * its two writes (the delete's preview), shown with the set's loss.
   */
  readonly between?: PreviewSummary;
}

/** What `Workflow.recreate` takes: the policy to delete and create again as it is, who asks, why, from where. */
export interface RecreateInput {
  readonly env?: string | undefined;
  readonly vhost: string;
  /** Default `user`. */
  readonly layer?: 'user' | 'operator';
  readonly policy: string;
  readonly requester: Requester;
  readonly origin: Origin;
  readonly breakGlass?: boolean;
}

/** What breaking the glass on a pending request takes: the signed request's user and their reason. */
export interface BreakGlassInput {
  readonly user: string;
  readonly reason: string;
  /** Whether the requester ticked the acknowledgement of the change's loss (the Break glass form). */
  readonly acknowledgedLoss?: boolean;
}

/** An approver's review of a break-glass change. */
export interface ReviewInput {
  readonly user: string;
  readonly reason: string;
  readonly outcome: ReviewOutcome;
  /** For a revert: where it is asked from (its result is posted there); default the approvals channel. */
  readonly origin?: Origin;
}

export type ReviewResult =
  | { readonly outcome: 'reviewed'; readonly request: ChangeRequest; readonly revert?: Filed | FiledSet }
  /** Another approver reviewed it first: `request.review` says who and when. */
  | {
      readonly outcome: 'already-reviewed';
      readonly request: ChangeRequest;
      readonly revert?: Filed | FiledSet;
    };

export interface FreezeInput {
  /** Environment name; undefined: the only (or first) one. */
  readonly env?: string | undefined;
  /** Slack user id of whoever asked (the signed request's user). */
  readonly user: string;
  readonly forMs: number;
  readonly reason: string;
}

export interface Filed {
  readonly request: ChangeRequest;
  /** The whole preview, objects included (for the CSV when the summary does not fit). */
  readonly preview: PreviewAnswer;
}

/** A change set filed: its steps in `request.set` (no preview of one change: each step is planned). */
export interface FiledSet {
  readonly request: ChangeRequest & { readonly set: ChangeSet };
  readonly preview?: undefined;
}

export interface DecideInput {
  readonly kind: DecisionKind;
  /** Slack user id of whoever clicked. */
  readonly user: string;
  readonly reason: string;
  /** The approver ticked the acknowledgement of the loss the request's preview shows. */
  readonly acknowledgedLoss?: boolean;
}

export type DecideResult =
  /** This call decided (a rejection, or the last approval needed). For an approval the apply job is queued. */
  | { readonly outcome: 'decided'; readonly request: ChangeRequest }
  /** This approval was counted; the request still waits for more (`request.approvals`). */
  | { readonly outcome: 'counted'; readonly request: ChangeRequest }
  /** Someone decided first (or the request left `pending` otherwise): `request.decision` says who and when. */
  | { readonly outcome: 'already-decided'; readonly request: ChangeRequest }
  /** Past its deadline: now `expired`, nothing happens. */
  | { readonly outcome: 'expired'; readonly request: ChangeRequest };

/**
 * The workflow as its callers see it. Refusals throw a `WorkflowError` (src/workflow/errors.ts:
 * each code, its facts and its sentence); who may do what is src/workflow/rules.ts's. Nothing is
 * stored on a refusal.
 */
export interface Workflow {
  /**
   * Checks (rules.ts, the broker identity), previews and files a request (state `pending`). A
   * refused preview is in `details.preview` (its `refusals` carry a `field` for inline form
   * errors); `reason-required`: ask for the reason and call again.
   */
  file(input: FileInput): Promise<Filed>;
  /**
   * Files a change set as one request (`action: import`, `set`): the same rules as one change
   * (who may file, the reason, the environment, the broker identity for every vhost and layer it
   * touches, break-glass), approved once, applied by one job in the steps' order (applySet.ts).
   */
  fileSet(input: FileSetInput): Promise<{ readonly request: ChangeRequest }>;
  /**
   * Files the re-creation of a policy (deleted, then created again exactly as it is: what restarts
   * its federation links, docs/broker-facts.md) as a change set of two steps, planned and
   * previewed against the broker now, filed as `fileSet` files one (`nothing-to-do`: no such
   * policy; a refused preview: its sentences).
   */
  recreate(input: RecreateInput): Promise<{ readonly request: ChangeRequest }>;
  /**
   * Refuses (`not-requester`, naming who may ask and approve; `unknown-env`) a user the
   * environment does not let file requests: asked before a form opens. `file` asks it too.
   */
  mayRequest(env: string | undefined, user: string): Promise<void>;
  /**
   * Counts an approval, or rejects, if rules.ts lets this user: one atomic move in Redis. The
   * approval that makes the number the request needs moves it to `approved` and queues the apply
   * job (once, across replicas); one before it is `counted`. Notifies `stateChanged` when this
   * call counted, decided (or expired it).
   */
  decide(id: string, input: DecideInput): Promise<DecideResult>;
  /**
   * Freezes an environment (approvers only, with a reason, at most MAX_FREEZE_MS): requests are
   * filed and approved but not applied until it ends or is lifted. Recorded in the audit trail.
   */
  freeze(input: FreezeInput): Promise<{ readonly env: string; readonly freeze: Freeze }>;
  /**
   * Lifts the freeze (approvers only, with a reason), records it, and releases the requests it
   * held in approval order (each re-checked by the apply job's stale guard). `lifted`: undefined
   * when the environment was not frozen.
   */
  unfreeze(input: Omit<FreezeInput, 'forMs'>): Promise<{
    readonly env: string;
    readonly lifted: Freeze | undefined;
    readonly released: number;
  }>;
  /** The freeze in force on an environment (undefined: none). */
  frozen(env?: string): Promise<{ readonly env: string; readonly freeze: Freeze | undefined }>;
  /** undefined: no such request. */
  get(id: string): Promise<ChangeRequest | undefined>;
  /** Requests in an open state (pending, approved, applying), oldest first. */
  listOpen(env?: string): Promise<ChangeRequest[]>;
  /** Records where the request message was posted, so every later state updates it in place. */
  attachMessage(id: string, channel: string, ts: string): Promise<ChangeRequest>;
  /**
   * Files a new request that restores the before state of audit record `auditId` (action
   * `revert`), filed by `user` with its own preview; it needs its own approval. A record of a set
   * (`set`) reverts the whole set, planned like any set (`FiledSet`). Refuses as `file` does, and
   * `not-found` for an unknown record.
   */
  revertRequestFor(
    auditId: string,
    user: string,
    origin?: Origin,
    reason?: string,
  ): Promise<Filed | FiledSet>;
  /**
   * At a time box's deadline, the policy as the change left it: files the revert of `change`
   * (applied, time-boxed) approved by the change's approver, who approved both together, and
   * queues it. Refuses as `file` and `decide` do, the approver checked again. Idempotent: the
   * revert's id derives from the change's, so a retried job files and queues it once.
   */
  approveTimeBoxRevert(change: ChangeRequest): Promise<ChangeRequest>;
  /**
   * A time-boxed set whose policies changed since (or whose approver may no longer approve): its
   * revert as a set, filed for a new approval under an id derived from the set's (once; a second
   * call returns the first).
   */
  revertSetFor(change: ChangeRequest, reason: string): Promise<ChangeRequest>;
  /**
   * A request gone stale because the change would now remove more than its approval accepted
   * (`loss-grew`): the same change filed again for its requester, with a fresh preview (the
   * fresh numbers), so its approvers decide on them. Refuses as `file` does; `not-found` for an
   * unknown request. Once per stale request: its id derives from the stale one's, and a second
   * call (or one for a request not stale that way) throws.
   */
  fileAgain(staleId: string): Promise<Filed>;
  /** Moves every pending request past its deadline to `expired` (notified); returns how many. */
  expireDue(): Promise<number>;
  /**
   * Applies a pending request without an approval, if rules.ts lets this user (its requester,
   * where the environment allows break-glass, with a reason): the same atomic move out of
   * `pending` as an approval (once across replicas; `already-decided` for the one that lost),
   * then the same apply job (stale guard, loss check; a freeze does not hold it).
   */
  breakGlass(id: string, input: BreakGlassInput): Promise<DecideResult>;
  /**
   * An approver's review of an applied break-glass change, once (rules.ts: an approver, not the
   * one who broke the glass, with a reason): recorded in the audit trail; `reverted` also files the
   * revert (its own request, approved like every revert).
   */
  review(id: string, input: ReviewInput): Promise<ReviewResult>;
  /** Break-glass changes not reviewed yet (applied, or on their way), oldest first. */
  listUnreviewed(env?: string): Promise<ChangeRequest[]>;
}

// --- what the workflow asks of the Slack side ------------------------------------------------

/**
 * Implemented by the Slack side. Every method may be called by any bot replica, once per event;
 * failures are logged by the workflow and never undo a transition.
 */
export interface Notifier {
  /** After every state change (decided, applying, applied, failed, stale, expired): update `request.message` in place. */
  stateChanged(request: ChangeRequest): Promise<void>;
  /** The change is on the broker and recorded: post the audit diff in the approvals channel and in `request.origin`. */
  applied(request: ChangeRequest, record: ChangeRecord): Promise<void>;
  /** Not applied: `request.failure` has the broker's reason. Post it where the request came from. */
  failed(request: ChangeRequest): Promise<void>;
  /** Not applied, the broker is not what was approved: `fresh` is a new preview of the same change, for a new request. */
  stale(request: ChangeRequest, fresh: PreviewResult): Promise<void>;
  /** Half its time to live passed without a decision (once per request): remind its approvers in its thread. */
  reminder(request: ChangeRequest): Promise<void>;
  /** A break-glass change was reviewed (`request.review`): say so in the approvals channel and the origin. */
  reviewed(request: ChangeRequest): Promise<void>;
  /** A break-glass change unreviewed past `breakGlass.reviewBy` (once per request): remind the approvals channel. */
  reviewReminder(request: ChangeRequest): Promise<void>;
}

// --- construction (built once in src/bot/bot.ts) ------------------------------------------------

/** One environment as the workflow needs it (from config). */
export interface WorkflowEnvironment {
  readonly name: string;
  readonly mode: 'read-only' | 'normal' | 'guarded';
  /** Where requests are posted (the environment's, else SLACK_APPROVALS_CHANNEL). */
  readonly approvalsChannel: string | undefined;
  /** How long a request waits for a decision (RMQ_REQUEST_TTL, or the environment's `requestTtl`). */
  readonly requestTtlMs: number;
  /** Distinct approvers a change needs (RMQ_APPROVALS_REQUIRED, or the environment's `approvalsRequired`). Default 1. */
  readonly approvalsRequired?: number;
  /** Break-glass allowed, each to be reviewed within `reviewWithinMs` (RMQ_BREAK_GLASS, or `breakGlass`); absent: off. */
  readonly breakGlass?: { readonly reviewWithinMs: number } | undefined;
  /** The vhosts it is limited to (RMQ_VHOSTS, or `vhosts`); absent: every vhost. */
  readonly vhosts?: readonly string[] | undefined;
}

/**
 * `createWorkflow(options & deps)` (src/workflow/filing/workflow.ts), built once per process in
 * src/bot/bot.ts, which also builds its stores (`WorkflowDeps`).
 */
export interface WorkflowOptions {
  readonly environments: readonly WorkflowEnvironment[];
  /** The broker client of an environment, with the settings that answer Slack. */
  readonly brokerFor: (env: string) => WorkflowBroker;
  readonly approvers: ApproverDirectory;
  /** Queues the apply job (src/workflow/apply/queue.ts `createApplyQueue`). */
  readonly queue: ApplyQueue;
  readonly notifier: Notifier;
  readonly log: Logger;
  /** For tests: the clock. */
  readonly now?: () => Date;
}

/** The producer side of the apply queue: one job per approved request, job id = request id. */
export interface ApplyQueue {
  enqueue(requestId: string): Promise<void>;
  /** Runs now a job held (delayed) by a freeze that has ended or been lifted; nothing for any other. */
  promote(requestId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * `startApplyWorker(options)` (src/workflow/apply/worker.ts): the BullMQ worker that applies approved
 * requests, plus the expiry sweep. Started once per process in src/bot/bot.ts; `close()` on shutdown
 * waits for the job in progress.
 */
export interface ApplyWorkerOptions {
  /** For the queue the sweep puts approved requests back on. */
  readonly redisUrl: string;
  readonly keyPrefix: string;
  /** Broker clients for a background job: long timeouts; the job retries, not the client. */
  readonly brokerFor: (env: string) => WorkflowBroker;
  /** The environments' modes now: the job refuses to write where one is read-only (rules.ts `environmentRefusal`). */
  readonly environments: readonly Pick<WorkflowEnvironment, 'name' | 'mode'>[];
  readonly notifier: Notifier;
  readonly log: Logger;
  /** The bot's: Redis away told once for every connection, the worker's failures then quiet. */
  readonly redisTrouble?: RedisTrouble;
  /** Tries of a job whose failure may pass (network, 5xx, timeout). Default 6. */
  readonly attempts?: number;
  /** First backoff step, doubled per try. Default 2 s. */
  readonly backoffMs?: number;
  /** How long to wait for the objects to report the new policy. Default 60 s. */
  readonly verifyDeadlineMs?: number;
  /** A rollback the broker interrupted (a set's, or a single change's): first wait before it tries again, doubled up to a minute. Default 2 s. */
  readonly rollbackRetryMs?: number;
  /** How the messages are watched after the write, for the audit's `observed` (observe.ts; its defaults). */
  readonly observe?: ObserveOptions;
  /** How often pending requests past their deadline are expired. Default 30 s. */
  readonly sweepIntervalMs?: number;
  /**
   * How long a job's lock lasts without renewal; a worker that died mid-job is noticed after
   * about this long and the job runs again (it finds what was already done). Default 30 s.
   */
  readonly lockDurationMs?: number;
  /**
   * Called once a change is recorded, before the request is marked applied (so again if the job
   * is retried after it: must be idempotent). src/bot/bot.ts schedules a time box's deadline here.
   */
  readonly onRecorded?: (request: ChangeRequest, record: ChangeRecord) => Promise<void>;
  readonly now?: () => Date;
}

export interface ApplyWorker {
  close(): Promise<void>;
}
