// Over 400 lines: every endpoint the bot reads or writes, each beside the trap the broker sets there, in the one class the rest of src/ talks to.
/**
 * The RabbitMQ management HTTP API, as the bot needs it: `ManagementClient`, its endpoints. Every
 * answer parsed with zod (`responses.ts`); every failure a RabbitError with a stable code. How it
 * talks HTTP (pool, deadlines, size limits, retries of GETs, never of writes) is `transport.ts`;
 * the streamed listings are `listings.ts`.
 *
 * Nothing here waits or grows without bound: every request has a total deadline, every body a
 * size limit, and `forQuestion(ms)` gives a view of the client whose calls share one budget,
 * retries included. Callers with other needs (the apply job) pass other `timeouts`, `limits` and
 * `getRetries`.
 */

import { maskUrisIn } from '../core/index.ts';
import type { Parameter as LinkParameter, ReportedFederationLink, ReportedShovel } from '../links/index.ts';
import {
  type BrokerVersion,
  enabledPlugins,
  type Parameter,
  type ParameterComponent,
  type Policy,
  type PolicyLayer,
  parseVersion,
  pluginsNeedApplications,
} from '../policy/index.ts';
import { streamBindings, streamConsumers } from './durabilityListings.ts';
import { RabbitError } from './errors.ts';
import {
  type LinkComponent,
  listFederationLinks,
  listParameters,
  listShovels,
  parameterSchema,
} from './linkListings.ts';
import {
  FOUND_STATS,
  foundRecords,
  foundStatsAsOf,
  queueListingPage,
  queuePolicyFromRecord,
  queuesFound,
  STATS_OVER_PAGE,
  streamExchanges,
  streamNames,
  streamQueueStats,
  streamQueues,
  streamQueuesLive,
} from './listings.ts';
import {
  type Binding,
  bindingListSchema,
  channelListSchema,
  type DeprecatedFeature,
  deprecatedFeaturesSchema,
  type ExchangeDetail,
  type ExchangeListing,
  exchangeSchema,
  type FederationState,
  federationLinksSchema,
  nodeApplicationsSchema,
  nodeNamesSchema,
  nodeRunningSchema,
  overviewSchema,
  type Permission,
  parameterNamesSchema,
  permissionSchema,
  policyListSchema,
  policySchema,
  type QueueDetail,
  type QueueListing,
  type QueueRecordLive,
  type QueueStats,
  queueDetailSchema,
  toBinding,
  toExchange,
  toPolicy,
  toQueueDetail,
  toWhoAmI,
  vhostListSchema,
  vhostStatsSchema,
  type WhoAmI,
  whoamiSchema,
} from './responses.ts';
import { statisticsOf } from './statistics.ts';
import { Transport, type TransportOptions } from './transport.ts';

export {
  type BodyLimits,
  type CallInfo,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  type HttpMethod,
  type Timeouts,
} from './transport.ts';

export type ManagementClientOptions = TransportOptions;

/**
 * A parameter's write, whose refusal may quote the value written (`value`), URIs and passwords
 * included: its error carries the broker's reason with every URI masked and every password of the
 * value hidden.
 */
async function masked<T>(call: Promise<T>, value?: unknown): Promise<T> {
  try {
    return await call;
  } catch (e) {
    if (!(e instanceof RabbitError)) throw e;
    throw new RabbitError({
      code: e.code,
      method: e.method,
      path: e.path,
      ...(e.status !== undefined ? { status: e.status } : {}),
      ...(e.reason !== undefined ? { reason: maskUrisIn(e.reason, value) } : {}),
    });
  }
}

/**
 * What `GET /api/federation-links/{vhost}` answers on a broker without the federation
 * management plugin: the management plugin's static file handler takes the unknown path and
 * answers 400 (a vhost spelt with %2F) or 406 (any other), never 404 (3.10.8, 4.0.5, 4.3.6).
 * With the plugin, a vhost it does not know is a 404.
 */
const NO_SUCH_ENDPOINT: ReadonlySet<number> = new Set([400, 404, 406]);

/**
 * The tags that may list federation links (the plugin's GET takes a monitor: 4.0.5 and 4.3.6);
 * `policymaker` and `management` alone are refused. Restarting a link took the same on 4.0.5
 * and takes `policymaker` or `administrator` from 4.3 (test/integration/federation-links.test.ts);
 * the bot never restarts one.
 */
