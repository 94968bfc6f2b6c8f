// Over 400 lines: one environment's watch: the events, the comparisons and the watch's continuity (beats, gaps, snapshots) share its state (the follower, the last comparison, the store).
import type { Environment } from '../config/index.ts';
import { codeOf, inScope } from '../core/index.ts';
import type { Logger } from '../log/index.ts';
import type { BrokerVersion, Policy, PolicyLayer } from '../policy/index.ts';
import { differences, formatVersion, stateOf, type Transition } from '../policy/index.ts';
import type { RedisTrouble } from '../redis/index.ts';
import { EchoFilter, parseEvent } from './events.ts';
import { EventFollower, type FollowerStatus } from './follower.ts';
import type { Resumed, TransitionInput, WatchStore } from './store.ts';

/**
 * Changes made outside the bot, for one environment: the broker's events when they can be had,
 * a comparison of the policy lists with the last recorded state otherwise — and always at start
 * (what changed while the bot was down), after every reconnect (what was missed meanwhile), and
 * every interval even while events flow (3.10.8 and 4.0.5 publish no event at all for some
 * changes, e.g. none reaches a consumer that is reconnecting).
 *
 * Each change moves the recorded state once across replicas (WatchStore); the replica that moved
 * it checks whether the bot's own apply job announced it, and if not hands it to `outside`.
 *
 * So that the trail can be replayed (`which --at`), the watch also keeps its continuity: while it
 * holds (events followed, or the last comparison read the broker), each replica beats every
 * `heartbeatMs`; a comparison that finds no beat for `gapAfterMs` (every replica down, the broker
 * unreachable) claims the span as a gap. The first watch and every gap's end seal the whole state
 * read into the trail (`seal`: a snapshot, after the gap's record); the changes a comparison
 * finds carry the span in which they were made (`between`), never the moment they were noticed.
 */

/**
 * How a change was found: an event; a comparison on the interval, at start (changed while the
 * bot was down), or once the event exchange is followed again (missed while it was not).
 */
export type ChangeSource = 'events' | 'interval' | 'start' | 'reconnect';

/** A change of one policy that the bot did not make. */
export interface OutsideChange extends Transition {
  readonly env: string;
  /** The broker user who made it (events only); null when it was found by comparing. */
  readonly actor: string | null;
  readonly source: ChangeSource;
  /** When the broker made it (events), or when the comparison found it. */
  readonly at: Date;
  /** Found by comparing: made at a moment not known within this span (after a gap: the gap). */
  readonly between?: { readonly from: Date; readonly to: Date };
}

/** What the watcher seals into the trail: the whole state it read, or a span it did not watch. */
export type Seal =
  | {
      readonly kind: 'snapshot';
      readonly env: string;
      readonly at: Date;
      readonly why: 'first' | 'gap' | 'checkpoint';
      readonly vhosts: readonly string[] | null;
      readonly version?: string;
      readonly user: readonly Policy[];
      readonly operator: readonly Policy[];
      /** The environment's mark in the trail when the reading began (`trailMark`); absent: none read. */
      readonly mark?: string;
    }
  | { readonly kind: 'gap'; readonly env: string; readonly from: Date; readonly to: Date };

/**
 * `grown`: the snapshot was not sealed, because a change of its environment was appended to the
 * trail since its reading began (that change may be newer than the reading).
 */
export type SealOutcome = 'sealed' | 'grown';

/**
 * How many readings a snapshot is tried with when the trail grows during each: then a first or
 * gap snapshot fails its comparison (the claim given back, the next one seals it), a checkpoint
 * waits for the next comparison.
 */
export const SNAPSHOT_READINGS = 5;

/** One reading of the broker's watched policies, and the environment's mark in the trail just before it. */
interface Reading {
  readonly at: Date;
  readonly mark?: string;
  readonly user: readonly Policy[];
  readonly operator: readonly Policy[];
}

