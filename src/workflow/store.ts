// Over 400 lines: one class, the request store: every read and every atomic move of a request in Redis.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { replicated } from '../redis/index.ts';
import type { Freeze } from './deciding/freeze.ts';
import { loadScripts } from './lua/scripts.ts';
import { leavesFrom, MOVES, type MoveName, moveNamed } from './moves.ts';
import { approvalsNeeded, awaitsReview, REVIEWED_IN } from './rules.ts';
import {
  type Approval,
  ApprovalSchema,
  type BreakGlass,
  BreakGlassSchema,
  type ChangeRequest,
  ChangeRequestSchema,
  type Decision,
  OPEN_STATES,
  type RequestState,
  type Review,
  ReviewSchema,
} from './types.ts';

/**
 * Change requests in Redis, shared by every bot replica. The keys, the Lua scripts
 * that move a request's state and the reads that parse it back change together.
 *
 * The keys:
 *
 *   <prefix>:request:<id>     HASH  doc (what was filed, JSON, never changed), state, expiresAt (ms),
 *                                   updatedAt, approvals (JSON array, while pending), and per
 *                                   state: decision, message, applyingAt,
 *                                   appliedAt, failure, auditId, verification (JSON where structured)
 *   <prefix>:requests:open    ZSET  id -> createdAt (ms), while the state is open
 *   <prefix>:requests:unreviewed ZSET id -> its review deadline (ms), from break-glass until reviewed
 *   <prefix>:revert-of:<audit id> STRING the key of the last revert of that record a user filed
 *                                   (the Revert button): a second one waits until it is closed;
 *                                   expires REVERT_CLAIM_AFTER_DEADLINE_MS after that revert's deadline
 *
 * Every state change is one Lua script making one of the named moves of moves.ts (MOVES): it
 * checks that the state is one the move leaves from (and the deadline, as the move says) and
 * moves it to the move's state, or reports what holds instead. Two replicas, two clicks or an
 * approve racing a reject: exactly one moves it. The scripts take the states from the table
 * (placeholders filled at load, lua/scripts.ts, or given as ARGV), never a list of their own.
 *
 * A request filed, an approval counted, a state moved or a hold marked returns only once a Redis
 * replica has it, where the primary has replicas (`WAIT`, src/redis/replication.ts, as the audit trail):
 * else it throws NotReplicatedError, and the caller says it was not done (a failover right after
 * cannot lose what was acknowledged); a break-glass move and a review alike. Where the message was posted and a reminder's claim do not
 * wait: losing them costs a message update or a second reminder, not a decision.
 */

/**
 * What a placeholder of the scripts stands for: `{{MOVES.<move>.from}}` (its from-states, a comma
 * list), `.to`, `.deadline`, and `{{REVIEWED_IN}}`, so the states are defined once, in moves.ts.
 */
export function storePlaceholders(): ReadonlyMap<string, string> {
  const values = new Map<string, string>([['REVIEWED_IN', REVIEWED_IN]]);
  for (const [name, move] of Object.entries(MOVES)) {
    values.set(`MOVES.${name}.from`, move.from.join(','));
    values.set(`MOVES.${name}.to`, move.to);
    values.set(`MOVES.${name}.deadline`, move.deadline);
  }
  return values;
}

export const STORE_SCRIPTS = [
  'transition',
  'approve',
  'breakGlass',
  'hold',
  'create',
  'createRevert',
  'review',
  'attachMessage',
] as const;

/** The scripts (lua/*.lua), read once, when the store is first loaded. */
const LUA = loadScripts(STORE_SCRIPTS, storePlaceholders());

/**
 * How long a revert claim outlives its revert's deadline. The claim is read by one thing only,
 * the filing of another revert of the same record (lua/createRevert.lua), and means something only while
 * the revert it names is open. That revert is pending until its deadline at the latest (set when it
 * is filed, at most RMQ_REQUEST_TTL's 30 days), then approved or applying until its apply job ends
 * it: within the job's tries, or once a freeze (a week at most) lets it go, or once a set's
 * rollback gets the broker back. Thirty days more is the time a failed apply job is kept
 * (queue.ts); a revert still open past that (freezes renewed for a month) no longer holds off a
 * second one, whose apply then finds the policy no longer as it planned it and goes stale rather
 * than write twice. Without an expiry, every record ever reverted left its claim behind for good.
 */