export const FEDERATION_LINKS_TAGS = ['monitoring', 'administrator'] as const;

export interface BrokerOverview {
  /** With the Erlang release (`erlang`) when the broker reports it. */
  readonly version: BrokerVersion;
  /** `rabbitmq_version` as sent, e.g. "3.10.8". */
  readonly versionText: string;
  readonly clusterName?: string;
  /** The exchange types registered; undefined when not reported. */
  readonly exchangeTypes?: readonly string[];
}

const LAYER_PATH: Readonly<Record<PolicyLayer, string>> = {
  user: 'policies',
  operator: 'operator-policies',
};

export class ManagementClient {
  /** Replaced in a `forQuestion` view by a transport with the question's budget. */
  protected readonly http: Transport;
  private overviewCache: Promise<BrokerOverview> | undefined;
  private pluginsCache: Promise<ReadonlySet<string> | undefined> | undefined;
  /** In a `forQuestion` view: its budget, in ms (said when a reading runs out of it). */
  declare readonly budgetMs?: number;

  constructor(options: ManagementClientOptions) {
    this.http = new Transport(options);
  }

  /**
   * The same client (pool, settings, cached overview) with one budget for every call made
   * through it from now on, retries included: a call that cannot finish in what is left fails
   * as `timeout`, and no retry starts that could not. One question, one budget.
   */
  forQuestion(budgetMs: number, options: { stretchableToMs?: number } = {}): this {
    const view = Object.create(this) as this;
    // Closing the view closes nothing (the transport's view does not own the pool). Writes to
    // the overview cache land on the view; reads fall through to the parent's.
    Object.defineProperty(view, 'http', { value: this.http.forQuestion(budgetMs, options) });
    Object.defineProperty(view, 'budgetMs', { value: budgetMs });
    return view;
  }

  /**
   * A default budget made to fit this broker: what is left of it becomes at least `ms` (up to
   * `forQuestion`'s `stretchableToMs`); nothing without one. The inventory asks it once the vhost's
   * listing without statistics has told what this broker's listings cost.
   */
  stretchBudget(ms: number): void {
    this.http.stretch(ms);
  }

  /**
   * Where the listing with statistics is asked with nothing read before it to tell its cost: a
   * default budget stretched to what it may take on this broker, from one page of the listing
   * without statistics asked beside it (listings.ts STATS_OVER_PAGE). Nothing asked without a
   * default budget; a page that fails stretches nothing.
   */
  async stretchBudgetForStatistics(vhost: string): Promise<void> {
    if (!this.http.stretchable) return;
    const started = Date.now();
    try {
      await queueListingPage(this.http, vhost);
    } catch {
      return;
    }
    this.http.stretch((Date.now() - started) * STATS_OVER_PAGE);
  }

  /** Every node's management URL, as configured (one for a single broker). */
  get nodeUrls(): readonly string[] {
    return this.http.nodeUrls;
  }

  /** The same client on node `url` alone (its pool, its settings): for a check of each node. */
  onNode(url: string): this {
    const view = Object.create(this) as this;
    Object.defineProperty(view, 'http', { value: this.http.onlyNode(url) });
    // Each node's own overview: the cache of the cluster's view is not this node's answer.
    Object.defineProperty(view, 'overviewCache', { value: undefined, writable: true });
    Object.defineProperty(view, 'pluginsCache', { value: undefined, writable: true });
    return view;
  }

  /** The URL of the node that answered last (asked next): the `node` of an answer. */
  get node(): string {
    return this.http.node;
  }

  /**
   * Closes the client's own pool: requests in flight may finish for `graceMs`, then they are
   * aborted and the connections destroyed. Shutdown never waits on a broker that does not answer.
   */
  close(graceMs?: number): Promise<void> {
    return this.http.close(graceMs);
  }

  // ---- broker ---------------------------------------------------------------------------

