// Over 400 lines: every kind of record the trail chains, beside the union that reads them, so that a kind and the union cannot drift apart.
import * as z from 'zod';
import type { ImpactTotals } from '../policy/impact/index.ts';
import { COMPONENT_WORDS, PARAMETER_COMPONENTS } from '../policy/index.ts';
import type { ImpactSummary, PolicyFields } from '../preview/index.ts';
import { ObservationSchema } from './observed.ts';

/**
 * The audit trail's records: what each applied change (by the apply job, src/workflow/) and each
 * change caught outside the bot (src/watch/) appends, and what `history` reads back. Every
 * record read back from Redis is parsed with these schemas.
 */

const Definition = z.record(z.string(), z.unknown());
/** A time as stored: ISO 8601, UTC. */
export const IsoTime = z.iso.datetime();

/** The PolicyFields shape of the preview service (src/preview/preview.ts). */
export const PolicyFieldsSchema = z.object({
  pattern: z.string(),
  applyTo: z.string(),
  priority: z.number(),
  definition: Definition,
}) satisfies z.ZodType<PolicyFields>;

export const AuditObjectSchema = z.object({
  name: z.string(),
  kind: z.string(),
  /** The user policy in force before and after (null: none). */
  before: z.string().nullable(),
  after: z.string().nullable(),
  candidates: z.array(z.string()).optional(),
  /** Keys whose effective value the object lost, gained, or saw change (with values). */
  lost: z.record(z.string(), z.unknown()),
  gained: z.record(z.string(), z.unknown()),
  changed: z.record(z.string(), z.object({ before: z.unknown(), after: z.unknown() })),
});
export type AuditObject = z.infer<typeof AuditObjectSchema>;

/** A federation link or shovel a change starts or stops (src/links/ `ExpectedLink`, without why it cannot run). */
export const LinkRefSchema = z.object({
  kind: z.enum(['exchange', 'queue', 'shovel']),
  vhost: z.string(),
  object: z.string(),
  upstream: z.string().nullable(),
  policy: z.string().nullable(),
});
export type LinkRef = z.infer<typeof LinkRefSchema>;

/** Most links of each list a stored step or record keeps (`startCount`/`stopCount`: all of them). */
export const MAX_LINKS_KEPT = 100;

/** The links a step starts and stops: at most MAX_LINKS_KEPT of each, and how many in all. */
export const StepLinksSchema = z.object({
  start: z.array(LinkRefSchema).max(MAX_LINKS_KEPT),
  stop: z.array(LinkRefSchema).max(MAX_LINKS_KEPT),
  startCount: z.number().int().min(0),
  stopCount: z.number().int().min(0),
});
export type StoredLinks = z.infer<typeof StepLinksSchema>;

/** The preview's loss totals (src/policy/impact/impact.ts `ImpactTotals`). */
export const ImpactTotalsSchema = z.object({
  messagesDeadLettered: z.number().int().min(0),
  messagesLost: z.number().int().min(0),
  queuesDeleted: z.number().int().min(0),
  queuesRefusingPublishes: z.number().int().min(0),
}) satisfies z.ZodType<ImpactTotals>;

const Person = z.object({ user: z.string(), reason: z.string().optional() });

/**
 * What every record has. `hash`: over the canonical JSON of the record as stored, without `hash`
 * (with `prev`, so each record seals the one before), HMAC-SHA256 under RMQ_AUDIT_KEY when
 * `keyed`, else sha256.
 */
const Sealed = {
  /** `a-` + the request id for bot changes; unique in the trail. */
  id: z.string().min(1),
  /** When it was recorded (= applied). */
  at: IsoTime,
  env: z.string(),
  /** Hash of the previous record ('' for the first). */
  prev: z.string(),
  /** `hash` is an HMAC under RMQ_AUDIT_KEY: it cannot be recomputed without the key. */
  keyed: z.literal(true).optional(),
  hash: z.string(),
};

