import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AuditEntry, LinksEntry } from '../audit/index.ts';
import type { Config, Environment } from '../config/index.ts';
import { codeOf, SleepAborted, sleep } from '../core/index.ts';
import { countLinks, type LinkCounts, type LinkRow } from '../links/index.ts';
import type { Logger } from '../log/index.ts';
import type { RedisTrouble } from '../redis/index.ts';
import {
  confirmed,
  type DownLink,
  type LinksMoved,
  linksMoved,
  stuckAcross,
  type WatchedLink,
} from './linksBurst.ts';
import { LinksStore } from './linksStore.ts';
import { tries } from './outside.ts';

/**
 * Federation links and shovels watched, for every environment: what should run (the policies in
 * force, upstreams, sets, shovel parameters) read against what runs, every `RMQ_WATCH_INTERVAL`
 * and right after a node goes down or comes back (`GET /api/nodes`, `running`, read every
 * `nodesEveryMs`). The links that went down since the last reading are one burst: one audit
 * record per vhost (`action: "links"`, `went: "down"`), one post to the approvals channel with
 * the runbook's next step for each; the links that came back, the same with `went: "back"`. A link
 * found down is read again `settleMs` later before it counts (a link moving to another node is
 * missing for an instant). The recorded state moves once across replicas (linksStore.ts), so a
 * burst is posted once. Every reading also gives the counts by state (`rmq_links{state}`).
 */

/** How a reading came: on the interval, at start, or right after a node went down or came back. */
export type LinksSource = 'interval' | 'start' | 'nodes';

/** One node as `GET /api/nodes` reports it. */
export interface NodeRunning {
  readonly name: string;
  readonly running: boolean;
}

/** A burst: the links of one environment that went down (or came back) at one reading. */
export interface LinksWent {
  readonly env: string;
  readonly went: 'down' | 'back';
  readonly source: LinksSource;
  /** The node change that made the reading (source `nodes`). */
  readonly nodes?: { readonly down: readonly string[]; readonly up: readonly string[] };
  readonly links: readonly WatchedLink[];
  /** How many links of the environment are down after it. */
  readonly stillDown: number;
  readonly at: Date;
}

/** What the watch needs of the Slack side. */
export interface LinksNotifier {
  /** Posts one message for a burst's records (one per vhost) to the approvals channel (none: tells nobody). */
  links(entries: readonly LinksEntry[], approvalsChannel: string | undefined): Promise<void>;
}

/** What the watch needs of the audit trail. */
export interface LinksTrail {
  append(entry: AuditEntry): Promise<unknown>;
}

export interface LinksWatchOptions {
  readonly env: Environment;
  /** Every link of the environment's vhosts that should run or runs, classified (src/links/ rows). */
  readonly read: () => Promise<readonly LinkRow[]>;
  readonly nodes: () => Promise<readonly NodeRunning[]>;
  readonly store: LinksStore;
  readonly logger: Logger;
  readonly intervalMs: number;
  /** How often the nodes are read; default min(interval, 5 s). */
  readonly nodesEveryMs?: number;
  /** How long a link found down waits for a second reading; default min(interval / 2, 5 s). */
  readonly settleMs?: number;
  /** Each reading's counts by state (the metric). */
  readonly counted?: (counts: LinkCounts) => void;
  /** Records and posts a burst; retries what may pass itself. */
  readonly went: (burst: LinksWent) => Promise<void>;
  readonly redisTrouble?: RedisTrouble;
  readonly now?: () => Date;
}

const same = (a: ReadonlyMap<string, DownLink>, b: ReadonlyMap<string, DownLink>) =>
  JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

/** What /healthz says of an environment's links watch (`watch.<env>.links`); readiness does not depend on it. */
export interface LinksHealth {
  readonly intervalMs: number;
  /** The last reading: when it began, whether it was read, and why not. */
  readonly lastRead?: { readonly at: string; readonly ok: boolean; readonly error?: string };
  /** How many links that should run were down at the last reading (as recorded). */
  readonly down?: number;
}

export class LinksWatch {
  readonly #o: LinksWatchOptions;
  #stopped = false;
  /** Aborted at stop: a reading waiting to read again ends. */
  readonly #stopping = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #nodesTimer: NodeJS.Timeout | undefined;
  #reading: Promise<void> | undefined;
  /** A node change seen while a reading ran: read again once it ends. */
  #again: { nodes: NonNullable<LinksWent['nodes']> } | undefined;
  /** The running nodes last read ('' before the first reading). */
  #running = '';
  #lastRead: LinksHealth['lastRead'];
  #down: number | undefined;
  /** When each link was first seen not running, reading after reading (stuckAcross). */
  readonly #notRunningSince = new Map<string, number>();
  readonly #pending = new Set<Promise<unknown>>();