/** How often a replica beats while its watch holds, and how long without a beat is a gap. */
export const CONTINUITY_DEFAULTS = { heartbeatMs: 2_000, gapAfterMs: 10_000 } as const;

/**
 * After how many records appended since an environment's last snapshot its watch seals another
 * (`why: checkpoint`): a replay (`--at`) reads one snapshot and at most about this many records,
 * however long the watch has held without a gap.
 */
export const CHECKPOINT_EVERY = 1_000;

/** What the watcher needs of the management API. ManagementClient satisfies it. */
export interface WatchBroker {
  listAllPolicies(layer: PolicyLayer): Promise<Policy[]>;
  getQueue(vhost: string, name: string): Promise<unknown>;
  /** The broker's version, kept with a snapshot (the rules depend on it). */
  overview?(): Promise<{ version: BrokerVersion }>;
}

export interface WatchHealth {
  /** `events` when the event exchange is followed; `interval` when only comparing. */
  readonly mode: 'events' | 'interval';
  /** Why not events, in words an operator can act on. */
  readonly why?: string;
  readonly intervalMs: number;
  readonly lastCompare?: { readonly at: string; readonly ok: boolean; readonly error?: string };
}

export interface WatcherOptions {
  readonly env: Environment;
  readonly broker: WatchBroker;
  readonly store: WatchStore;
  readonly logger: Logger;
  readonly intervalMs: number;
  /** Records and posts a change made outside the bot; retries what may pass itself. */
  readonly outside: (change: OutsideChange) => Promise<void>;
  /** false: compare only (no AMQP). */
  readonly events?: boolean;
  /** How long a comparison waits before claiming a change while events flow (the event has the actor). */
  readonly graceMs?: number;
  /** Backoff of the AMQP reconnects (tests shorten them). */
  readonly retryLowMs?: number;
  readonly retryHighMs?: number;
  readonly now?: () => Date;
  /** Which vhosts are watched; default every one. */
  readonly vhosts?: (vhost: string) => boolean;
  /** The bot's: Redis away told once, a comparison that failed on it then quiet. */
  readonly redisTrouble?: RedisTrouble;
  /**
   * Seals a snapshot or a gap into the trail; absent: nothing sealed (the watch alone). A snapshot
   * with a `mark` is sealed only if the environment's trail has not grown since (else `grown`).
   */
  readonly seal?: (seal: Seal) => Promise<SealOutcome>;
  /** The environment's mark in the trail (AuditTrail `markOf`), read before each reading of the broker. */
  readonly trailMark?: () => Promise<string>;
  /** The records appended since this environment's last snapshot (with `seal`: checkpoints). */
  readonly sinceSnapshot?: () => Promise<number>;
  /** CHECKPOINT_EVERY; tests lower it. */
  readonly checkpointEvery?: number;
  /** The watch's continuity (CONTINUITY_DEFAULTS); tests shorten them. */
  readonly heartbeatMs?: number;
  readonly gapAfterMs?: number;
}

const FOLLOWER_WORDS: Readonly<Record<string, string>> = {
  unreachable: 'the AMQP port is unreachable',
  refused: 'the broker refused the AMQP credentials',
  forbidden:
    "the broker user lacks a permission the event feed needs in the vhost of the AMQP URL (RMQ_AMQP_URL, or the environment's amqpUrl; by default /): grant it as the README's least-privilege section shows",
  'plugin-off': 'the rabbitmq_event_exchange plugin is off (no amq.rabbitmq.event exchange)',
  'other-broker': 'the AMQP endpoint is not the broker of the management API (check RMQ_AMQP_URL)',
  error: 'the event exchange could not be followed',
};

