import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';
import { sorted } from '../policy/compare.ts';
import {
  type AuditEntry,
  type AuditRecord,
  AuditRecordSchema,
  type HistoryQuery,
  type VerifyResult,
} from './types.ts';

/**
 * The audit trail: one append-only Redis stream of applied changes, each record chained to the
 * one before by hash, so a removed or altered record is found by `verify`.
 *
 *   <prefix>:audit         STREAM  field `record`: the record's canonical JSON (with prev and hash)
 *   <prefix>:audit:head    the hash of the last record
 *   <prefix>:audit:ids     HASH    record id -> stream id (one record per id: an apply recorded twice is recorded once)
 *
 * The bot never trims the stream. The trail survives a Redis restart only with persistence
 * (AOF, see the README). Two copies beyond it: every record appended is logged as one JSON line
 * `{"audit": {…}}` (the record as `history --json` shows it), and where the primary has replicas
 * an append returns only once one of them has the record (`WAIT`), so a failover right after
 * cannot lose what was acknowledged. A chain cannot prove its own last record was not rewritten together
 * with the head; everything before it, it can.
 */

// KEYS: stream, head, ids. ARGV: expected head ('' = empty trail), record id, record JSON, hash.
const APPEND = `
local existing = redis.call('HGET', KEYS[3], ARGV[2])
if existing then return {'exists', existing} end
local head = redis.call('GET', KEYS[2])
if not head then head = '' end
if head ~= ARGV[1] then return {'moved', head} end
local sid = redis.call('XADD', KEYS[1], '*', 'record', ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[2], sid)
return {'ok', sid}
`;

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value));
}

/** sha256 over the canonical JSON of the record without its own hash. */
export function recordHash(record: Omit<AuditRecord, 'hash'>): string {
  return createHash('sha256').update(canonicalJson(record)).digest('hex');
}

const BATCH = 500;

/** How long an append waits for a replica to have the record before it fails (and is retried). */
export const REPLICATION_WAIT_MS = 5_000;

export interface AuditTrailOptions {
  /** Where each record appended is logged, as one line `{"audit": {…}}`. */
  readonly log?: Pick<Logger, 'info'>;
  readonly replicationWaitMs?: number;
}

/** An append that Redis took but no replica confirmed in time: not acknowledged; retrying is safe. */
export class AuditNotReplicatedError extends Error {
  readonly code = 'audit-not-replicated';
}

/** `connected_slaves` of `INFO replication`; undefined when Redis would not say. */
function connectedReplicas(info: string): number | undefined {
  const m = /^connected_slaves:(\d+)/m.exec(info);
  return m ? Number(m[1]) : undefined;
}

export class AuditTrail {
  readonly #redis: Redis;
  readonly #stream: string;
  readonly #head: string;
  readonly #ids: string;
  readonly #options: AuditTrailOptions;

  constructor(redis: Redis, keyPrefix: string, options: AuditTrailOptions = {}) {
    this.#redis = redis;
    this.#options = options;
    this.#stream = `${keyPrefix}:audit`;
    this.#head = `${keyPrefix}:audit:head`;
    this.#ids = `${keyPrefix}:audit:ids`;
  }

  /**
   * Appends one record, chained to the last. Idempotent by `entry.id`: a second append of the
   * same id returns the record already stored. Returns once a replica has it, where there is one
   * (else throws AuditNotReplicatedError: the record is in the primary, and appending it again
   * waits again).
   */
  async append(entry: AuditEntry): Promise<AuditRecord> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const prev = (await this.#redis.get(this.#head)) ?? '';
      const body = { ...entry, prev };
      const record = AuditRecordSchema.parse({ ...body, hash: recordHash(body) });
      const [kind] = (await this.#redis.eval(
        APPEND,
        3,
        this.#stream,
        this.#head,
        this.#ids,
        prev,
        record.id,
        canonicalJson(record),
        record.hash,
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
      // 'moved': another replica appended meanwhile; chain to the new head.
    }
    throw new Error('audit: the trail kept moving; record not appended');
  }

  /** Waits for one replica to have every write so far, when the primary has any. */
  async #replicated(id: string): Promise<void> {
    // A Redis that will not say (INFO refused) is taken as one without replicas.
    const info = await this.#redis.info('replication').catch(() => '');
    if (!connectedReplicas(info)) return;
    const waitMs = this.#options.replicationWaitMs ?? REPLICATION_WAIT_MS;
    const acked = await this.#redis.wait(1, waitMs);
    if (acked < 1)
      throw new AuditNotReplicatedError(
        `audit: record ${id} is in Redis but no replica confirmed it within ${waitMs} ms`,
      );
  }

  async get(id: string): Promise<AuditRecord | undefined> {
    const sid = await this.#redis.hget(this.#ids, id);
    if (!sid) return undefined;
    const rows = await this.#redis.xrange(this.#stream, sid, sid);
    const text = rows[0] && fieldOf(rows[0][1]);
    return text ? AuditRecordSchema.parse(JSON.parse(text)) : undefined;
  }

  /**
   * Records matching the query, newest first: those of the named policy, or of any policy that
   * governed an object of that name.
   */
  async list(query: HistoryQuery = {}, limit = Number.POSITIVE_INFINITY): Promise<AuditRecord[]> {
    const out: AuditRecord[] = [];
    let end = '+';
    for (;;) {
      const rows = await this.#redis.xrevrange(this.#stream, end, '-', 'COUNT', BATCH);
      for (const [sid, fields] of rows) {
        end = `(${sid}`;
        const parsed = AuditRecordSchema.safeParse(safeJson(fieldOf(fields)));
        if (!parsed.success) continue;
        const r = parsed.data;
        if (query.env !== undefined && r.env !== query.env) continue;
        if (query.vhost !== undefined && r.vhost !== query.vhost) continue;
        if (
          query.name !== undefined &&
          r.policy !== query.name &&
          !r.objects.some((o) => o.name === query.name)
        )
          continue;
        out.push(r);
        if (out.length >= limit) return out;
      }
      if (rows.length < BATCH) return out;
    }
  }

  /** Walks the chain from the first record; names the first one broken. */
  async verify(): Promise<VerifyResult> {
    let prev = '';
    let last = '';
    let records = 0;
    let start = '-';
    for (;;) {
      const rows = await this.#redis.xrange(this.#stream, start, '+', 'COUNT', BATCH);
      for (const [sid, fields] of rows) {
        start = `(${sid}`;
        records++;
        const parsed = AuditRecordSchema.safeParse(safeJson(fieldOf(fields)));
        if (!parsed.success) return { ok: false, records, broken: sid, why: 'unreadable' };
        const { hash, ...body } = parsed.data;
        if (recordHash(body) !== hash)
          return { ok: false, records, broken: parsed.data.id, why: 'hash-mismatch' };
        if (body.prev !== prev) return { ok: false, records, broken: parsed.data.id, why: 'chain-broken' };
        prev = hash;
        last = parsed.data.id;
      }
      if (rows.length < BATCH) break;
    }
    // The head holds the last record's hash: a removed or rewritten last record shows here.
    const head = (await this.#redis.get(this.#head)) ?? '';
    if (head !== prev) {
      return {
        ok: false,
        records,
        broken: last ? `the record after ${last}` : 'the first record',
        why: 'head-mismatch',
      };
    }
    return { ok: true, records };
  }
}

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