/** One change of a policy: applied by the bot, or caught outside it. */
export const ChangeRecordSchema = z.object({
  ...Sealed,
  vhost: z.string(),
  policy: z.string(),
  /** true: an operator policy. */
  operator: z.boolean(),
  /**
   * `left`: a set's step its rollback did not undo, because someone else changed the policy since
   * it was written (never overwritten blind): `before` is what the rollback would have restored,
   * `after` what the broker held and was left holding. The bot wrote nothing for it.
   */
  action: z.enum(['create', 'edit', 'delete', 'revert', 'outside', 'left']),
  requestId: z.string().optional(),
  requester: Person.optional(),
  /** The first approver (kept for readers of one approver); `approvers` lists them all. */
  approver: Person.optional(),
  /** Every approver, in the order they approved, each with their reason. */
  approvers: z.array(Person).optional(),
  /** For a change caught outside the bot: who the broker says made it (absent: not known). */
  actor: z.string().optional(),
  /**
   * For a change caught outside the bot: how. `events`: the broker's event exchange, which names
   * the user; `interval` or `start`: comparing the policy lists (on the interval, or at start for
   * what changed while the bot was down), which cannot say who made it.
   */
  detectedBy: z.enum(['events', 'interval', 'start', 'reconnect']).optional(),
  requestedAt: IsoTime.optional(),
  approvedAt: IsoTime.optional(),
  appliedAt: IsoTime.optional(),
  before: PolicyFieldsSchema.nullable(),
  after: PolicyFieldsSchema.nullable(),
  /**
   * A federation upstream's, upstream set's or shovel's change (a set's step), not a policy's:
   * `policy` is its name, `before` and `after` are null, and `value` holds its values with every
   * URI masked (a password is never recorded).
   */
  component: z.enum(PARAMETER_COMPONENTS).optional(),
  value: z.object({ before: z.unknown(), after: z.unknown() }).optional(),
  /** The federation links and shovels the change started and stopped, as planned. */
  links: StepLinksSchema.optional(),
  /** Every object whose effective values changed: what it lost, gained and changed. */
  objects: z.array(AuditObjectSchema),
  /** Objects the simulation could not predict. */
  unpredictable: z.number().int().min(0),
  /** After the write: did the broker report what the preview predicted? */
  matchedPreview: z.boolean().optional(),
  /**
   * Predicted: the loss totals the approvers accepted (the request's preview); for a change caught
   * outside the bot, what the rules say it did (`impactDetail`). Absent in records made before
   * the bot read the live state.
   */
  impact: ImpactTotalsSchema.optional(),
  /** Observed: per touched queue the messages before and after the write (src/audit/observed.ts). */
  observed: ObservationSchema.optional(),
  /**
   * For a change caught outside the bot: what it did to the messages, by the preview's rules on
   * the state before it (`impact` holds its totals): the worst objects, how many, when the
   * numbers were read and as of when, what is not known.
   */
  impactDetail: z
    .custom<OutsideImpact>((v) => typeof v === 'object' && v !== null && 'totals' in v && 'objects' in v)
    .optional(),
  revertOf: z.string().optional(),
  /**
   * Found when the watch resumed after a gap (a `gap` record): the change was made at a moment
   * not known between `from` and `to`, never at `at`, when it was noticed. A comparison's find
   * (no event dated it) carries the span since the state was last known, for the same reason.
   */
  between: z.object({ from: IsoTime, to: IsoTime }).optional(),
  /**
   * A change of a set (one request for many policies): the request's id, the change's place in
   * the order of writing, and how many the set holds. Its rollback, if any, is a `revert` of the
   * record with the same `set`.
   */
  set: z.object({ id: z.string(), index: z.number().int().min(0), size: z.number().int().min(1) }).optional(),
  /**
   * Applied without approval (break-glass): by whom and why. The apply record holds `user` and
   * `reason`; `history` adds `reviewedBy`, `reviewReason` and `reviewOutcome` from the review's own
   * record (`action: review`), since a record is never changed once sealed.
   */
  breakGlass: z
    .object({
      user: z.string(),
      reason: z.string(),
      reviewedBy: z.string().optional(),
      reviewReason: z.string().optional(),
      reviewOutcome: z.enum(['reviewed', 'reverted']).optional(),
    })
    .optional(),
});
export type ChangeRecord = z.infer<typeof ChangeRecordSchema>;

/** What a record's change wrote, in words: `policy`, `operator policy`, `federation upstream`, `shovel`, … */
export const subjectWords = (e: {
  readonly operator: boolean;
  readonly component?: ChangeRecord['component'];
}) => (e.component ? COMPONENT_WORDS[e.component] : e.operator ? 'operator policy' : 'policy');

/** What a `left` record means, as `history` says it on both surfaces. */
export const LEFT_WORDS =
  'not undone by the rollback of its set: changed outside this request since the set wrote it, so left as found, never overwritten (before: what the rollback would have restored; after: what the broker holds)';

