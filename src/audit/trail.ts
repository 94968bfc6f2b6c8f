// Over 400 lines: one class over one Redis stream: the append, the window read by bisection, the reads of a replay and the chain's verification share its keys and its parsing.
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { Logger } from '../log/index.ts';
import { sorted } from '../policy/index.ts';
import { replicated } from '../redis/index.ts';
import {
  type AgainstLog,
  type AuditEntry,
  type AuditRecord,
  AuditRecordSchema,
  type ChangeEntry,
  type ChangeRecord,
  type GapRecord,
  type HistoryQuery,
  isChange,
  reviewRecordId,
  type SnapshotEntry,
  type SnapshotRecord,
  type VerifyResult,
} from './types.ts';

/**
 * The audit trail: one append-only Redis stream of applied changes, each record chained to the
 * one before by hash, so a removed or altered record is found by `verify`.
 *
 *   <prefix>:audit         STREAM  field `record`: the record's canonical JSON (with prev and hash)
 *   <prefix>:audit:head    the hash of the last record
 *   <prefix>:audit:ids     HASH    record id -> stream id (one record per id: an apply recorded twice is recorded once)
 *   <prefix>:audit:snapshots:<env>  ZSET  stream id of each `snapshot` record, scored by its `at` (ms)
 *   <prefix>:audit:gaps:<env>       ZSET  stream id of each `gap` record, scored by its `to` (ms)
 *   <prefix>:audit:appended         the count of records appended (since this key was written first)
 *   <prefix>:audit:appended:snapshot  HASH  env -> that count when its last snapshot was appended
 *   <prefix>:audit:changes          HASH  env -> the count of its changes appended: its mark (`markOf`)
 *
 * The two indexes are written by the same script as the record, so the snapshot nearest an instant
 * (and the gap around it) is found in one read, never by reading the stream (`--at`, replay.ts).
 * A replay from a snapshot reads the changes after it in the chain; so a snapshot is appended only
 * if no change of its environment was appended since its reading began (`appendSnapshot`): else
 * one made after that reading would precede it, and be read by no replay from it.
 *
 * The bot never trims the stream. The trail survives a Redis restart only with persistence
 * (AOF, see the README's backup and restore). Two copies beyond it: every record appended is logged as one JSON line
 * `{"audit": {…}}` (the record as `history --json` shows it), and where the primary has replicas
 * an append returns only once one of them has the record (`WAIT`, src/redis/replication.ts), so a
 * failover right after cannot lose what was acknowledged.
 *
 * What the chain proves. Without RMQ_AUDIT_KEY each record's hash is a sha256 over it and its
 * predecessor's hash: an accident (a lost or edited record) is found, but anyone who can write
 * Redis can rewrite a record and every hash after it, the head included. With the key, each hash
 * is an HMAC under it (the key is never in Redis), so a record cannot be rewritten, inserted or
 * re-sealed without it; what the chain still cannot show alone is its own end: the last records
 * deleted (and the head set back), or the whole trail wiped. The log is that anchor: `verify`
 * with `against` (the logged records, `log.ts`) names each record missing, altered or extra.
 */

/**
 * The append's script (lua/append.lua), read once when this module loads: beside this module
 * under tsx and vitest (src/audit/lua/), beside the bundle in dist/ (`dist/lua/`: scripts/build.ts
 * copies it there).
 */
const APPEND = readFileSync(new URL('./lua/append.lua', import.meta.url), 'utf8');

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value));
}

/**
 * The seal of a record (without its own hash, with `prev`): HMAC-SHA256 under `key` (a record
 * with `keyed: true`), else sha256, over its canonical JSON. `verify` seals the JSON as stored,
 * not as parsed: records stored before the union on `action` keep the padding they were sealed with.
 */
export function recordHash(record: object, key?: string): string {
  const text = canonicalJson(record);
  return key === undefined
    ? createHash('sha256').update(text).digest('hex')
    : createHmac('sha256', key).update(text).digest('hex');
}

/** A record's content as one digest, to compare the trail with the log. */
export function recordDigest(record: AuditRecord): string {
  return createHash('sha256').update(canonicalJson(record)).digest('hex');
}

/** What `verify` compares the trail with: the log's records, by id (`log.ts`). */
export interface LoggedRecords {
  readonly file: string;
  /** Record id -> the digests logged for it (`recordDigest`). */
  readonly digests: ReadonlyMap<string, ReadonlySet<string>>;
  readonly unreadableLines: number;
}

