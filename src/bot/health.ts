import { codeOf } from '../core/index.ts';

/**
 * What the probes answer from (docs/operations.md): a background check of every broker and
 * Redis, each on its own clock, so that `/readyz` and `/healthz` answer at once from the last
 * result and never wait on a dependency; `/livez` asks nothing at all.
 *
 * Ready means: Redis answered its last check and the process is not draining. A broker that does
 * not answer is reported (its state, error code, the check's age) but does not make the bot
 * unready: an orchestrator would take every replica out of service exactly while people ask it
 * about the broker in trouble, and the bot's answer then says the broker could not be asked.
 * Redis also says whether it keeps its data on disk (AOF or RDB): a Redis that keeps nothing
 * loses every request and the audit trail when it restarts, and the log says so once.
 */

export interface PartCheck {
  /** `unknown` until the first check finished. */
  readonly state: 'ok' | 'failing' | 'unknown';
  readonly ok: boolean;
  /** An error code (`unreachable`, `timeout`, `unauthorized`…), never a message with details. */
  readonly error?: string;
  /** How long the last check took. */
  readonly ms?: number;
  /** When the last check finished, and how long ago that is. */
  readonly checkedAt?: string;
  readonly ageMs?: number;
}

/** Whether Redis keeps its data on disk, as `CONFIG GET` says; `unknown` when it refuses to say. */
export interface Persistence {
  readonly onDisk: boolean | 'unknown';
  readonly aof?: boolean;
  readonly rdb?: boolean;
  /** Why it is unknown (the error's code, e.g. a managed Redis refusing `CONFIG`). */
  readonly why?: string;
}

/** A broker's check; a cluster's also each node's, by URL (the broker's is ok while one answers). */
export type BrokerCheck = PartCheck & { readonly nodes?: Readonly<Record<string, PartCheck>> };

export interface Readiness {
  /** Ready: Redis answered its last check and the process is not draining. */
  readonly ok: boolean;
  readonly draining: boolean;
  readonly redis: PartCheck & { readonly persistence?: Persistence };
  readonly brokers: Record<string, BrokerCheck>;
  /** How often each part is checked. */
  readonly intervalMs: number;
  /**
   * By environment: how changes made outside the bot are caught (`events`, or `interval` with
   * the reason). Comparing on an interval is a fallback, not a failure: `ok` does not depend on it.
   */
  readonly watch?: Record<string, unknown>;
}

export interface HealthDeps {
  /**
   * By environment name; `whoami` asks the broker something small that needs valid credentials,
   * through `forQuestion` when there is one, so that a check given up is also a request ended.
   */
  readonly brokers: ReadonlyMap<string, HealthBroker>;
  readonly redis: {
    ping(): Promise<string>;
    /** `CONFIG GET name` (ioredis: `config('GET', name)`); absent: persistence is not told. */
    config?(subcommand: 'GET', name: string): Promise<unknown>;
  };
  /** How often each part is checked (default 5 s) and the most one check may take (2.5 s). */
  readonly intervalMs?: number;
  readonly timeoutMs?: number;
  /** How each environment's changes outside the bot are being caught, when they are. */
  readonly watch?: () => Record<string, unknown>;
  /** Told when a part's state or Redis's persistence changes (the log). */
  readonly onChange?: (what: string, now: PartCheck | Persistence) => void;
  readonly now?: () => number;
}

/** What a check asks of a broker; a cluster's (several `nodeUrls`) is also asked node by node. */
export interface HealthBroker {
  whoami(): Promise<unknown>;
  forQuestion?(budgetMs: number): { whoami(): Promise<unknown> };
  readonly nodeUrls?: readonly string[];
  onNode?(url: string): HealthBroker;
}

/** The nodes of a cluster checked one by one: none for a single node. */
const nodesOf = (broker: HealthBroker): readonly string[] =>
  broker.onNode && broker.nodeUrls && broker.nodeUrls.length > 1 ? broker.nodeUrls : [];

export const HEALTH_INTERVAL_MS = 5_000;
export const HEALTH_TIMEOUT_MS = 2_500;

export interface HealthMonitor {
  /** Checks every part now, then every interval; returns at once. */
  start(): void;
  /** Every part checked once more; resolves when all are (for tests and the first answer). */
  checkNow(): Promise<void>;
  /** From now on not ready (SIGTERM): `/livez` and `/readyz` say 503. */
  drain(): void;
  readonly draining: boolean;
  readiness(): Readiness;
  stop(): void;
}

/**
 * A failure's name for the health document: the error's own short code (the broker client's
 * `unreachable`, `timeout`…), else what ioredis's errors mean (they carry no code), else `error`.
 */
export function healthCode(err: unknown): string {
  const code = codeOf(err);
  if (code !== undefined && /^[a-z0-9_-]{1,40}$/i.test(code)) {
    return /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ENETUNREACH)$/.test(code) ? 'unreachable' : code;
  }
  const e = err as { name?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : '';
  if (e?.name === 'MaxRetriesPerRequestError' || /connection is closed|ECONNREFUSED|connect/i.test(message))
    return 'unreachable';
  if (/timed? ?out/i.test(message)) return 'timeout';
  if (/unknown command|NOPERM|not allowed|disabled/i.test(message)) return 'refused';
  return 'error';
}

