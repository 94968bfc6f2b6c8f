import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Policy } from '../policy/index.ts';
import { addressKey, canonical, fromCanonical, type PolicyAddress } from '../policy/index.ts';

/**
 * The last recorded state of one environment's policies, in Redis, shared by every bot replica:
 *
 *   <prefix>:watch:<env>:state      HASH  addressKey -> canonical content (absent: no policy)
 *   <prefix>:watch:<env>:baseline   when the state was first recorded (none: never recorded)
 *   <prefix>:watch:<env>:seen:<sha> an event already handled, by content and broker time (a day)
 *   <prefix>:watch:<env>:own:<sha>  a write the bot's apply job is about to make (an hour)
 *   <prefix>:watch:<env>:known      the last instant (ms) some replica knew the state: its beat
 *   <prefix>:watch:<env>:compared   the instant (ms) of the last comparison that read the broker
 *   <prefix>:watch:<env>:gap-from   the start of the gap just claimed (for three times the gap's threshold)
 *
 * Each change moves the state in one atomic step (a Lua script): of several replicas that see
 * the same change, by the same event or by comparing, exactly one gets `changed` and posts it.
 */

export type TransitionOutcome =
  /** This replica moved the state: the change is its to record. */
  | { readonly kind: 'changed'; readonly before: Policy | null }
  /** The state already held it (another replica, or an earlier event, got there first). */
  | { readonly kind: 'same' }
  /** The event was already handled (by content and time). */
  | { readonly kind: 'seen' }
  /** The state is no longer what the comparison read: another replica moved it meanwhile. */
  | { readonly kind: 'moved' };

/** How long an event is remembered as handled: far longer than any redelivery. */
const SEEN_SECONDS = 24 * 60 * 60;
/**
 * How long a write the apply job announced is waited for: past the longest comparison interval
 * (30 minutes), so a write whose event was missed is still known as the bot's own.
 */
export const OWN_WRITE_SECONDS = 60 * 60;

// KEYS: state hash, seen key ('' = none). ARGV: field, new content, check ('1' = compare with
// ARGV[4]), expected content, seen ttl.
const TRANSITION = `
if KEYS[2] ~= '' and redis.call('EXISTS', KEYS[2]) == 1 then return {'seen'} end
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then old = '' end
if ARGV[3] == '1' and old ~= ARGV[4] then return {'moved'} end
if KEYS[2] ~= '' then redis.call('SET', KEYS[2], '1', 'EX', ARGV[5]) end
if old == ARGV[2] then return {'same'} end
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return {'changed', old}
`;

// KEYS: known, compared, gap start. ARGV: now (ms), gap after (ms). The comparison that read the
// broker at `now` claims what lies before it: the first watch, a gap, or the span since the last
// comparison. A gap just claimed by another replica still bounds the span of what this one finds
// (two replicas started at once: either may find the gap's changes).
const RESUME = `
local known = redis.call('GET', KEYS[1])
local compared = redis.call('GET', KEYS[2])
local now = tonumber(ARGV[1])
if not compared or tonumber(compared) < now then redis.call('SET', KEYS[2], ARGV[1]) end
if not known then
  redis.call('SET', KEYS[1], ARGV[1])
  return {'first', ''}
end
if now - tonumber(known) > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('SET', KEYS[3], known, 'PX', tonumber(ARGV[2]) * 3)
  return {'gap', known}
end
if tonumber(known) < now then redis.call('SET', KEYS[1], ARGV[1]) end
local since = tonumber(compared or known)
local gap = redis.call('GET', KEYS[3])
if gap and tonumber(gap) < since then since = tonumber(gap) end
return {'ok', tostring(since)}
`;

// KEYS: known. ARGV: now (ms), gap after (ms). A beat extends the watch only while it is unbroken:
// a stale mark is left for the next comparison to claim as a gap.
const BEAT = `
local known = redis.call('GET', KEYS[1])
if not known then return 'none' end
local now = tonumber(ARGV[1])
if now - tonumber(known) > tonumber(ARGV[2]) then return 'stale' end
if tonumber(known) < now then redis.call('SET', KEYS[1], ARGV[1]) end
return 'ok'
`;

/** What lies before a comparison's reading, claimed by the one replica that made it. */
export type Resumed =
  /** The environment was never watched (or never snapshotted): seal the first snapshot. */
  | { readonly kind: 'first' }
  /** No replica watched from `from` until now: a gap. */
  | { readonly kind: 'gap'; readonly from: number }
  /** Watched without a break; the last comparison read the broker at `since`. */
  | { readonly kind: 'ok'; readonly since: number };

