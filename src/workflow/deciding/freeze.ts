import type { Redis } from 'ioredis';
import * as z from 'zod';
import { loadScripts } from '../lua/scripts.ts';

/**
 * Change freezes in Redis, one per environment, shared by every replica and kept across
 * restarts:
 *
 *   <prefix>:freeze:<env>   STRING  the freeze (JSON): until, by, reason, at
 *
 * While it holds, requests are filed and approved but the apply job holds them (worker.ts). It
 * ends at `until` or when lifted; either way exactly one caller takes the end (one Lua script
 * that reads and deletes), records it and releases the held requests in approval order.
 */

export const FreezeSchema = z.object({
  /** ISO time the freeze ends by itself. */
  until: z.iso.datetime(),
  /** Slack user id of the approver who froze it. */
  by: z.string().min(1),
  reason: z.string().min(1),
  /** When it was frozen. */
  at: z.iso.datetime(),
});
export type Freeze = z.infer<typeof FreezeSchema>;

/** The freeze's scripts (lua/freeze.lua, lua/freezeTake.lua), read once, when the store is first loaded. */
export const FREEZE_SCRIPTS = ['freeze', 'freezeTake'] as const;
const LUA = loadScripts(FREEZE_SCRIPTS);

/** What `freeze` did: frozen; or not, a freeze being in force; or frozen in place of one that had run out. */
export type FreezeOutcome =
  | { readonly outcome: 'frozen' }
  | { readonly outcome: 'running'; readonly running: Freeze }
  | { readonly outcome: 'replaced'; readonly ended: Freeze };

export class FreezeStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, keyPrefix: string) {
    this.#redis = redis;
    this.#prefix = keyPrefix;
  }

  #key(env: string): string {
    return `${this.#prefix}:freeze:${env}`;
  }

  /**
   * Freezes `env` unless a freeze is in force there at `now` (never replaced: it is lifted first,
   * or runs out). A freeze past its end that the sweep has not taken yet is replaced, and returned
   * so that its end is recorded.
   */
  async freeze(env: string, freeze: Freeze, now: Date): Promise<FreezeOutcome> {
    const f = FreezeSchema.parse(freeze);
    const [outcome, raw] = (await this.#redis.eval(
      LUA.freeze,
      1,
      this.#key(env),
      String(now.getTime()),
      JSON.stringify({ ...f, untilMs: Date.parse(f.until) }),
    )) as [string, string?];
    const old = raw ? this.#parse(raw) : undefined;
    if (outcome === 'running' && old) return { outcome: 'running', running: old };
    if (outcome === 'replaced' && old) return { outcome: 'replaced', ended: old };
    return { outcome: 'frozen' };
  }

  /** The freeze in force on `env` at `now`, or undefined (one past its end is over, whoever takes its end). */
  async current(env: string, now: Date): Promise<Freeze | undefined> {
    const raw = await this.#redis.get(this.#key(env));
    const f = raw ? this.#parse(raw) : undefined;
    return f && Date.parse(f.until) > now.getTime() ? f : undefined;
  }

  /** The environments with a freeze stored (in force, or past its end and not yet taken). */
  async environments(): Promise<string[]> {
    const prefix = `${this.#prefix}:freeze:`;
    const envs: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.#redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      envs.push(...keys.map((k) => k.slice(prefix.length)));
    } while (cursor !== '0');
    return envs.sort();
  }

  /** Every environment frozen at `now`, for `requests`. */
  async all(now: Date): Promise<{ env: string; until: string; by: string; reason: string }[]> {
    const out: { env: string; until: string; by: string; reason: string }[] = [];
    for (const env of await this.environments()) {
      const f = await this.current(env, now);
      if (f) out.push({ env, until: f.until, by: f.by, reason: f.reason });
    }
    return out;
  }

  /** Lifts the freeze on `env`: the freeze lifted, or undefined when there was none (or another caller lifted it). */
  lift(env: string, now: Date): Promise<Freeze | undefined> {
    return this.#take(env, now, true);
  }

  /** Takes the freeze on `env` if it is past its end: exactly one caller gets it. */
  takeEnded(env: string, now: Date): Promise<Freeze | undefined> {
    return this.#take(env, now, false);
  }

  async #take(env: string, now: Date, lift: boolean): Promise<Freeze | undefined> {
    const raw = (await this.#redis.eval(
      LUA.freezeTake,
      1,
      this.#key(env),
      String(now.getTime()),
      lift ? '1' : '0',
    )) as string | null;
    return raw ? this.#parse(raw) : undefined;
  }

  #parse(raw: string): Freeze | undefined {
    const parsed = FreezeSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  }
}