  /**
   * Cached per client: the version decides which keys and apply-to values exist. Without the
   * broker's statistics (`disable_stats`), which it would otherwise gather from every node for
   * totals nothing here reads; the version, cluster name and exchange types stay (3.10.8 to 4.3.6).
   */
  overview(): Promise<BrokerOverview> {
    if (!this.overviewCache) {
      const path = `${this.http.path('overview')}?disable_stats=true`;
      this.overviewCache = this.http.getJson(path, overviewSchema).then((o) => {
        const version = parseVersion(o.rabbitmq_version);
        if (!version) {
          throw new RabbitError({
            code: 'bad-response',
            method: 'GET',
            path,
            message: `unreadable rabbitmq_version ${JSON.stringify(o.rabbitmq_version)}`,
          });
        }
        const erlang = o.erlang_version === undefined ? undefined : Number.parseInt(o.erlang_version, 10);
        return {
          version: erlang === undefined || Number.isNaN(erlang) ? version : { ...version, erlang },
          versionText: o.rabbitmq_version,
          ...(o.cluster_name === undefined ? {} : { clusterName: o.cluster_name }),
          ...(o.exchange_types === undefined ? {} : { exchangeTypes: o.exchange_types.map((t) => t.name) }),
        };
      });
      this.overviewCache.catch(() => {
        this.overviewCache = undefined;
      });
    }
    return this.overviewCache;
  }

  /**
   * The plugins with policy keys that are enabled (src/policy/plugins.ts), undefined when not
   * known. The overview settles it but on 4.2+ without the federation exchange type: then the
   * nodes' running applications, which only `monitoring` and `administrator` may list.
   */
  plugins(): Promise<ReadonlySet<string> | undefined> {
    if (!this.pluginsCache) {
      this.pluginsCache = this.overview().then(async ({ version, exchangeTypes }) => {
        if (!pluginsNeedApplications(version, exchangeTypes))
          return enabledPlugins({ version, exchangeTypes });
        return enabledPlugins({ version, exchangeTypes, applications: await this.nodeApplications() });
      });
      this.pluginsCache.catch(() => {
        this.pluginsCache = undefined;
      });
    }
    return this.pluginsCache;
  }

  /**
   * Each node's running applications (a plugin enabled is one of them); undefined when they could
   * not be read (only `monitoring` and `administrator` may list them).
   */
  nodeApplications(): Promise<string[][] | undefined> {
    return this.http
      .getJson(`${this.http.path('nodes')}?columns=name,applications`, nodeApplicationsSchema())
      .then(
        (nodes) => nodes.flatMap((n) => (n.applications ? [n.applications.map((a) => a.name)] : [])),
        () => undefined,
      );
  }

  /**
   * The deprecated features the broker reports in use, each with the phase it gives it; `null`
   * when this version does not report them (3.10.8 has no such endpoint).
   */
  async deprecatedFeaturesUsed(): Promise<DeprecatedFeature[] | null> {
    try {
      const used = await this.http.getJson(
        this.http.path('deprecated-features', 'used'),
        deprecatedFeaturesSchema(),
      );
      return used.map((f) => ({ name: f.name, phase: f.deprecation_phase }));
    } catch (e) {
      // A path the management API does not have: 406 to `accept: application/json` (3.10.8, and
      // 4.0.5 for any unknown path), 404 otherwise.
      if (e instanceof RabbitError && (e.code === 'not-found' || e.status === 406)) return null;
      throw e;
    }
  }

  async whoami(): Promise<WhoAmI> {
    return toWhoAmI(await this.http.getJson(this.http.path('whoami'), whoamiSchema()));
  }

  /**
   * `user`'s permissions in `vhost`, `null` when it has none (the broker's 404). Policy writes
   * need some permission in the vhost plus the `policymaker` (or `administrator`) tag.
   */
  async permissions(vhost: string, user: string): Promise<Permission | null> {
    return this.http.getJsonOrNull(this.http.path('permissions', vhost, user), permissionSchema());
  }

  async listVhosts(): Promise<string[]> {
    const vhosts = await this.http.getJson(this.http.path('vhosts'), vhostListSchema());
    return vhosts.map((v) => v.name);
  }

  // ---- policies -------------------------------------------------------------------------

  async listPolicies(vhost: string): Promise<Policy[]> {
    return (await this.http.getJson(this.http.path('policies', vhost), policyListSchema)).map(toPolicy);
  }

  async listOperatorPolicies(vhost: string): Promise<Policy[]> {
    return (await this.http.getJson(this.http.path('operator-policies', vhost), policyListSchema)).map(
      toPolicy,
    );
  }