const BATCH = 500;

/**
 * How far a record's `at` (the bot's clock when it applied or caught the change) may stray from its
 * place in the stream (Redis's clock when it was appended): a replica's clock, a set's steps
 * stamped once. A window is read this far past each of its ends, and filtered on `at` exactly.
 */
export const WINDOW_SLACK_MS = 10 * 60_000;

export interface AuditTrailOptions {
  /**
   * RMQ_AUDIT_KEY: records are sealed with an HMAC under it, and `verify` checks them with it
   * (then every record must be sealed with it). Never written to Redis or the log.
   */
  readonly key?: string;
  /** Where each record appended is logged, as one line `{"audit": {…}}`. */
  readonly log?: Pick<Logger, 'info'>;
  /** How long an append waits for a replica (default REPLICATION_WAIT_MS of src/redis/replication.ts). */
  readonly replicationWaitMs?: number;
}

export class AuditTrail {
  readonly #redis: Redis;
  readonly #stream: string;
  readonly #head: string;
  readonly #ids: string;
  readonly #prefix: string;
  readonly #options: AuditTrailOptions;

  constructor(redis: Redis, keyPrefix: string, options: AuditTrailOptions = {}) {
    this.#redis = redis;
    this.#options = options;
    this.#stream = `${keyPrefix}:audit`;
    this.#head = `${keyPrefix}:audit:head`;
    this.#ids = `${keyPrefix}:audit:ids`;
    this.#prefix = keyPrefix;
  }

  /** The index a record is filed in (snapshots by `at`, gaps by `to`), or none. */
  #indexOf(record: AuditRecord): { key: string; score: number } | undefined {
    if (record.action === 'snapshot')
      return { key: this.#snapshots(record.env), score: Date.parse(record.at) };
    if (record.action === 'gap') return { key: this.#gaps(record.env), score: Date.parse(record.to) };
    return undefined;
  }

  get #appended(): string {
    return `${this.#prefix}:audit:appended`;
  }