export const REVERT_CLAIM_AFTER_DEADLINE_MS = 30 * 86_400_000;

export type ApproveOutcome =
  /** The last approval needed: the request is now `approved`. */
  | { readonly kind: 'approved'; readonly request: ChangeRequest }
  /** Counted; it still waits for more. */
  | { readonly kind: 'counted'; readonly request: ChangeRequest }
  /** This user has approved it already: nothing changed. */
  | { readonly kind: 'duplicate'; readonly request: ChangeRequest }
  | Exclude<TransitionOutcome, { kind: 'ok' }>;

export type TransitionOutcome =
  | { readonly kind: 'ok'; readonly from: RequestState; readonly request: ChangeRequest }
  /** The state was not one of those allowed: `request` is as it stands. */
  | { readonly kind: 'moved'; readonly request: ChangeRequest }
  /** It was pending past its deadline: it is now `expired`. */
  | { readonly kind: 'expired'; readonly request: ChangeRequest }
  | { readonly kind: 'missing' };

/** The moves made by a script of their own (`approve`, `breakGlass`: they count or record more than a state). */
const OWN_SCRIPT = ['approve', 'breakGlass'] as const satisfies readonly MoveName[];

export interface TransitionInput {
  /** Which move of MOVES (moves.ts): its from-states, to-state and deadline rule are the table's. */
  readonly move: Exclude<MoveName, (typeof OWN_SCRIPT)[number]>;
  /** Fields to set with the move (structured values are stored as JSON). */
  readonly set?: Partial<
    Pick<
      ChangeRequest,
      | 'decision'
      | 'applyingAt'
      | 'appliedAt'
      | 'failure'
      | 'auditId'
      | 'verification'
      | 'staleBecause'
      | 'setProgress'
    >
  >;
}

/** Fields kept beside `doc`, parsed as JSON. */
const JSON_FIELDS = [
  'decision',
  'approvals',
  'held',
  'message',
  'failure',
  'verification',
  'breakGlass',
  'review',
  'setProgress',
] as const;
const TEXT_FIELDS = [
  'applyingAt',
  'appliedAt',
  'auditId',
  'updatedAt',
  'remindedAt',
  'staleBecause',
  'reviewRemindedAt',
] as const;

/** Filed once, never changed afterwards. */
type Doc = Omit<
  ChangeRequest,
  'state' | 'updatedAt' | (typeof JSON_FIELDS)[number] | (typeof TEXT_FIELDS)[number]
>;

export function newRequestId(): string {
  return `r-${randomBytes(10).toString('hex')}`;
}

const isOpen = (s: RequestState) => OPEN_STATES.includes(s);

export interface RequestStoreOptions {
  /** How long a write waits for a replica (default REPLICATION_WAIT_MS of src/redis/replication.ts). */
  readonly replicationWaitMs?: number;
}