/**
 * An environment frozen (`actor` froze it), or its freeze ended (`actor` lifted it; absent: it ran
 * out). No policy.
 */
export const FreezeRecordSchema = z.object({
  ...Sealed,
  action: z.enum(['freeze', 'unfreeze']),
  actor: z.string().optional(),
  /** Until when and why; for `unfreeze`, the freeze that ended and why it ended. */
  freeze: z.object({
    until: IsoTime,
    by: z.string(),
    reason: z.string(),
    at: IsoTime,
    endedBecause: z.string().optional(),
  }),
});
export type FreezeRecord = z.infer<typeof FreezeRecordSchema>;

/** An approver's review of a break-glass change (`reviewOf`: that change's record), by `actor`. */
export const ReviewRecordSchema = z.object({
  ...Sealed,
  vhost: z.string(),
  policy: z.string(),
  operator: z.boolean(),
  action: z.literal('review'),
  requestId: z.string(),
  reviewOf: z.string(),
  actor: z.string(),
  /** Kept as it is (`reviewed`), or a revert filed (`reverted`, `revertRequestId`), and why. */
  review: z.object({
    outcome: z.enum(['reviewed', 'reverted']),
    reason: z.string(),
    revertRequestId: z.string().optional(),
  }),
});
export type ReviewRecord = z.infer<typeof ReviewRecordSchema>;

/** A policy as a snapshot holds it: its address and fields. */
export const SnapshotPolicySchema = z.object({
  vhost: z.string(),
  name: z.string(),
  ...PolicyFieldsSchema.shape,
});

/**
 * The whole state the bot found, sealed when it first watched the environment and again when its
 * watch resumed after a gap: every watched vhost's policies and operator policies at `at` (the
 * instant the broker's lists were read), the point from which the state at a later instant is
 * replayed (src/audit/replay.ts).
 */
export const SnapshotRecordSchema = z.object({
  ...Sealed,
  action: z.literal('snapshot'),
  /** `first`: the environment's first watch; `gap`: the watch resumed after the gap recorded just before. */
  why: z.enum(['first', 'gap', 'checkpoint']),
  /** The vhosts watched (RMQ_VHOSTS); null: every vhost. A vhost outside them is not known. */
  vhosts: z.array(z.string()).nullable(),
  /** The broker's version then (`3.13.7`), for the rules that depend on it; absent: not read. */
  version: z.string().optional(),
  policies: z.array(SnapshotPolicySchema),
  operatorPolicies: z.array(SnapshotPolicySchema),
});
export type SnapshotRecord = z.infer<typeof SnapshotRecordSchema>;

/**
 * A span the bot did not watch (every replica down, the broker unreachable, the event feed lost
 * and not yet compared): from the last instant the state was known to the instant it was read
 * again. What the policies were in between is unknown; the changes found at its end carry it as
 * their `between`.
 */
export const GapRecordSchema = z.object({
  ...Sealed,
  action: z.literal('gap'),
  from: IsoTime,
  to: IsoTime,
});
export type GapRecord = z.infer<typeof GapRecordSchema>;

/** A link as a `links` record keeps it (src/watch/linksBurst.ts `WatchedLink`). */
export const LinkEventSchema = z.object({
  kind: z.enum(['exchange', 'queue', 'shovel']),
  vhost: z.string(),
  object: z.string(),
  upstream: z.string().nullable(),
  policy: z.string().nullable(),
  /** Down: `missing`, `stopped`, `stuck`; back: `running`, or `gone` (nothing asks for it any more). */
  state: z.enum(['missing', 'stopped', 'stuck', 'running', 'gone']),
  node: z.string().nullable(),
  /** The broker's error as written, or why the link is missing. */
  reason: z.string().nullable(),
  /** The runbook's next step, for a link down. */
  next: z.string().nullable(),
  /** When it was first seen down. */
  since: IsoTime,
});

/**
 * Federation links or shovels of one vhost that went down (`went: down`: should run, do not) or
 * came back, found by the watch (src/watch/links.ts): an event outside the bot, like a change made
 * outside it, that no policy change made. `detectedBy`: the reading on the interval, at start, or
 * right after a node went down or came back (`nodes` says which).
 */