const sha = (parts: readonly unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

export interface TransitionInput extends PolicyAddress {
  readonly after: Policy | null;
  /** For an event: its broker time, so the same event handled by two replicas counts once. */
  readonly eventAtMs?: number;
  /** For a comparison: the content it read as recorded; the state must still hold it. */
  readonly expected?: Policy | null;
}

export class WatchStore {
  readonly #redis: Redis;
  readonly #base: string;

  constructor(redis: Redis, keyPrefix: string, env: string) {
    this.#redis = redis;
    this.#base = `${keyPrefix}:watch:${env}`;
  }

  /** When the state was first recorded, or null when it never was. */
  async recordedSince(): Promise<string | null> {
    return this.#redis.get(`${this.#base}:baseline`);
  }

  async state(): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.#redis.hgetall(`${this.#base}:state`)));
  }

  /** Records the broker's state as it is, as the baseline (first start: nothing is reported). */
  async recordBaseline(state: ReadonlyMap<string, string>, at: Date): Promise<void> {
    const tx = this.#redis.multi().del(`${this.#base}:state`);
    if (state.size > 0) tx.hset(`${this.#base}:state`, Object.fromEntries(state));
    await tx.set(`${this.#base}:baseline`, at.toISOString()).exec();
  }

  async transition(t: TransitionInput): Promise<TransitionOutcome> {
    const seen =
      t.eventAtMs === undefined
        ? ''
        : `${this.#base}:seen:${sha([t.layer, t.vhost, t.name, canonical(t.after), t.eventAtMs])}`;
    const reply = (await this.#redis.eval(
      TRANSITION,
      2,
      `${this.#base}:state`,
      seen,
      addressKey(t),
      canonical(t.after),
      t.expected === undefined ? '0' : '1',
      t.expected === undefined ? '' : canonical(t.expected),
      SEEN_SECONDS,
    )) as [string, string?];
    const [kind, old] = reply;
    if (kind === 'changed') return { kind, before: fromCanonical(t, old ?? '') };
    if (kind === 'same' || kind === 'seen' || kind === 'moved') return { kind };
    throw new Error(`watch store: unexpected reply ${JSON.stringify(reply)}`);
  }

  // --- the watch's continuity ----------------------------------------------------------------

  /** Claims what lies before a comparison that read the broker at `at` (see Resumed). */
  async resume(at: Date, gapAfterMs: number): Promise<Resumed> {
    const [kind, value] = (await this.#redis.eval(
      RESUME,
      3,
      `${this.#base}:known`,
      `${this.#base}:compared`,
      `${this.#base}:gap-from`,
      at.getTime(),
      gapAfterMs,
    )) as [string, string];
    if (kind === 'first') return { kind };
    if (kind === 'gap') return { kind, from: Number(value) };
    return { kind: 'ok', since: Number(value) };
  }

  /** The watch still holds at `at`; `stale`: it broke more than `gapAfterMs` ago (a comparison claims the gap). */
  async beat(at: Date, gapAfterMs: number): Promise<'ok' | 'stale' | 'none'> {
    return (await this.#redis.eval(BEAT, 1, `${this.#base}:known`, at.getTime(), gapAfterMs)) as
      | 'ok'
      | 'stale'
      | 'none';
  }

  /**
   * A claim whose record could not be sealed, given back: the watch known until `known` again (a
   * gap's start), or never (null: the first snapshot), so the next comparison claims it again.
   */
  async unclaim(known: number | null): Promise<void> {
    if (known === null) await this.#redis.del(`${this.#base}:known`);
    else await this.#redis.set(`${this.#base}:known`, known);
  }

  // --- the bot's own writes ----------------------------------------------------------------

  #ownKey(a: PolicyAddress, after: Policy | null): string {
    return `${this.#base}:own:${sha([a.layer, a.vhost, a.name, canonical(after)])}`;
  }

  /**
   * Called by the apply job just before it writes: the change to `after` that the broker will
   * report next is the bot's own (request `id`), not one made outside it.
   */
  async expectOwnWrite(a: PolicyAddress, after: Policy | null, id: string): Promise<void> {
    await this.#redis.set(this.#ownKey(a, after), id, 'EX', OWN_WRITE_SECONDS);
  }

  /** The id of the apply that announced this change, taken once; null when none did. */
  async takeOwnWrite(a: PolicyAddress, after: Policy | null): Promise<string | null> {
    const key = this.#ownKey(a, after);
    const [[, id]] = (await this.#redis.multi().get(key).del(key).exec()) as [[Error | null, string | null]];
    return id;
  }
}

/**
 * The apply job's announcement of its own write (src/workflow/apply/applyJob.ts `AnnounceWrite`), on the
 * connection given: the watcher of that environment then does not report it as made outside.
 */
export function ownWriteAnnouncer(
  redis: Redis,
  keyPrefix: string,
): (env: string, a: PolicyAddress, after: Policy | null, requestId: string) => Promise<void> {
  return (env, a, after, requestId) =>
    new WatchStore(redis, keyPrefix, env).expectOwnWrite(a, after, requestId);
}