  /** The policies of one layer in every vhost (one request; what the bot compares on an interval). */
  async listAllPolicies(layer: PolicyLayer): Promise<Policy[]> {
    return (await this.http.getJson(this.http.path(LAYER_PATH[layer]), policyListSchema)).map(toPolicy);
  }

  /** `null` when there is no such policy (or no such vhost). */
  async getPolicy(layer: PolicyLayer, vhost: string, name: string): Promise<Policy | null> {
    const p = await this.http.getJsonOrNull(this.http.path(LAYER_PATH[layer], vhost, name), policySchema);
    return p && toPolicy(p);
  }

  /**
   * Replaces the whole policy (the broker has no partial update and no compare-and-set).
   * 201 -> created, 204 -> updated, also when nothing changed.
   */
  async putPolicy(layer: PolicyLayer, policy: Policy): Promise<'created' | 'updated'> {
    const reply = await this.http.call('PUT', this.http.path(LAYER_PATH[layer], policy.vhost, policy.name), {
      pattern: policy.pattern,
      definition: policy.definition,
      priority: policy.priority,
      'apply-to': policy.applyTo,
    });
    return reply.status === 201 ? 'created' : 'updated';
  }

  /** Throws RabbitError 'not-found' when there is no such policy. */
  async deletePolicy(layer: PolicyLayer, vhost: string, name: string): Promise<void> {
    await this.http.call('DELETE', this.http.path(LAYER_PATH[layer], vhost, name));
  }

  // ---- runtime parameters (federation upstreams, upstream sets, shovels) -----------------

  /** `null` when there is no such parameter (or no such vhost). */
  async getParameter(component: ParameterComponent, vhost: string, name: string): Promise<Parameter | null> {
    const p = await this.http.getJsonOrNull(
      this.http.path(`parameters/${component}`, vhost, name),
      parameterSchema(),
    );
    return p && { component, vhost, name, value: p.value };
  }

  /**
   * Replaces the whole parameter. The broker's refusal quotes the value it refused, URIs and their
   * passwords included: the error carries it masked.
   */
  async putParameter(p: Parameter): Promise<void> {
    await masked(
      this.http.call('PUT', this.http.path(`parameters/${p.component}`, p.vhost, p.name), { value: p.value }),
      p.value,
    );
  }

  /** Throws RabbitError 'not-found' when there is no such parameter. */
  async deleteParameter(component: ParameterComponent, vhost: string, name: string): Promise<void> {
    await masked(this.http.call('DELETE', this.http.path(`parameters/${component}`, vhost, name)));
  }

  // ---- objects --------------------------------------------------------------------------

  /**
   * One queue, `null` when it does not exist.
   *
   * Trap: on this endpoint `policy`, `operator_policy` and `effective_policy_definition` come
   * from queue statistics, not from the queue record. Seen on 3.10.8: the keys are ABSENT for the
   * first seconds after a queue is declared (no stats emitted yet), then `null` ("" also occurs)
   * when there is none, and they trail a policy change by one stats interval or more (3–16 s).
   * So `undefined` = not reported (unknown), `null` = reported none. With `disable_stats=true`
   * this endpoint leaves them out altogether, so we never ask for that here.
   */
  async getQueue(vhost: string, name: string): Promise<QueueDetail | null> {
    const q = await this.http.getJsonOrNull(this.http.path('queues', vhost, name), queueDetailSchema);
    return q && toQueueDetail(q);
  }

  /**
   * One exchange, `null` when it does not exist. Unlike queues, `policy` here is read from the
   * exchange record: current, and the key is simply absent when no user policy applies.
   * Exchanges never report an operator policy (one may still match them: compute it).
   * The default exchange is "" in listings and `amq.default` in the path.
   */
  async getExchange(vhost: string, name: string): Promise<ExchangeDetail | null> {
    const path = this.http.path('exchanges', vhost, name || 'amq.default');
    const e = await this.http.getJsonOrNull(path, exchangeSchema);
    return e && toExchange(vhost, e);
  }