  constructor(options: LinksWatchOptions) {
    this.#o = options;
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }

  health(): LinksHealth {
    return {
      intervalMs: this.#o.intervalMs,
      ...(this.#lastRead ? { lastRead: this.#lastRead } : {}),
      ...(this.#down === undefined ? {} : { down: this.#down }),
    };
  }

  async start(): Promise<void> {
    await this.#readNodes();
    await this.read('start');
    this.#schedule();
    this.#scheduleNodes();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.read('interval').finally(() => this.#schedule());
    }, this.#o.intervalMs);
    this.#timer.unref();
  }

  #scheduleNodes(): void {
    if (this.#stopped) return;
    this.#nodesTimer = setTimeout(() => {
      void this.#track(this.#readNodes()).finally(() => this.#scheduleNodes());
    }, this.#o.nodesEveryMs ?? Math.min(this.#o.intervalMs, 5_000));
    this.#nodesTimer.unref();
  }

  #track<T>(p: Promise<T>): Promise<T> {
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p)).catch(() => undefined);
    return p;
  }

  /** Reads the nodes; a node gone down or come back since the last time: the links read now. */
  async #readNodes(): Promise<void> {
    let nodes: readonly NodeRunning[];
    try {
      nodes = await this.#o.nodes();
    } catch (err) {
      this.#o.logger.debug({ err: String(err) }, 'links: the nodes could not be read');
      return;
    }
    const running = nodes
      .filter((n) => n.running)
      .map((n) => n.name)
      .sort();
    const key = running.join('\n');
    const before = this.#running === '' ? undefined : this.#running.split('\n');
    this.#running = key;
    if (!before || key === before.join('\n')) return;
    const change = {
      down: before.filter((n) => !running.includes(n)),
      up: running.filter((n) => !before.includes(n)),
    };
    this.#o.logger.info(
      { env: this.#o.env.name, ...change },
      'links: a node went down or came back, reading the links',
    );
    void this.read('nodes', change);
  }

  /** Reads the links once (one at a time: a reading asked for meanwhile runs after it). */
  read(source: LinksSource, nodes?: LinksWent['nodes']): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#reading) {
      if (nodes) this.#again = { nodes };
      return this.#reading;
    }
    const run = this.#read(source, nodes).finally(() => {
      this.#reading = undefined;
      const again = this.#again;
      this.#again = undefined;
      if (again) void this.read('nodes', again.nodes);
    });
    this.#reading = run;
    return this.#track(run);
  }

  async #rows(): Promise<readonly LinkRow[]> {
    const rows = stuckAcross(await this.#o.read(), this.#notRunningSince, this.#now().getTime());
    this.#o.counted?.(countLinks(rows));
    return rows;
  }

  async #read(source: LinksSource, nodes: LinksWent['nodes'] | undefined): Promise<void> {
    const env = this.#o.env.name;
    const at = this.#now();
    try {
      const rows = await this.#rows();
      let recorded = await this.#o.store.read();
      let moved: LinksMoved = linksMoved(recorded.down, rows, at, this.#notRunningSince);
      if (moved.down.length > 0) {
        // Read again a moment later: only what is still down went down.
        await sleep(this.#o.settleMs ?? Math.min(this.#o.intervalMs / 2, 5_000), this.#stopping.signal);
        const again = await this.#rows();
        recorded = await this.#o.store.read();
        moved = confirmed(
          linksMoved(recorded.down, rows, at, this.#notRunningSince),
          linksMoved(recorded.down, again, at, this.#notRunningSince),
          recorded.down,
        );
      }
      this.#lastRead = { at: at.toISOString(), ok: true };
      this.#down = recorded.down.size;
      // The run of readings goes on: `links` trusts the recorded state only while it does (linksStore.ts `watched`).
      await this.#o.store.readAt(at, this.#o.intervalMs);
      if (moved.down.length === 0 && moved.back.length === 0 && same(moved.next, recorded.down)) return;
      // Another replica moved the state since it was read: the burst is its to tell.
      if (!(await this.#o.store.move(recorded.version, moved.next))) return;
      this.#down = moved.next.size;
      const stillDown = moved.next.size;
      const burst = { env, source, ...(source === 'nodes' && nodes ? { nodes } : {}), stillDown, at };
      if (moved.down.length > 0) {
        this.#o.logger.warn(
          { env, source, down: moved.down.length, stillDown },
          'links that should run went down',
        );
        await this.#tell({ ...burst, went: 'down', links: moved.down });
      }
      if (moved.back.length > 0) {
        this.#o.logger.info({ env, source, back: moved.back.length, stillDown }, 'links came back');
        await this.#tell({ ...burst, went: 'back', links: moved.back });
      }
    } catch (err) {
      if (err instanceof SleepAborted) return;
      this.#lastRead = { at: at.toISOString(), ok: false, error: codeOf(err) ?? 'error' };
      if (!this.#o.redisTrouble?.absorbed(err))
        this.#o.logger.warn({ env, source, err: String(err) }, 'links: reading what runs failed');
    }
  }

  async #tell(burst: LinksWent): Promise<void> {
    try {
      await this.#o.went(burst);
    } catch (err) {
      // The state has moved: this burst is not found again. Said loudly.
      this.#o.logger.error(
        { env: burst.env, went: burst.went, links: burst.links.length, err: String(err) },
        'links that went down or came back could not be recorded',
      );
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stopping.abort();
    clearTimeout(this.#timer);
    clearTimeout(this.#nodesTimer);
    await Promise.allSettled([...this.#pending]);
  }
}

/** A burst's audit records, one per vhost, in the order of the vhosts. */
export function linksEntries(burst: LinksWent): LinksEntry[] {
  const byVhost = new Map<string, WatchedLink[]>();
  for (const l of burst.links) byVhost.set(l.vhost, [...(byVhost.get(l.vhost) ?? []), l]);
  return [...byVhost].map(([vhost, links]) => ({
    id: `l-${randomBytes(10).toString('hex')}`,
    at: burst.at.toISOString(),
    env: burst.env,
    action: 'links',
    vhost,
    went: burst.went,
    detectedBy: burst.source,
    ...(burst.nodes ? { nodes: { down: [...burst.nodes.down], up: [...burst.nodes.up] } } : {}),
    // A record's fields only (a link down also carries the broker's last error: the watch's state's, linksStore.ts).
    links: links.map(({ kind, vhost, object, upstream, policy, state, node, reason, next, since }) => ({
      kind,
      vhost,
      object,
      upstream,
      policy,
      state,
      node,
      reason,
      next,
      since,
    })),
    stillDown: burst.stillDown,
  }));
}

export interface LinksWatchers {
  /** Each environment's links watch, for /healthz. */
  health(): Record<string, LinksHealth>;
  stop(): Promise<void>;
}

/**
 * What src/bot/bot.ts builds: every environment's links watched, each burst recorded in the audit
 * trail and posted to the environment's approvals channel.
 */
export function watchLinks(o: {
  readonly config: Config;
  readonly redis: Redis;
  readonly keyPrefix: string;
  readonly logger: Logger;
  readonly readLinks: (env: Environment) => Promise<readonly LinkRow[]>;
  readonly nodesOf: (env: string) => () => Promise<readonly NodeRunning[]>;
  readonly trail: LinksTrail;
  readonly notifier: LinksNotifier;
  readonly counted?: (env: string, counts: LinkCounts) => void;
  readonly redisTrouble?: RedisTrouble;
  readonly tuning?: Pick<LinksWatchOptions, 'nodesEveryMs' | 'settleMs'>;
}): LinksWatchers {
  const logger = o.logger.child({ part: 'links-watch' });
  const went = async (burst: LinksWent) => {
    const entries = linksEntries(burst);
    for (const entry of entries) {
      try {
        await tries(3, 500, () => o.trail.append(entry));
      } catch (err) {
        logger.error(
          { env: burst.env, id: entry.id, err: String(err) },
          'links burst not recorded in the audit trail',
        );
      }
    }
    const channel = o.config.environments.find((e) => e.name === burst.env)?.approvalsChannel;
    await tries(3, 500, () => o.notifier.links(entries, channel));
  };
  const watches = o.config.environments.map((env): [string, LinksWatch] => [
    env.name,
    new LinksWatch({
      env,
      read: () => o.readLinks(env),
      nodes: o.nodesOf(env.name),
      store: new LinksStore(o.redis, o.keyPrefix, env.name),
      logger: logger.child({ env: env.name }),
      intervalMs: o.config.watchIntervalMs,
      ...(o.counted ? { counted: (c: LinkCounts) => o.counted?.(env.name, c) } : {}),
      went,
      ...(o.redisTrouble ? { redisTrouble: o.redisTrouble } : {}),
      ...o.tuning,
    }),
  ]);
  const started = watches.map(([, w]) =>
    w.start().catch((err: unknown) => logger.error({ err: String(err) }, 'links: the watch did not start')),
  );
  return {
    health: () => Object.fromEntries(watches.map(([name, w]) => [name, w.health()])),
    async stop() {
      await Promise.allSettled(started);
      await Promise.allSettled(watches.map(([, w]) => w.stop()));
    },
  };
}