export const LinksRecordSchema = z.object({
  ...Sealed,
  action: z.literal('links'),
  vhost: z.string(),
  went: z.enum(['down', 'back']),
  detectedBy: z.enum(['interval', 'start', 'nodes']),
  nodes: z.object({ down: z.array(z.string()), up: z.array(z.string()) }).optional(),
  links: z.array(LinkEventSchema),
  /** How many links of the environment are down once this is recorded. */
  stillDown: z.number().int().min(0),
});
export type LinksRecord = z.infer<typeof LinksRecordSchema>;

/**
 * A record of the trail, by `action`. Freeze and review records stored before this union carry a
 * change's fields as padding (`vhost: ''`, `policy: ''`, `before: null`, `objects: []`, …): the
 * schemas do not declare them, so reading drops them, and their seal is checked over the JSON as
 * stored (trail.ts `verify`), so it still holds.
 */
export const AuditRecordSchema = z.discriminatedUnion('action', [
  ChangeRecordSchema,
  FreezeRecordSchema,
  ReviewRecordSchema,
  SnapshotRecordSchema,
  GapRecordSchema,
  LinksRecordSchema,
]);
export type AuditRecord = z.infer<typeof AuditRecordSchema>;
export const isChange = (r: AuditRecord): r is ChangeRecord =>
  r.action !== 'freeze' &&
  r.action !== 'unfreeze' &&
  r.action !== 'review' &&
  r.action !== 'snapshot' &&
  r.action !== 'gap' &&
  r.action !== 'links';
/** The preview's impact summary as a record keeps it: without the list of every losing queue. */
export type OutsideImpact = Omit<ImpactSummary, 'queues'>;
/** The id of a request's review record (`action: review`): one per request, so two reviews record one. */
export const reviewRecordId = (requestId: string) => `v-${requestId}`;

type Unsealed<R> = R extends AuditRecord ? Omit<R, 'prev' | 'hash' | 'keyed'> : never;
/** What a caller gives to append: the trail fills in `prev` and `hash`. */
export type AuditEntry = Unsealed<AuditRecord>;
export type ChangeEntry = Unsealed<ChangeRecord>;
export type LinksEntry = Unsealed<LinksRecord>;
export type SnapshotEntry = Unsealed<SnapshotRecord>;

export interface HistoryQuery {
  /** A policy name, or an object name (every policy that governed it). */
  readonly name?: string;
  readonly vhost?: string;
  readonly env?: string;
  /** The window, on each record's `at`: from `since` (inclusive) to `until` (exclusive), ms since the epoch. */
  readonly since?: number;
  readonly until?: number;
}

export type VerifyResult = (
  | { readonly ok: true; readonly records: number }
  | {
      readonly ok: false;
      /** Records read up to and including the broken one. */
      readonly records: number;
      /** The first record found broken (its id, or its stream position when unreadable). */
      readonly broken: string;
      /**
       * `unkeyed`: with the key, a record not sealed with it (rewritten by someone without it);
       * `log-mismatch`: the chain holds, but it differs from the log given (`against`);
       * `needs-key`: nothing found broken, but records sealed with RMQ_AUDIT_KEY were read without
       * it (`broken` is the first, `unproven` how many): their links hold, their content is unproven.
       */
      readonly why:
        | 'hash-mismatch'
        | 'chain-broken'
        | 'unreadable'
        | 'head-mismatch'
        | 'unkeyed'
        | 'log-mismatch'
        | 'needs-key';
      /** With `needs-key`: how many records are sealed with a key this reader does not have. */
      readonly unproven?: number;
    }
) & {
  /**
   * Whether each record's seal was checked with RMQ_AUDIT_KEY. false: only against accidents,
   * since anyone who can write Redis can recompute a sha256 chain (and a keyed record's seal
   * cannot be checked at all without the key: only its place in the chain is).
   */
  readonly keyed: boolean;
  /** With `--against FILE`: the trail compared with the bot's own log of every record appended. */
  readonly against?: AgainstLog;
};

/** The trail against a log of the bot's (`audit` lines): every difference, by record id. */
export interface AgainstLog {
  readonly file: string;
  /** Records the log holds (distinct ids). */
  readonly logged: number;
  /** Lines with an `audit` object that are not an audit record. */
  readonly unreadableLines: number;
  /** In the log, not in Redis (deleted, or the trail wiped). */
  readonly missing: readonly string[];
  /** In both, with other content in Redis. */
  readonly altered: readonly string[];
  /** In Redis, never logged (inserted, or appended by a process whose log was not given). */
  readonly extra: readonly string[];
}