export class RequestStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #now: () => Date;
  readonly #replicationWaitMs: number | undefined;

  constructor(
    redis: Redis,
    keyPrefix: string,
    now: () => Date = () => new Date(),
    options: RequestStoreOptions = {},
  ) {
    this.#redis = redis;
    this.#prefix = keyPrefix;
    this.#now = now;
    this.#replicationWaitMs = options.replicationWaitMs;
  }

  /** Once a replica has what this connection wrote, where there is one (see the top). */
  #replicated(what: string): Promise<void> {
    return replicated(this.#redis, `request store: ${what}`, this.#replicationWaitMs);
  }

  #key(id: string): string {
    return `${this.#prefix}:request:${id}`;
  }

  get #open(): string {
    return `${this.#prefix}:requests:open`;
  }

  get #unreviewed(): string {
    return `${this.#prefix}:requests:unreviewed`;
  }

  /**
   * Stores a new request in one script: all of it or nothing, and never over a request of the same
   * id (a derived id filed on two replicas at once: one stores it). False when one was there.
   */
  async create(request: ChangeRequest): Promise<boolean> {
    const { key, args } = this.#newRequest(request);
    const created = await this.#redis.eval(LUA.create, 2, key, this.#open, ...args);
    if (created !== 1) return false;
    await this.#replicated(`request ${request.id} filed`);
    return true;
  }

  /**
   * Stores a user's revert of audit record `request.revertOf`, unless a revert of it is open
   * already (two Revert clicks at once, on one replica or two: one is filed): then that one's id.
   */
  async createRevert(
    request: ChangeRequest & { revertOf: string },
  ): Promise<{ readonly openAlready?: string }> {
    const { key, args } = this.#newRequest(request);
    const claim = `${this.#prefix}:revert-of:${request.revertOf}`;
    const until = String(Date.parse(request.expiresAt) + REVERT_CLAIM_AFTER_DEADLINE_MS);
    const held = (await this.#redis.eval(
      LUA.createRevert,
      3,
      key,
      this.#open,
      claim,
      ...args,
      until,
    )) as string;
    if (held !== '') return { openAlready: held.slice(this.#key('').length) };
    await this.#replicated(`request ${request.id} filed`);
    return {};
  }

  /** A new request's key and the fields lua/create.lua stores (see lua/includes/storeNew.lua). */
  #newRequest(request: ChangeRequest): { key: string; args: string[] } {
    const r = ChangeRequestSchema.parse(request);
    const {
      state,
      updatedAt,
      decision: _d,
      approvals: _as,
      message: _m,
      failure: _f,
      verification: _v,
      applyingAt: _a,
      appliedAt: _p,
      auditId: _i,
      remindedAt: _r,
      held: _h,
      breakGlass: _b,
      review: _rv,
      reviewRemindedAt: _rr,
      setProgress: _sp,
      ...doc
    } = r;
    return {
      key: this.#key(r.id),
      args: [
        JSON.stringify(doc satisfies Doc),
        state,
        updatedAt,
        String(Date.parse(r.expiresAt)),
        isOpen(state) ? String(Date.parse(r.createdAt)) : '',
      ],
    };
  }

  async get(id: string): Promise<ChangeRequest | undefined> {
    if (!/^r-[0-9a-f]{20}$/.test(id)) return undefined;
    return this.#read(await this.#redis.hgetall(this.#key(id)));
  }

  /** Requests in an open state, oldest first. */
  async listOpen(env?: string): Promise<ChangeRequest[]> {
    const keys = await this.#redis.zrange(this.#open, 0, -1);
    if (keys.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const k of keys) pipeline.hgetall(k);
    const replies = (await pipeline.exec()) ?? [];
    const out: ChangeRequest[] = [];
    for (const [err, hash] of replies) {
      if (err) throw err;
      const r = this.#read(hash as Record<string, string>);
      if (r && isOpen(r.state) && (env === undefined || r.env === env)) out.push(r);
    }
    return out;
  }

  /** Pending requests whose deadline has passed (candidates: `expire` decides atomically). */
  async duePending(): Promise<string[]> {
    const now = this.#now().getTime();
    return (await this.listOpen())
      .filter((r) => leavesFrom('expire', r.state) && Date.parse(r.expiresAt) <= now)
      .map((r) => r.id);
  }

  /** Pending requests past half their time to live and not yet reminded of (candidates: `claimReminder` decides). */
  async dueReminders(): Promise<ChangeRequest[]> {
    const now = this.#now().getTime();
    return (await this.listOpen()).filter((r) => {
      const created = Date.parse(r.createdAt);
      const half = created + (Date.parse(r.expiresAt) - created) / 2;
      return leavesFrom('approve', r.state) && r.remindedAt === undefined && now >= half;
    });
  }

  /**
   * Marks an approved request as held by `freeze` (its message says so): true when this call
   * marked it (it was approved and not yet held by this freeze).
   */
  async hold(id: string, freeze: Freeze): Promise<boolean> {
    const held = JSON.stringify(freeze);
    const done = await this.#redis.eval(LUA.hold, 1, this.#key(id), held);
    if (done === 1) await this.#replicated(`request ${id} held`);
    return done === 1;
  }

  /**
   * Makes the `breakGlass` move: to `approved` without an approval, in one script:
   * refused past the deadline (expired) and out of `pending` (moved), so of two clicks on two
   * replicas one moves it. From then it is unreviewed until `review`.
   */
  async breakGlass(id: string, breakGlass: BreakGlass): Promise<ApproveOutcome> {
    const now = this.#now();
    const [kind] = (await this.#redis.eval(
      LUA.breakGlass,
      3,
      this.#key(id),
      this.#open,
      this.#unreviewed,
      String(now.getTime()),
      now.toISOString(),
      JSON.stringify(BreakGlassSchema.parse(breakGlass)),
      String(Date.parse(breakGlass.reviewBy)),
    )) as [string];
    if (kind === 'missing') return { kind };
    // Written: the request moved out of pending (or expired), as an approval's move waits.
    if (kind === 'approved' || kind === 'expired') await this.#replicated(`request ${id} break glass`);
    const request = await this.get(id);
    if (!request) return { kind: 'missing' };
    if (kind === 'approved' || kind === 'moved' || kind === 'expired') return { kind, request };
    throw new Error(`request store: unexpected reply ${JSON.stringify(kind)}`);
  }

  /**
   * Records the review of an applied break-glass change: `reviewed` for exactly one caller, on any
   * replica. `revert`, a review's revert request, is stored in the same move, and only when this
   * review is the one that holds.
   */
  async review(
    id: string,
    review: Review,
    revert?: ChangeRequest,
  ): Promise<
    | { readonly kind: 'reviewed' | 'already-reviewed' | 'not-reviewable'; readonly request: ChangeRequest }
    | { readonly kind: 'missing' }
  > {
    const given = JSON.stringify(ReviewSchema.parse(review));
    const withRevert = revert ? this.#newRequest(revert) : undefined;
    const kind = (await (withRevert
      ? this.#redis.eval(
          LUA.review,
          4,
          this.#key(id),
          this.#unreviewed,
          withRevert.key,
          this.#open,
          given,
          ...withRevert.args,
        )
      : this.#redis.eval(LUA.review, 2, this.#key(id), this.#unreviewed, given))) as string;
    if (kind === 'reviewed') await this.#replicated(`request ${id} reviewed`);
    const request = kind === 'missing' ? undefined : await this.get(id);
    if (!request) return { kind: 'missing' };
    if (kind === 'reviewed' || kind === 'already-reviewed' || kind === 'not-reviewable')
      return { kind, request };
    throw new Error(`request store: unexpected reply ${JSON.stringify(kind)}`);
  }

  /**
   * Break-glass changes still waiting for their review, oldest first (`due`: only those past their
   * review deadline). One that did not apply (failed, stale) has nothing to review and leaves the set.
   */
  async unreviewed(options: { env?: string; due?: boolean } = {}): Promise<ChangeRequest[]> {
    const max = options.due ? String(this.#now().getTime()) : '+inf';
    const keys = await this.#redis.zrangebyscore(this.#unreviewed, '-inf', max);
    const out: ChangeRequest[] = [];
    for (const key of keys) {
      const r = this.#read(await this.#redis.hgetall(key));
      if (!r || !awaitsReview(r)) {
        // Only the sweep tidies: a reader (the terminal's `requests`) writes nothing.
        if (options.due) await this.#redis.zrem(this.#unreviewed, key);
        continue;
      }
      if (options.env === undefined || r.env === options.env) out.push(r);
    }
    return out.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
  }

  /** Break-glass changes still waiting for their review, oldest first (`requests` lists them). */
  listUnreviewed(env?: string): Promise<ChangeRequest[]> {
    return this.unreviewed(env === undefined ? {} : { env });
  }

  /** Claims the reminder of a break-glass change's review: true for exactly one caller, on any replica. */
  async claimReviewReminder(id: string): Promise<boolean> {
    return (await this.#redis.hsetnx(this.#key(id), 'reviewRemindedAt', this.#now().toISOString())) === 1;
  }

  /** Claims the reminder of a request: true for exactly one caller, on any replica. */
  async claimReminder(id: string): Promise<boolean> {
    return (await this.#redis.hsetnx(this.#key(id), 'remindedAt', this.#now().toISOString())) === 1;
  }

  /** Requests approved but not finished: the apply job must exist for each (restart, lost enqueue). */
  async unfinished(): Promise<ChangeRequest[]> {
    return (await this.listOpen()).filter(
      (r) => leavesFrom('start', r.state) || leavesFrom('finish', r.state),
    );
  }

  /** Where the request message was posted. Not a state change: any state may take it. */
  async attachMessage(id: string, channel: string, ts: string): Promise<ChangeRequest | undefined> {
    const key = this.#key(id);
    // Set only when the request exists: a stray id must not create a half request.
    const done = await this.#redis.eval(LUA.attachMessage, 1, key, JSON.stringify({ channel, ts }));
    return done === 1 ? this.get(id) : undefined;
  }

  /**
   * Counts `approval` on a pending request, in one script: refused past the deadline (expired),
   * out of `pending` (moved) and for a user who approved it already (duplicate); the approval that
   * makes the number needed makes the `approve` move, so only one caller, on any replica, sees that.
   * The rules are rules.ts's: approvalsNeeded (how many) and hasApproved (an approver counts once,
   * by their user id), asked by the workflow first for its refusal; the script holds the second
   * again atomically only because two clicks on two replicas both pass that first ask.
   */
  async approve(
    filed: Pick<ChangeRequest, 'id' | 'approvalsRequired'>,
    approval: Approval,
  ): Promise<ApproveOutcome> {
    const { id } = filed;
    const now = this.#now();
    const decision: Decision = { kind: 'approve', ...approval };
    const [kind] = (await this.#redis.eval(
      LUA.approve,
      2,
      this.#key(id),
      this.#open,
      approval.by,
      String(now.getTime()),
      now.toISOString(),
      JSON.stringify(ApprovalSchema.parse(approval)),
      JSON.stringify(decision),
      // How many: rules.ts's approvalsNeeded is the rule, the script only enforces the number
      // (approvalsRequired is filed once and never changed, so the caller's copy is the stored one).
      String(approvalsNeeded(filed)),
    )) as [string];
    if (kind === 'missing') return { kind };
    // Written: the approval counted (the request approved with it), or the request expired.
    if (kind === 'approved' || kind === 'counted' || kind === 'expired')
      await this.#replicated(`request ${id} ${kind}`);
    const request = await this.get(id);
    if (!request) return { kind: 'missing' };
    if (
      kind === 'approved' ||
      kind === 'counted' ||
      kind === 'duplicate' ||
      kind === 'moved' ||
      kind === 'expired'
    )
      return { kind, request };
    throw new Error(`request store: unexpected reply ${JSON.stringify(kind)}`);
  }

  /**
   * Makes the move `t.move` names (MOVES), or says why not; a name not in the table (or one of
   * OWN_SCRIPT, made by approve and breakGlass) throws.
   */
  async transition(id: string, t: TransitionInput): Promise<TransitionOutcome> {
    const move = moveNamed(t.move);
    if (!move || (OWN_SCRIPT as readonly string[]).includes(t.move))
      throw new Error(`request store: no move named ${JSON.stringify(t.move)} made here (moves.ts)`);
    const now = this.#now();
    const pairs: string[] = [];
    for (const [field, value] of Object.entries(t.set ?? {})) {
      if (value === undefined) continue;
      pairs.push(field, typeof value === 'string' ? value : JSON.stringify(value));
    }
    const reply = (await this.#redis.eval(
      LUA.transition,
      2,
      this.#key(id),
      this.#open,
      move.from.join(','),
      move.to,
      String(now.getTime()),
      move.deadline,
      now.toISOString(),
      isOpen(move.to) ? '0' : '1',
      ...pairs,
    )) as [string, string?];
    const [kind, from] = reply;
    if (kind === 'missing') return { kind };
    if (kind === 'ok' || kind === 'expired')
      await this.#replicated(`request ${id} ${kind === 'ok' ? move.to : kind}`);
    const request = await this.get(id);
    if (!request) return { kind: 'missing' };
    if (kind === 'ok') return { kind, from: from as RequestState, request };
    if (kind === 'moved' || kind === 'expired') return { kind, request };
    throw new Error(`request store: unexpected reply ${JSON.stringify(reply)}`);
  }

  #read(hash: Record<string, string>): ChangeRequest | undefined {
    if (!hash.doc || !hash.state) return undefined;
    const extra: Record<string, unknown> = {};
    for (const f of JSON_FIELDS) if (hash[f] !== undefined) extra[f] = JSON.parse(hash[f]);
    for (const f of TEXT_FIELDS) if (hash[f] !== undefined) extra[f] = hash[f];
    return ChangeRequestSchema.parse({ ...JSON.parse(hash.doc), ...extra, state: hash.state });
  }
}
