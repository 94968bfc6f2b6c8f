/**
 * The address of the bot's Redis as one string (Config.redisUrl): a Redis URL, or for Redis
 * Sentinel (`REDIS_SENTINELS`, `REDIS_SENTINEL_NAME`) `redis+sentinel://host:port,…/NAME`. Pure
 * (no client): the config and the terminal's start read it; src/redis/redis.ts opens it.
 */

export const SENTINEL_SCHEME = 'redis+sentinel:';

export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * `host:port,host:port` (REDIS_SENTINELS) -> the addresses; undefined with what is wrong.
 * The port defaults to Sentinel's 26379.
 */
export function parseSentinels(text: string): { sentinels: SentinelAddress[] } | { error: string } {
  const sentinels: SentinelAddress[] = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(part);
    const port = m?.[2] === undefined ? 26379 : Number(m[2]);
    if (!m?.[1] || port < 1 || port > 65535) return { error: `"${part}" is not host:port` };
    sentinels.push({ host: m[1].replace(/^\[|\]$/g, ''), port });
  }
  return sentinels.length > 0 ? { sentinels } : { error: 'no host:port given' };
}

/** The one address of a Sentinel-managed primary (what Config.redisUrl holds then). */
export function sentinelUrl(sentinels: readonly SentinelAddress[], name: string): string {
  const hosts = sentinels.map((s) => `${s.host.includes(':') ? `[${s.host}]` : s.host}:${s.port}`).join(',');
  return `${SENTINEL_SCHEME}//${hosts}/${encodeURIComponent(name)}`;
}

/** Whether an address is a Sentinel one (for what the bot says about where its Redis is). */
export function isSentinelUrl(url: string): boolean {
  return url.startsWith(SENTINEL_SCHEME);
}