export class Watcher {
  readonly #o: WatcherOptions;
  readonly #echo = new EchoFilter();
  #follower: EventFollower | undefined;
  #timer: NodeJS.Timeout | undefined;
  #beat: NodeJS.Timeout | undefined;
  #comparing: Promise<void> | undefined;
  #lastCompare: WatchHealth['lastCompare'];
  #stopped = false;
  /** The recorded state exists (known once, then for good). */
  #recorded = false;
  /** Events handled so far (for tests that must know a replica has seen one). */
  #eventsHandled = 0;
  /** Work under way (handlers, comparisons), awaited by stop(). */
  readonly #pending = new Set<Promise<unknown>>();

  constructor(options: WatcherOptions) {
    this.#o = options;
  }

  get #log(): Logger {
    return this.#o.logger;
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }

  get eventsHandled(): number {
    return this.#eventsHandled;
  }

  health(): WatchHealth {
    const base = {
      intervalMs: this.#o.intervalMs,
      ...(this.#lastCompare ? { lastCompare: this.#lastCompare } : {}),
    };
    if (this.#o.events === false) return { mode: 'interval', why: 'following events is turned off', ...base };
    const s = this.#follower?.status;
    if (s?.state === 'following') return { mode: 'events', ...base };
    if (s?.state === 'failing')
      return { mode: 'interval', why: `${FOLLOWER_WORDS[s.why] ?? s.why} (${s.detail})`, ...base };
    return { mode: 'interval', why: 'connecting to the event exchange', ...base };
  }

  /** Starts following, compares once (catch-up), then every interval. */
  async start(): Promise<void> {
    if (this.#o.events !== false) {
      const follower = new EventFollower({
        endpoint: this.#o.env.amqp,
        logger: this.#log,
        onMessage: (rk, headers) => this.#track(this.#onMessage(rk, headers)),
        onStatus: (s) => this.#onStatus(s),
        queueVisible: async (vhost, queue) => {
          try {
            return (await this.#o.broker.getQueue(vhost, queue)) !== null;
          } catch {
            return undefined;
          }
        },
        ...(this.#o.retryLowMs === undefined ? {} : { retryLowMs: this.#o.retryLowMs }),
        ...(this.#o.retryHighMs === undefined ? {} : { retryHighMs: this.#o.retryHighMs }),
      });
      this.#follower = follower;
      follower.start();
    } else {
      this.#log.warn(
        { env: this.#o.env.name, intervalMs: this.#o.intervalMs },
        'changes outside the bot: comparing the policy lists on an interval (events turned off)',
      );
    }
    await this.compare('start');
    this.#schedule();
    this.#beat = setInterval(() => void this.#track(this.#beatOnce()), this.#heartbeatMs);
    this.#beat.unref();
  }

  get #heartbeatMs(): number {
    return this.#o.heartbeatMs ?? CONTINUITY_DEFAULTS.heartbeatMs;
  }

  get #gapAfterMs(): number {
    return this.#o.gapAfterMs ?? CONTINUITY_DEFAULTS.gapAfterMs;
  }

  /** The watch holds while events are followed or the last comparison read the broker. */
  #holds(): boolean {
    return this.#follower?.status.state === 'following' || this.#lastCompare?.ok === true;
  }

  async #beatOnce(): Promise<void> {
    if (this.#stopped || !this.#holds()) return;
    try {
      // Stale: the watch broke (this process stalled, or it alone came back): a comparison claims the gap.
      if ((await this.#o.store.beat(this.#now(), this.#gapAfterMs)) === 'stale')
        void this.compare('reconnect');
    } catch (err) {
      if (!this.#o.redisTrouble?.absorbed(err))
        this.#log.warn({ env: this.#o.env.name, err: String(err) }, 'changes outside the bot: beat failed');
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.compare('interval').finally(() => this.#schedule());
    }, this.#o.intervalMs);
    this.#timer.unref();
  }

  #onStatus(s: FollowerStatus): void {
    const env = this.#o.env.name;
    if (s.state === 'following') {
      if (s.checked)
        this.#log.info({ env, queue: s.queue }, 'changes outside the bot: following the event exchange');
      else
        this.#log.warn(
          { env, queue: s.queue },
          "changes outside the bot: events arrive over AMQP, but the management API did not answer to confirm they are its broker's (check RMQ_URL, or the environment's url)",
        );
      // What happened while the connection was down reached nobody: compare now.
      void this.compare('reconnect');
    } else if (s.state === 'failing') {
      // The broker may be gone: a comparison now says so (and the watch stops holding) at once.
      void this.compare('reconnect');
      this.#log.warn(
        { env, why: s.why, detail: s.detail, intervalMs: this.#o.intervalMs },
        `changes outside the bot: comparing the policy lists every ${Math.round(this.#o.intervalMs / 1000)} s, because ${FOLLOWER_WORDS[s.why] ?? s.why} (${s.detail}); retrying events with backoff`,
      );
    }
  }

  #track<T>(p: Promise<T>): Promise<T> {
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p)).catch(() => undefined);
    return p;
  }

  async #onMessage(routingKey: string, headers: Record<string, unknown>): Promise<void> {
    const parsed = parseEvent(routingKey, headers, this.#now().getTime());
    if (parsed.kind === 'ignored') {
      this.#log.debug({ env: this.#o.env.name, routingKey, why: parsed.why }, 'event ignored');
      return;
    }
    const e = parsed.event;
    if (this.#echo.isEcho(routingKey, e) || !this.#watched(e.vhost)) return;
    try {
      await this.#record(
        { layer: e.layer, vhost: e.vhost, name: e.name, after: e.after, eventAtMs: e.atMs },
        { actor: e.actor, source: 'events', at: new Date(e.atMs) },
      );
    } catch (err) {
      // Redis or the broker failed: the next comparison finds the change (without the actor).
      if (!this.#o.redisTrouble?.absorbed(err))
        this.#log.error({ env: this.#o.env.name, err: String(err), policy: e.name }, 'event not recorded');
    } finally {
      this.#eventsHandled++;
    }
  }

  /** The environment's vhosts (RMQ_VHOSTS: on a shared broker, one team's), and a test's filter on top. */
  #watched(vhost: string): boolean {
    return inScope(this.#o.env, vhost) && (this.#o.vhosts?.(vhost) ?? true);
  }

  /**
   * Compares the broker's policies with the recorded state. The first ever comparison records
   * the state as the baseline and reports nothing. Runs one at a time.
   */
  compare(source: ChangeSource): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#comparing) return this.#comparing;
    const run = this.#compare(source).finally(() => {
      this.#comparing = undefined;
    });
    this.#comparing = run;
    return this.#track(run);
  }

  async #compare(source: ChangeSource): Promise<void> {
    const env = this.#o.env.name;
    const at = this.#now();
    try {
      // The recorded state, read before the broker: an event handled after this moves it, and the
      // comparison's claim of that policy is then refused (`moved`), its reading maybe older.
      const recorded = await this.#o.store.state();
      const reading = await this.#read(at);
      const now = stateOf(reading);
      const baseline = (await this.#o.store.recordedSince()) === null;
      if (baseline) {
        await this.#o.store.recordBaseline(now, at);
        this.#log.info(
          { env, policies: now.size },
          "changes outside the bot: recorded the broker's policies",
        );
      }
      const resumed = await this.#o.store.resume(at, this.#gapAfterMs);
      if (resumed.kind === 'gap')
        await this.#sealOrGiveBack(resumed, async () => {
          await this.#o.seal?.(this.#gapSeal(resumed.from, at));
        });
      // Sealed before the differences are recorded, which may wait for the events: what is appended
      // meanwhile (changes made after this reading among it) follows the snapshot in the chain,
      // where a replay from it reads them. A change appended since the reading began would precede
      // it: then it is sealed of a newer reading (`#sealSnapshot`).
      // The differences are those of the reading sealed: of a newer reading than the first, what
      // they record follows a snapshot that already holds it, never one that holds a later state.
      let compared = reading;
      const why = resumed.kind;
      if (why !== 'ok')
        await this.#sealOrGiveBack(resumed, async () => {
          const sealed = await this.#sealSnapshot(why, reading);
          if (!sealed)
            throw new Error(
              `the trail grew during each of ${SNAPSHOT_READINGS} readings of the broker: the snapshot is sealed at the next comparison`,
            );
          compared = sealed;
        });
      else if (await this.#checkpointDue()) {
        const sealed = await this.#sealSnapshot('checkpoint', reading);
        if (sealed) compared = sealed;
        else
          this.#log.warn(
            { env, readings: SNAPSHOT_READINGS },
            'changes outside the bot: the trail grew during each reading of the broker; the checkpoint is sealed at the next comparison',
          );
      }
      if (!baseline)
        await this.#recordDifferences(
          recorded,
          compared === reading ? now : stateOf(compared),
          source,
          compared.at,
          resumed,
        );
      this.#lastCompare = { at: at.toISOString(), ok: true };
    } catch (err) {
      this.#lastCompare = {
        at: at.toISOString(),
        ok: false,
        error: codeOf(err) ?? 'error',
      };
      if (!this.#o.redisTrouble?.absorbed(err))
        this.#log.warn({ env, source, err: String(err) }, 'changes outside the bot: comparison failed');
    }
  }

  /** What the comparison found changed since the recorded state, each with the span it was made in. */
  async #recordDifferences(
    recorded: ReadonlyMap<string, string>,
    now: ReadonlyMap<string, string>,
    source: ChangeSource,
    at: Date,
    resumed: Resumed,
  ): Promise<void> {
    // A vhost left out of the environment's since the state was recorded is not a change either.
    const found = differences(recorded, now).filter((t) => this.#watched(t.vhost));
    // The event, which names who made the change, is usually a moment away: let it win. A policy
    // whose state an event moved meanwhile is then left to the events (`record` finds it moved):
    // the reading may be older than they are, and recorded it would turn the policy back.
    if (found.length > 0 && source !== 'start' && this.#follower?.status.state === 'following')
      await new Promise((r) => setTimeout(r, this.#o.graceMs ?? 3000));
    const from = resumed.kind === 'gap' ? resumed.from : resumed.kind === 'ok' ? resumed.since : undefined;
    const between =
      from === undefined || from >= at.getTime() ? {} : { between: { from: new Date(from), to: at } };
    for (const t of found) {
      // Stopping: what is left is found again by the next start's comparison.
      if (this.#stopped) break;
      await this.#record(
        { layer: t.layer, vhost: t.vhost, name: t.name, after: t.after, expected: t.before },
        { actor: null, source, at, ...between },
      );
    }
  }

  /**
   * The broker's watched policies at `at`, and the environment's mark in the trail read before
   * them: a snapshot of this reading is sealed only if nothing was appended since.
   */
  async #read(at: Date): Promise<Reading> {
    const mark = await this.#o.trailMark?.();
    const [user, operator] = await Promise.all([
      this.#o.broker.listAllPolicies('user'),
      this.#o.broker.listAllPolicies('operator'),
    ]);
    return {
      at,
      ...(mark === undefined ? {} : { mark }),
      user: user.filter((p) => this.#watched(p.vhost)),
      operator: operator.filter((p) => this.#watched(p.vhost)),
    };
  }

  /**
   * Seals a snapshot of the reading; when a change of the environment was appended to the trail
   * since the reading began (`grown`: it may be newer than the reading, and chained before the
   * snapshot no replay from it would read it), of a new reading, up to SNAPSHOT_READINGS in all.
   * The reading sealed, or undefined: not sealed.
   */
  async #sealSnapshot(why: 'first' | 'gap' | 'checkpoint', first: Reading): Promise<Reading | undefined> {
    const seal = this.#o.seal;
    if (!seal) return first;
    const version = await this.#version();
    let reading = first;
    for (let readings = 1; ; readings++) {
      const outcome = await seal({
        kind: 'snapshot',
        env: this.#o.env.name,
        at: reading.at,
        why,
        vhosts: this.#o.env.vhosts ? [...this.#o.env.vhosts] : null,
        ...(version ? { version } : {}),
        user: reading.user,
        operator: reading.operator,
        ...(reading.mark === undefined ? {} : { mark: reading.mark }),
      });
      if (outcome !== 'grown') return reading;
      if (readings >= SNAPSHOT_READINGS || this.#stopped) return undefined;
      reading = await this.#read(this.#now());
    }
  }

  #gapSeal(from: number, to: Date): Seal {
    return { kind: 'gap', env: this.#o.env.name, from: new Date(from), to };
  }

  async #version(): Promise<string | undefined> {
    try {
      const o = await this.#o.broker.overview?.();
      return o ? formatVersion(o.version) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether enough records were appended since the last snapshot to seal another (a checkpoint). */
  async #checkpointDue(): Promise<boolean> {
    if (!this.#o.seal || !this.#o.sinceSnapshot) return false;
    return (await this.#o.sinceSnapshot()) >= (this.#o.checkpointEvery ?? CHECKPOINT_EVERY);
  }

  /**
   * Seals a snapshot or a gap; one that cannot be sealed gives its claim back (the watch known
   * until the gap's start, or never), so the next comparison seals it again.
   */
  async #sealOrGiveBack(resumed: Resumed, seal: () => Promise<void>): Promise<void> {
    if (!this.#o.seal) return;
    try {
      await seal();
    } catch (err) {
      await this.#o.store.unclaim(resumed.kind === 'gap' ? resumed.from : null);
      throw err;
    }
  }

  /** Moves the recorded state by one change; a change the bot did not make goes to `outside`. */
  async #record(
    input: TransitionInput,
    how: Pick<OutsideChange, 'actor' | 'source' | 'at' | 'between'>,
  ): Promise<void> {
    // Before any state is recorded, no change has a known before: the first comparison records.
    this.#recorded ||= (await this.#o.store.recordedSince()) !== null;
    if (!this.#recorded) return;
    const outcome = await this.#o.store.transition(input);
    if (outcome.kind !== 'changed') return;
    const env = this.#o.env.name;
    const change: OutsideChange = {
      env,
      layer: input.layer,
      vhost: input.vhost,
      name: input.name,
      before: outcome.before,
      after: input.after,
      ...how,
    };
    // The bot's own apply announced this exact change, and (when the broker names the user) made
    // it as the bot's broker identity: not outside.
    const own = await this.#o.store.takeOwnWrite(input, input.after);
    if (own !== null && (how.actor === null || how.actor === this.#o.env.user)) {
      this.#log.debug({ env, policy: input.name, request: own }, "the bot's own change, seen");
      return;
    }
    this.#log.info(
      {
        env,
        vhost: input.vhost,
        policy: input.name,
        layer: input.layer,
        actor: how.actor,
        source: how.source,
      },
      'a policy was changed outside the bot',
    );
    try {
      await this.#o.outside(change);
    } catch (err) {
      // The state has moved: this change will not be found again. Said loudly.
      this.#log.error(
        { env, vhost: input.vhost, policy: input.name, err: String(err) },
        'a change outside the bot could not be recorded',
      );
    }
  }

  /** Stops comparing and following; waits for work under way. */
  async stop(): Promise<void> {
    // The watch held until now: a gap that follows starts here, not at the last beat.
    if (this.#holds()) await this.#o.store.beat(this.#now(), this.#gapAfterMs).catch(() => undefined);
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#beat);
    await this.#follower?.close();
    await Promise.allSettled([...this.#pending]);
  }
}
