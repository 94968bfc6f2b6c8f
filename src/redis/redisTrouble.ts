import type { Redis } from 'ioredis';
import { isSentinelUrl } from '../config/index.ts';
import type { Logger } from '../log/index.ts';

/**
 * Redis not answering, told once for the whole process. The bot holds several connections (the
 * app's, the apply worker's, the time-box and digest workers', BullMQ's queues), each of which
 * retries on its own and fails on every retry; a wrong `REDIS_URL` made dozens of stack traces in
 * seconds without naming it. Here, the first failure of any of them is one line naming the
 * setting to check; while Redis stays away every part's failures are logged at debug; the first
 * connection ready again says so in one line.
 */

/** Failures that mean Redis is not there (or refuses the bot), as ioredis and BullMQ report them. */
const AWAY_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);
const AWAY_MESSAGE =
  /Connection is closed|Stream isn't writeable|Reached the max retries per request|All sentinels are unreachable|NOAUTH|WRONGPASS|Command timed out/;

export function isRedisAway(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && AWAY_CODES.has(code)) return true;
  return err.name === 'MaxRetriesPerRequestError' || AWAY_MESSAGE.test(err.message);
}

/** The address as it may be logged: a password in it replaced. */
export function redisAddressShown(url: string): string {
  return url.replace(/^([a-z+]+:\/\/)([^@/]*@)/i, (_, scheme: string, auth: string) =>
    auth.includes(':') ? `${scheme}${auth.slice(0, auth.indexOf(':'))}:[redacted]@` : `${scheme}${auth}`,
  );
}

export class RedisTrouble {
  readonly #log: Logger;
  readonly #url: string;
  #away = false;

  constructor(log: Logger, redisUrl: string) {
    this.#log = log.child({ part: 'redis' });
    this.#url = redisUrl;
  }

  /** The variables the address came from. */
  get setting(): string {
    return isSentinelUrl(this.#url) ? 'REDIS_SENTINELS and REDIS_SENTINEL_NAME' : 'REDIS_URL';
  }

  /** Whether Redis is known to be away now. */
  get away(): boolean {
    return this.#away;
  }

  /** A connection of the bot's: its failures told through here, its recovery too. Returns it. */
  watch(redis: Redis): Redis {
    redis.on('error', (err: Error) => {
      if (!this.absorbed(err)) this.#log.warn({ message: err.message }, 'Redis connection error');
    });
    redis.on('ready', () => {
      if (!this.#away) return;
      this.#away = false;
      this.#log.info(`Redis answers again at ${redisAddressShown(this.#url)}`);
    });
    return redis;
  }

  /**
   * A failure some part met: true when it is Redis being away (the first one told in one line
   * naming the setting, the others logged at debug), false when it is something else for the
   * caller to log as it would.
   */
  absorbed(err: unknown): boolean {
    if (!isRedisAway(err)) return false;
    const message = err instanceof Error ? err.message : String(err);
    if (this.#away) {
      this.#log.debug({ message }, 'Redis still away');
      return true;
    }
    this.#away = true;
    this.#log.error(
      { message },
      `Redis does not answer at ${redisAddressShown(this.#url)} (${message}): check ${this.setting}. The bot retries quietly and says when Redis answers again.`,
    );
    return true;
  }
}
