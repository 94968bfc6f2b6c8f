import type { Redis } from 'ioredis';
import type { DownLink } from './linksBurst.ts';

/**
 * The links one environment had down when last read, in Redis, shared by every bot replica:
 *
 *   <prefix>:links:<env>:down     the links down (JSON: linkKey -> DownLink); absent: none
 *   <prefix>:links:<env>:version  how many times it moved; absent: never read
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