  /**
   * The vhost's federation upstreams and upstream sets, and the objects whose links run.
   * `links: null` when the federation plugin is not enabled (see NO_SUCH_ENDPOINT), or, with
   * `linksNotRead` naming the tags it takes, when this user may not list the links.
   */
  async federation(vhost: string): Promise<FederationState> {
    // Every path first: a vhost the API cannot address refuses before any request starts.
    const paths = {
      upstreams: this.http.path('parameters/federation-upstream', vhost),
      sets: this.http.path('parameters/federation-upstream-set', vhost),
      links: this.http.path('federation-links', vhost),
    };
    const names = async (path: string) =>
      new Set(((await this.http.getJsonOrNull(path, parameterNamesSchema())) ?? []).map((p) => p.name));
    const [upstreams, upstreamSets, links] = await Promise.all([
      names(paths.upstreams),
      names(paths.sets),
      this.federationLinks(paths.links),
    ]);
    if (typeof links === 'string') return { upstreams, upstreamSets, links: null, linksNotRead: links };
    const running = links?.filter((l) => l.status === 'running').map((l) => l.exchange ?? l.queue ?? '');
    return { upstreams, upstreamSets, links: running ? new Set(running) : null };
  }

  /** The links; null without the plugin; why not, when this user may not list them. */
  private federationLinks(path: string) {
    return this.http
      .getJson(path, federationLinksSchema())
      .catch((e: unknown) => this.notListed(e, 'federation links'));
  }

  // ---- links ------------------------------------------------------------------------------

  /** Every node of the cluster and whether it runs (a node down is listed, `running: false`). */
  async nodesRunning(): Promise<{ name: string; running: boolean }[]> {
    const nodes = await this.http.getJson(
      `${this.http.path('nodes')}?columns=name,running`,
      nodeRunningSchema(),
    );
    return nodes.map((n) => ({ name: n.name, running: n.running === true }));
  }

  /** The vhost's parameters of one component (linkListings.ts); values hold passwords: show them masked only. */
  parameters(component: LinkComponent, vhost: string): Promise<LinkParameter[]> {
    return listParameters(this.http, component, vhost);
  }

  /** The vhosts holding a parameter of this component: one request over every vhost (values not kept). */
  async vhostsWithParameters(component: LinkComponent): Promise<Set<string>> {
    const all = await this.http.getJson(this.http.path(`parameters/${component}`), parameterSchema().array());
    return new Set(all.flatMap((p) => (p.vhost === undefined ? [] : [p.vhost])));
  }

  /** The federation links every node reports; `null` without the plugin's management part; why not, when refused. */
  async federationLinkList(vhost: string): Promise<ReportedFederationLink[] | null | string> {
    return listFederationLinks(this.http, vhost).catch((e: unknown) => this.notListed(e, 'federation links'));
  }

  /** The shovels every node reports; `null` without the shovel management plugin (404); why not, when refused. */
  async shovelList(vhost: string): Promise<ReportedShovel[] | null | string> {
    return listShovels(this.http, vhost).catch((e: unknown) => this.notListed(e, 'shovels'));
  }

  /** A listing's failure as "no such endpoint" (null) or "not allowed" (why); anything else thrown. */
  private notListed(e: unknown, what: string): null | string {
    if (!(e instanceof RabbitError)) throw e;
    if (e.status !== undefined && NO_SUCH_ENDPOINT.has(e.status)) return null;
    if (e.code !== 'forbidden') throw e;
    return `forbidden: listing ${what} takes the ${FEDERATION_LINKS_TAGS.join(' or ')} tag${e.reason ? ` (the broker: ${e.reason})` : ''}`;
  }

  // ---- the chain a message travels (`path`) ---------------------------------------------

  /** The bindings that deliver to a queue (the default exchange's among them); null: no such queue. */
  async queueBindings(vhost: string, name: string): Promise<Binding[] | null> {
    const path = `${this.http.path('queues', vhost, name)}/bindings`;
    return (await this.http.getJsonOrNull(path, bindingListSchema()))?.map(toBinding) ?? null;
  }

  /**
   * An exchange's bindings: `destination`, those that route to it (from other exchanges);
   * `source`, those it routes through. null: no such exchange.
   */
  async exchangeBindings(
    vhost: string,
    name: string,
    side: 'source' | 'destination',
  ): Promise<Binding[] | null> {
    const path = `${this.http.path('exchanges', vhost, name || 'amq.default')}/bindings/${side}`;
    return (await this.http.getJsonOrNull(path, bindingListSchema()))?.map(toBinding) ?? null;
  }