/** `work`, given up after `timeoutMs` (a `timeout`); the outcome and how long it took. */
async function timed<T>(
  work: () => Promise<T>,
  timeoutMs: number,
): Promise<{ ok: true; value: T; ms: number } | { ok: false; error: string; ms: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const value = await Promise.race([
      work(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(Object.assign(new Error('timed out'), { code: 'timeout' })),
          timeoutMs,
        );
      }),
    ]);
    return { ok: true, value, ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { ok: false, error: healthCode(err), ms: Math.round(performance.now() - started) };
  } finally {
    clearTimeout(timer);
  }
}

/** `CONFIG GET name` answered as ioredis gives it: `[name, value]`. */
function configValue(reply: unknown): string | undefined {
  return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined;
}

/** AOF on, or any RDB `save` rule: the data survives a restart of Redis. */
export async function redisPersistence(
  config: NonNullable<HealthDeps['redis']['config']>,
  timeoutMs: number,
): Promise<Persistence> {
  const read = await timed(
    () => Promise.all([config('GET', 'appendonly'), config('GET', 'save')]),
    timeoutMs,
  );
  if (!read.ok) return { onDisk: 'unknown', why: read.error };
  const [appendonly, save] = read.value.map(configValue);
  if (appendonly === undefined || save === undefined) return { onDisk: 'unknown', why: 'refused' };
  const aof = appendonly === 'yes';
  const rdb = save.trim() !== '';
  return { onDisk: aof || rdb, aof, rdb };
}

interface Last {
  readonly ok: boolean;
  readonly error?: string;
  readonly ms: number;
  readonly at: number;
}

export function createHealthMonitor(deps: HealthDeps): HealthMonitor {
  const intervalMs = deps.intervalMs ?? HEALTH_INTERVAL_MS;
  const timeoutMs = deps.timeoutMs ?? HEALTH_TIMEOUT_MS;
  const now = deps.now ?? Date.now;
  const last = new Map<string, Last>();
  let persistence: Persistence | undefined;
  let draining = false;
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Map<string, Promise<void>>();

  const view = (l: Last | undefined): PartCheck =>
    l
      ? {
          state: l.ok ? 'ok' : 'failing',
          ok: l.ok,
          ...(l.error ? { error: l.error } : {}),
          ms: l.ms,
          checkedAt: new Date(l.at).toISOString(),
          ageMs: Math.max(0, now() - l.at),
        }
      : { state: 'unknown', ok: false };

  const record = (part: string, r: { ok: boolean; error?: string; ms: number }) => {
    const before = last.get(part);
    const next: Last = { ok: r.ok, ms: r.ms, at: now(), ...(r.ok ? {} : { error: r.error }) };
    last.set(part, next);
    // A part that answers from the start is not news; one that fails, or changes, is.
    const changed = before ? before.ok !== next.ok || before.error !== next.error : !next.ok;
    if (changed) deps.onChange?.(part, view(next));
  };

  const checks = new Map<string, () => Promise<void>>([
    [
      'redis',
      async () => {
        const r = await timed(() => deps.redis.ping(), timeoutMs);
        record('redis', r);
        const config = deps.redis.config?.bind(deps.redis);
        if (r.ok && config) {
          const p = await redisPersistence(config, timeoutMs);
          if (persistence?.onDisk !== p.onDisk) deps.onChange?.('redis persistence', p);
          persistence = p;
        }
      },
    ],
    ...[...deps.brokers].flatMap(([env, broker]) => [
      [
        `broker ${env}`,
        async () => {
          record(
            `broker ${env}`,
            await timed(() => (broker.forQuestion?.(timeoutMs) ?? broker).whoami(), timeoutMs),
          );
        },
      ] as const,
      ...nodesOf(broker).map((url) => {
        const node = broker.onNode?.(url) ?? broker;
        return [
          `broker ${env} node ${url}`,
          async () => {
            record(
              `broker ${env} node ${url}`,
              await timed(() => (node.forQuestion?.(timeoutMs) ?? node).whoami(), timeoutMs),
            );
          },
        ] as const;
      }),
    ]),
  ]);

  /** One part's check, unless one is still under way (a part slower than the interval is not piled on). */
  const check = (part: string, run: () => Promise<void>): Promise<void> => {
    const under = running.get(part);
    if (under) return under;
    const p = run()
      .catch(() => undefined)
      .finally(() => running.delete(part));
    running.set(part, p);
    return p;
  };

  const loop = (part: string, run: () => Promise<void>) => {
    void check(part, run).then(() => {
      if (stopped) return;
      const t = setTimeout(() => {
        timers.delete(t);
        loop(part, run);
      }, intervalMs);
      t.unref();
      timers.add(t);
    });
  };

  return {
    start() {
      for (const [part, run] of checks) loop(part, run);
    },
    async checkNow() {
      await Promise.all([...checks].map(([part, run]) => check(part, run)));
    },
    drain() {
      draining = true;
    },
    get draining() {
      return draining;
    },
    readiness() {
      const redis = view(last.get('redis'));
      return {
        ok: redis.ok && !draining,
        draining,
        redis: { ...redis, ...(persistence ? { persistence } : {}) },
        brokers: Object.fromEntries(
          [...deps.brokers].map(([env, broker]): [string, BrokerCheck] => {
            const urls = nodesOf(broker);
            const check = view(last.get(`broker ${env}`));
            if (urls.length === 0) return [env, check];
            return [
              env,
              {
                ...check,
                nodes: Object.fromEntries(urls.map((u) => [u, view(last.get(`broker ${env} node ${u}`))])),
              },
            ];
          }),
        ),
        intervalMs,
        ...(deps.watch ? { watch: deps.watch() } : {}),
      };
    },
    stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
