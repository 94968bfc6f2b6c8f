import * as z from 'zod';
import type { StoredDefaults } from '../commands/use/index.ts';
import type { Logger } from '../log/index.ts';

/**
 * A channel's defaults (`/rmq use --env E --vhost V`): every later command in that channel and
 * its threads uses them unless a flag says otherwise. Kept in Redis, one key per channel, so
 * every instance of the bot sees the same ones; no expiry (an incident channel lives as long as
 * the incident), `/rmq use --clear` removes them. The terminal keeps its own in the environment
 * (`RMQ_VHOST`), never here.
 */

export interface Defaults {
  readonly env?: string | undefined;
  readonly vhost?: string | undefined;
}

/** Who set them, and when, beside them: the command's shape (`use`), kept as it is. */
export type { StoredDefaults };

/** What the store needs of Redis. ioredis satisfies it. */
export interface DefaultsRedis {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
  del(key: string): Promise<number>;
}

const Stored = z.object({
  env: z.string().min(1).optional(),
  vhost: z.string().min(1).optional(),
  by: z.string().optional(),
  at: z.string().optional(),
});

export interface ChannelDefaultsStore {
  get(channel: string): Promise<StoredDefaults>;
  set(channel: string, defaults: StoredDefaults): Promise<void>;
  /** True when there were defaults to remove. */
  clear(channel: string): Promise<boolean>;
}

export function redisChannelDefaults(redis: DefaultsRedis, keyPrefix: string): ChannelDefaultsStore {
  const key = (channel: string) => `${keyPrefix}:channel:${channel}:defaults`;
  return {
    async get(channel) {
      const raw = await redis.get(key(channel));
      if (raw === null) return {};
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        json = null;
      }
      const parsed = Stored.safeParse(json);
      // Unreadable (written by another version?): as if none, rather than a guess.
      return parsed.success ? parsed.data : {};
    },
    async set(channel, defaults) {
      await redis.set(key(channel), JSON.stringify(Stored.parse(defaults)));
    },
    async clear(channel) {
      return (await redis.del(key(channel))) > 0;
    },
  };
}

/** The defaults as a command sees them: read once per request, never failing the request. */
export type ChannelDefaultsRead =
  | ({ readonly ok: true } & StoredDefaults)
  | { readonly ok: false; readonly error: string };

/** The channel a request came from, with its defaults; built by the listener per request. */
export interface ChannelScope {
  readonly id: string;
  /** Who asked (for "set by"). */
  readonly user?: string | undefined;
  /** Without Redis, the defaults are unavailable: the answer says so rather than failing. */
  read(): Promise<ChannelDefaultsRead>;
  set(defaults: Defaults): Promise<void>;
  clear(): Promise<boolean>;
}

export function channelScope(
  store: ChannelDefaultsStore,
  channel: string,
  user: string | undefined,
  logger: Logger,
): ChannelScope {
  return {
    id: channel,
    user,
    async read() {
      try {
        return { ok: true, ...(await store.get(channel)) };
      } catch (err) {
        logger.warn({ err }, 'channel defaults unavailable; answering without them');
        return { ok: false, error: err instanceof Error ? err.message : String(err) };
      }
    },
    async set(defaults) {
      await store.set(channel, { ...defaults, by: user, at: new Date().toISOString() });
    },
    clear: () => store.clear(channel),
  };
}