  /**
   * The vhost's channels that have published (their `message_stats.publish`), and how many of
   * those are in confirm mode: one listing of the vhost's channels alone, two columns, read whole
   * (about 50 bytes a channel: streamed element by element it cost `path` more than all its other
   * parsing; a vhost past the body limit, hundreds of thousands of channels, is `too-large`).
   */
  async publishingChannels(vhost: string): Promise<{ channels: number; confirming: number }> {
    const path = `${this.http.path('vhosts', vhost)}/channels?columns=confirm,message_stats.publish`;
    let channels = 0;
    let confirming = 0;
    for (const c of await this.http.getJson(path, channelListSchema())) {
      if ((c.message_stats?.publish ?? 0) === 0) continue;
      channels++;
      if (c.confirm === true) confirming++;
    }
    return { channels, confirming };
  }

  /** The vhost's counters of unroutable messages, each undefined where not reported. */
  async vhostUnroutable(vhost: string): Promise<{ dropped?: number; returned?: number }> {
    const v = await this.http.getJson(
      `${this.http.path('vhosts', vhost)}?columns=message_stats`,
      vhostStatsSchema(),
    );
    const s = v.message_stats;
    return {
      ...(s?.drop_unroutable === undefined ? {} : { dropped: s.drop_unroutable }),
      ...(s?.return_unroutable === undefined ? {} : { returned: s.return_unroutable }),
    };
  }

  /** How many nodes the broker runs on. */
  async nodeCount(): Promise<number> {
    return (await this.http.getJson(`${this.http.path('nodes')}?columns=name`, nodeNamesSchema())).length;
  }

  /** `lint`'s durability listings beside its inventory's (durabilityListings.ts). */
  streamConsumers(
    vhost: string,
  ): AsyncIterable<{ queue: string; ackRequired: boolean; prefetch: number | undefined }> {
    return streamConsumers(this.http, vhost);
  }

  streamBindings(vhost: string): AsyncIterable<Binding> {
    return streamBindings(this.http, vhost);
  }

  // ---- listings (listings.ts) -----------------------------------------------------------

  streamQueuesLive(
    vhost: string,
    opts: { asOf?: Date; durability?: boolean } = {},
  ): AsyncIterable<QueueRecordLive> {
    return streamQueuesLive(this.http, vhost, opts);
  }

  streamQueueStats(vhost: string, opts: { asOf?: Date } = {}): AsyncIterable<QueueStats> {
    return streamQueueStats(this.http, vhost, opts);
  }

  /** The queues `pattern` finds, their records (listings.ts `queuesFound`); null: too many to ask so. */
  findQueues(vhost: string, pattern: string): Promise<QueueListing[] | null> {
    return queuesFound(this.http, vhost, pattern, foundRecords(vhost));
  }

  /** The queues `pattern` finds, their live numbers (listings.ts `queuesFound`); null: too many to ask so. */
  findQueueStats(vhost: string, pattern: string): Promise<QueueStats[] | null> {
    return queuesFound(this.http, vhost, pattern, FOUND_STATS);
  }

  /**
   * The live numbers (now) of the queues named, of a vhost holding `total` queues: pages of the
   * name filter over those names, or the listing with statistics where that costs less
   * (statistics.ts): the second step of a reading in two.
   */
  queueStatsOf(
    vhost: string,
    names: readonly string[],
    total: number,
    opts: { asOf?: Date } = {},
  ): AsyncIterable<QueueStats> {
    const whole = () => streamQueueStats(this.http, vhost, opts);
    const mode = opts.asOf ? foundStatsAsOf(opts.asOf) : FOUND_STATS;
    return statisticsOf(this.http, vhost, names, total, whole, mode);
  }

  streamQueues(vhost: string, opts: { stats: boolean; lifetime?: boolean }): AsyncIterable<QueueListing> {
    return streamQueues(this.http, vhost, opts);
  }

  streamExchanges(vhost: string, opts: { durability?: boolean } = {}): AsyncIterable<ExchangeListing> {
    return streamExchanges(this.http, vhost, opts);
  }

  streamNames(what: 'queues' | 'exchanges', vhost: string): AsyncIterable<{ name: string }> {
    return streamNames(this.http, what, vhost);
  }

  queuePolicyFromRecord(vhost: string, name: string): Promise<string | null | undefined> {
    return queuePolicyFromRecord(this.http, vhost, name);
  }
}
