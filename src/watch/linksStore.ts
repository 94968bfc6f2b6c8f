import type { Redis } from 'ioredis';
import type { LinksAsWatched } from '../links/index.ts';
import type { DownLink } from './linksBurst.ts';

/**
 * The links one environment had down when last read, in Redis, shared by every bot replica:
 *
 *   <prefix>:links:<env>:down     the links down (JSON: linkKey -> DownLink); absent: none
 *   <prefix>:links:<env>:version  how many times it moved; absent: never read
 *   <prefix>:links:<env>:read     the last reading (JSON: `at`, `from`: when the unbroken run of
 *                                 readings it ends began, `intervalMs`); expires once it is broken
 *
 * A reading moves the state only if no replica moved it since this one read it (a Lua script
 * compares the version): of several replicas that read the same links go down, exactly one moves
 * it and posts; the others read the moved state next time and find nothing new.
 */

// KEYS: down, version. ARGV: the version read, the new down state ('' = none).
const MOVE = `
local v = redis.call('GET', KEYS[2])
if not v then v = '0' end
if v ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
redis.call('INCR', KEYS[2])
return 1
`;

// KEYS: read. ARGV: now (ms), the interval (ms), how long without a reading breaks the run (ms).
// A reading extends the run of readings that the last one ended, unless it came too late: then a
// run begins. The key outlives the run by nothing: a broken run is no run.
const READ_AT = `
local now = tonumber(ARGV[1])
local from = now
local last = redis.call('GET', KEYS[1])
if last then
  local l = cjson.decode(last)
  if tonumber(l.at) > now then return 0 end
  if now - tonumber(l.at) <= tonumber(ARGV[3]) then from = tonumber(l.from) end
end
redis.call('SET', KEYS[1], cjson.encode({at = now, from = from, intervalMs = tonumber(ARGV[2])}), 'PX', ARGV[3])
return 1
`;

/**
 * How long after a reading the watch still holds: two intervals and 10 s (one reading missed, or
 * slow). A reading later than that begins a new run: what happened to the links meanwhile was not
 * seen.
 */
export const unbrokenFor = (intervalMs: number): number => 2 * intervalMs + 10_000;

export interface LinksRecorded {
  /** '0' when the environment's links were never read. */
  readonly version: string;
  readonly down: ReadonlyMap<string, DownLink>;
}

export class LinksStore {
  readonly #redis: Redis;
  readonly #base: string;

  constructor(redis: Redis, keyPrefix: string, env: string) {
    this.#redis = redis;
    this.#base = `${keyPrefix}:links:${env}`;
  }

  async read(): Promise<LinksRecorded> {
    const [down, version] = await this.#redis.mget(`${this.#base}:down`, `${this.#base}:version`);
    const parsed = down ? (JSON.parse(down) as Record<string, DownLink>) : {};
    return { version: version ?? '0', down: new Map(Object.entries(parsed)) };
  }

  /** Notes a reading at `at`: the run of readings goes on (or, after a gap, begins). */
  async readAt(at: Date, intervalMs: number): Promise<void> {
    await this.#redis.eval(
      READ_AT,
      1,
      `${this.#base}:read`,
      at.getTime(),
      intervalMs,
      unbrokenFor(intervalMs),
    );
  }

  /**
   * The links the watch records down, and since when its readings have run unbroken (`links`
   * answers from it: src/links/watched.ts); undefined when no watch reads the links now.
   */
  async watched(): Promise<LinksAsWatched | undefined> {
    const [read, down] = await this.#redis.mget(`${this.#base}:read`, `${this.#base}:down`);
    if (!read) return undefined;
    const { from } = JSON.parse(read) as { from: number };
    const parsed = down ? (JSON.parse(down) as Record<string, DownLink>) : {};
    return { from: new Date(from).toISOString(), down: new Map(Object.entries(parsed)) };
  }

  /** Records `down` if the state is still at `version`; false when another replica moved it first. */
  async move(version: string, down: ReadonlyMap<string, DownLink>): Promise<boolean> {
    const value = down.size === 0 ? '' : JSON.stringify(Object.fromEntries(down));
    const moved = await this.#redis.eval(
      MOVE,
      2,
      `${this.#base}:down`,
      `${this.#base}:version`,
      version,
      value,
    );
    return moved === 1;
  }
}