  get #appendedAtSnapshot(): string {
    return `${this.#prefix}:audit:appended:snapshot`;
  }

  /**
   * How many records (of every environment) were appended since the environment's last snapshot:
   * what a replay from it reads at most. A trail older than the count counts from when it began.
   */
  async appendedSinceSnapshot(env: string): Promise<number> {
    const [total, atSnapshot] = await Promise.all([
      this.#redis.get(this.#appended),
      this.#redis.hget(this.#appendedAtSnapshot, env),
    ]);
    return Number(total ?? 0) - Number(atSnapshot ?? 0);
  }

  get #changes(): string {
    return `${this.#prefix}:audit:changes`;
  }

  /**
   * The environment's mark: how many of its changes were appended. Read before the broker's
   * policies are, it is what a snapshot of that reading is appended against (`appendSnapshot`).
   */
  async markOf(env: string): Promise<string> {
    return (await this.#redis.hget(this.#changes, env)) ?? '0';
  }

  #snapshots(env: string): string {
    return `${this.#prefix}:audit:snapshots:${env}`;
  }

  #gaps(env: string): string {
    return `${this.#prefix}:audit:gaps:${env}`;
  }

  /**
   * Appends one record, chained to the last. Idempotent by `entry.id`: a second append of the
   * same id returns the record already stored. Returns once a replica has it, where there is one
   * (else throws NotReplicatedError: the record is in the primary, and appending it again waits
   * again).
   */
  append(entry: ChangeEntry): Promise<ChangeRecord>;
  append(entry: AuditEntry): Promise<AuditRecord>;
  async append(entry: AuditEntry): Promise<AuditRecord> {
    // Without a mark, never `grown`.
    return (await this.#append(entry, '')) as AuditRecord;
  }

  /**
   * Appends a snapshot as `append` does, only if no change of its environment was appended since
   * `mark` (`markOf`, read before its reading began); `grown` when one was: nothing is appended,
   * and the caller reads the broker again (the change may be newer than its reading, and a
   * snapshot chained after its record would hide it from every replay). Idempotent by id.
   */
  async appendSnapshot(entry: SnapshotEntry, mark: string): Promise<SnapshotRecord | 'grown'> {
    return (await this.#append(entry, mark)) as SnapshotRecord | 'grown';
  }

  /** `since`: a snapshot's mark ('' = none, appended whatever was appended before it). */
  async #append(entry: AuditEntry, since: string): Promise<AuditRecord | 'grown'> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const prev = (await this.#redis.get(this.#head)) ?? '';
      const key = this.#options.key;
      const body = key === undefined ? { ...entry, prev } : { ...entry, prev, keyed: true as const };
      // Sealed as it will be stored: what the schema of its action keeps (verify seals the stored JSON).
      const { hash: _, ...stored } = AuditRecordSchema.parse({ ...body, hash: '' });
      const record = { ...stored, hash: recordHash(stored, key) } as AuditRecord;
      const index = this.#indexOf(record);
      const [kind] = (await this.#redis.eval(
        APPEND,
        7,
        this.#stream,
        this.#head,
        this.#ids,
        index?.key ?? '',
        this.#appended,
        this.#appendedAtSnapshot,
        this.#changes,
        prev,
        record.id,
        canonicalJson(record),
        record.hash,
        index?.score ?? 0,
        record.action === 'snapshot' ? record.env : '',
        isChange(record) ? record.env : '',
        record.action === 'snapshot' ? since : '',
      )) as [string, string];
      if (kind === 'ok') {
        this.#options.log?.info({ audit: record }, 'audit record');
        await this.#replicated(record.id);
        return record;
      }
      if (kind === 'exists') {
        const stored = await this.get(entry.id);
        if (stored) {
          await this.#replicated(stored.id);
          return stored;
        }
        throw new Error(`audit: record ${entry.id} is indexed but not in the stream`);
      }
      if (kind === 'grown') return kind;
      // 'moved': another replica appended meanwhile; chain to the new head.
    }
    throw new Error('audit: the trail kept moving; record not appended');
  }

  #replicated(id: string): Promise<void> {
    return replicated(this.#redis, `audit: record ${id}`, this.#options.replicationWaitMs);
  }

  /** The review record (`action: review`) of a break-glass change's record; undefined: not reviewed. */
  reviewOf(record: ChangeRecord): Promise<AuditRecord | undefined> {
    return record.requestId ? this.get(reviewRecordId(record.requestId)) : Promise.resolve(undefined);
  }

  async get(id: string): Promise<AuditRecord | undefined> {
    const sid = await this.#redis.hget(this.#ids, id);
    if (!sid) return undefined;
    const rows = await this.#redis.xrange(this.#stream, sid, sid);
    const text = rows[0] && fieldOf(rows[0][1]);
    return text ? AuditRecordSchema.parse(JSON.parse(text)) : undefined;
  }

  /** The record at a stream id, or undefined (gone, or unreadable). */
  async #atSid(sid: string): Promise<AuditRecord | undefined> {
    const rows = await this.#redis.xrange(this.#stream, sid, sid);
    const parsed = AuditRecordSchema.safeParse(safeJson(rows[0] && fieldOf(rows[0][1])));
    return parsed.success ? parsed.data : undefined;
  }

  /**
   * The environment's snapshot nearest `ms`: the last at or before it (`before`), or the first
   * after it (`after`); with its stream id. One read of the index, one of the stream.
   */
  async snapshotNear(
    env: string,
    ms: number,
    side: 'before' | 'after',
  ): Promise<{ sid: string; record: SnapshotRecord } | undefined> {
    const [sid] =
      side === 'before'
        ? await this.#redis.zrevrangebyscore(this.#snapshots(env), ms, '-inf', 'LIMIT', 0, 1)
        : await this.#redis.zrangebyscore(this.#snapshots(env), `(${ms}`, '+inf', 'LIMIT', 0, 1);
    if (!sid) return undefined;
    const record = await this.#atSid(sid);
    return record?.action === 'snapshot' ? { sid, record } : undefined;
  }

  /** The environment's gap whose span holds `ms` (from inclusive, to exclusive), if any. */
  async gapAt(env: string, ms: number): Promise<GapRecord | undefined> {
    // Gaps do not overlap: the first to end after `ms` is the only one that can hold it.
    const [sid] = await this.#redis.zrangebyscore(this.#gaps(env), `(${ms}`, '+inf', 'LIMIT', 0, 1);
    if (!sid) return undefined;
    const record = await this.#atSid(sid);
    return record?.action === 'gap' && Date.parse(record.from) <= ms ? record : undefined;
  }

  /**
   * The records after stream id `sid` (exclusive), oldest first, up to those recorded
   * WINDOW_SLACK_MS past `untilMs` (a change is recorded a moment after it was made: a burst
   * gathers, a replica's clock strays), so every record made by `untilMs` is among them.
   */
  async after(sid: string, untilMs: number): Promise<AuditRecord[]> {
    const out: AuditRecord[] = [];
    let start = `(${sid}`;
    for (;;) {
      const rows = await this.#redis.xrange(this.#stream, start, '+', 'COUNT', BATCH);
      for (const [id, fields] of rows) {
        start = `(${id}`;
        const parsed = AuditRecordSchema.safeParse(safeJson(fieldOf(fields)));
        if (!parsed.success) continue;
        if (Date.parse(parsed.data.at) > untilMs + WINDOW_SLACK_MS) return out;
        out.push(parsed.data);
      }
      if (rows.length < BATCH) return out;
    }
  }

  /**
   * Records matching the query, newest first: those of the named policy, or of any policy that
   * governed an object of that name.
   */
  async list(query: HistoryQuery = {}, limit = Number.POSITIVE_INFINITY): Promise<AuditRecord[]> {
    return (await this.scan(query, limit)).entries;
  }

  /**
   * As `list`, and how many records could not be read (never matched, never hidden): of the
   * whole trail, or of the part read before `limit` entries were found. With `since`/`until`, only
   * the records whose `at` is in [since, until), and only that part of the stream is read (its end
   * found by bisection, the reading stopped WINDOW_SLACK_MS before `since`).
   */
  async scan(
    query: HistoryQuery = {},
    limit = Number.POSITIVE_INFINITY,
  ): Promise<{ entries: AuditRecord[]; unreadable: number }> {
    const entries: AuditRecord[] = [];
    let unreadable = 0;
    const { since, until } = query;
    // A window: start past its end (found by bisection), stop once the records are well before it.
    let end = until === undefined ? '+' : await this.#firstAtOrAfter(until + WINDOW_SLACK_MS);
    for (;;) {
      const rows = await this.#redis.xrevrange(this.#stream, end, '-', 'COUNT', BATCH);
      for (const [sid, fields] of rows) {
        end = `(${sid}`;
        const parsed = AuditRecordSchema.safeParse(safeJson(fieldOf(fields)));
        if (!parsed.success) {
          unreadable++;
          continue;
        }
        const r = parsed.data;
        const at = Date.parse(r.at);
        if (since !== undefined && at < since - WINDOW_SLACK_MS) return { entries, unreadable };
        if ((since !== undefined && at < since) || (until !== undefined && at >= until)) continue;
        if (query.env !== undefined && r.env !== query.env) continue;
        // A freeze names no vhost and no policy: only a query by environment alone finds it.
        if (query.vhost !== undefined && (!('vhost' in r) || r.vhost !== query.vhost)) continue;
        if (
          query.name !== undefined &&
          !('policy' in r && r.policy === query.name) &&
          !(isChange(r) && r.objects.some((o) => o.name === query.name)) &&
          !(r.action === 'links' && r.links.some((l) => l.object === query.name))
        )
          continue;
        entries.push(r);
        if (entries.length >= limit) return { entries, unreadable };
      }
      if (rows.length < BATCH) return { entries, unreadable };
    }
  }

  /**
   * The end (exclusive, for XREVRANGE) before the first record whose `at` is at or after `ms`, or
   * `+` when there is none: a bisection on the stream ids (append times, in order), reading one
   * record per step, so a window of a long trail is found in about 40 reads, never by reading it
   * whole. It relies on `at` following the stream's order within WINDOW_SLACK_MS.
   */
  async #firstAtOrAfter(ms: number): Promise<string> {
    const [first] = await this.#redis.xrange(this.#stream, '-', '+', 'COUNT', 1);
    const [last] = await this.#redis.xrevrange(this.#stream, '+', '-', 'COUNT', 1);
    if (!first || !last) return '+';
    // The first readable record at or after stream time `t`; an unreadable one reads as before `ms`
    // (the search moves later, and the scan reads more, never less).
    const probe = async (t: number): Promise<{ sid: string; at: number } | undefined> => {
      const rows = await this.#redis.xrange(this.#stream, `${t}`, '+', 'COUNT', 1);
      const row = rows[0];
      if (!row) return undefined;
      const parsed = AuditRecordSchema.safeParse(safeJson(fieldOf(row[1])));
      return { sid: row[0], at: parsed.success ? Date.parse(parsed.data.at) : Number.NEGATIVE_INFINITY };
    };
    let lo = streamMs(first[0]);
    let hi = streamMs(last[0]) + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const p = await probe(mid);
      if (p && p.at >= ms) hi = mid;
      else lo = mid + 1;
    }
    const found = await probe(lo);
    return found && found.at >= ms ? `(${found.sid}` : '+';
  }

  /**
   * Walks the chain from the first record and names the first one broken; with `against`, also
   * every record that differs from the log (the walk goes on past a break to find them all).
   */
  async verify(against?: LoggedRecords): Promise<VerifyResult> {
    const key = this.#options.key;
    let chain: { broken: string; why: BrokenWhy } | undefined;
    const breaks = (broken: string, why: BrokenWhy) => {
      chain ??= { broken, why };
    };
    let prev = '';
    let last = '';
    let records = 0;
    let brokenAt = 0;
    // Without the key, the keyed records: their links are checked, their content cannot be.
    let unproven = 0;
    let firstUnproven = '';
    const seen = new Set<string>();
    const altered: string[] = [];
    const extra: string[] = [];
    let start = '-';
    for (;;) {
      const rows = await this.#redis.xrange(this.#stream, start, '+', 'COUNT', BATCH);
      for (const [sid, fields] of rows) {
        start = `(${sid}`;
        records++;
        const stored = safeJson(fieldOf(fields));
        const parsed = AuditRecordSchema.safeParse(stored);
        if (!parsed.success) {
          breaks(sid, 'unreadable');
          brokenAt ||= records;
          if (!against) break;
          continue;
        }
        const record = parsed.data;
        const { hash } = record;
        // The seal covers the record as stored (with any padding the union reads past).
        const { hash: _, ...body } = stored as { hash: string; prev: string };
        // Without the key a keyed seal cannot be recomputed: only its place in the chain is checked,
        // and the chain is then not proven: an edited keyed record would otherwise read as intact.
        const checkable = !record.keyed || key !== undefined;
        if (!checkable && unproven++ === 0) firstUnproven = record.id;
        if (key !== undefined && !record.keyed) breaks(record.id, 'unkeyed');
        else if (checkable && recordHash(body, record.keyed ? key : undefined) !== hash)
          breaks(record.id, 'hash-mismatch');
        else if (body.prev !== prev) breaks(record.id, 'chain-broken');
        if (chain) brokenAt ||= records;
        prev = hash;
        last = record.id;
        if (against) {
          seen.add(record.id);
          const logged = against.digests.get(record.id);
          if (!logged) extra.push(record.id);
          else if (!logged.has(recordDigest(record))) altered.push(record.id);
        }
        if (chain && !against) break;
      }
      if ((chain && !against) || rows.length < BATCH) break;
    }
    // The head holds the last record's hash: a removed or rewritten last record shows here.
    const head = (await this.#redis.get(this.#head)) ?? '';
    if (!chain && head !== prev) {
      breaks(last ? `the record after ${last}` : 'the first record', 'head-mismatch');
      brokenAt = records;
    }
    const keyed = key !== undefined;
    const log: AgainstLog | undefined = against && {
      file: against.file,
      logged: against.digests.size,
      unreadableLines: against.unreadableLines,
      missing: [...against.digests.keys()].filter((id) => !seen.has(id)),
      altered,
      extra,
    };
    const differs = log !== undefined && log.missing.length + log.altered.length + log.extra.length > 0;
    const withLog = log ? { against: log } : {};
    if (chain) return { ok: false, records: brokenAt, ...chain, keyed, ...withLog };
    if (differs) {
      const first = log.missing[0] ?? log.altered[0] ?? log.extra[0] ?? '';
      return { ok: false, records, broken: first, why: 'log-mismatch', keyed, ...withLog };
    }
    if (unproven > 0)
      return { ok: false, records, broken: firstUnproven, why: 'needs-key', unproven, keyed, ...withLog };
    return { ok: true, records, keyed, ...withLog };
  }
}

type BrokenWhy = Extract<VerifyResult, { ok: false }>['why'];

/** The milliseconds of a stream id (`<ms>-<seq>`). */
const streamMs = (sid: string): number => Number(sid.slice(0, sid.indexOf('-')));

function fieldOf(fields: readonly string[]): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'record') return fields[i + 1];
  return undefined;
}

function safeJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
