/**
 * Everything one vhost's links answer reads, all at once: the policies, the three parameter
 * components, the federation links and shovels every node reports, and (only when a policy sets a
 * federation key) the exchanges and queues with the policy the broker reports in force. The
 * `links` command and the watcher read through it and hand the result to the links rules
 * (src/links/ `linksDocument`).
 */
import type { LinkedObject, Parameter, Reported } from '../links/index.ts';
import { readsFederation } from '../policy/impact/index.ts';
import type { BrokerVersion, Policy } from '../policy/index.ts';
import type { InventorySource } from './inventory.ts';
import type { QueueListing } from './responses.ts';

/** What reading the links needs of the management API. ManagementClient satisfies it. */
export interface LinksSource {
  overview(): Promise<{ version: BrokerVersion }>;
  plugins?(): Promise<ReadonlySet<string> | undefined>;
  /** Each node's running applications; undefined when not readable. */
  nodeApplications?(): Promise<readonly (readonly string[])[] | undefined>;
  listPolicies(vhost: string): Promise<Policy[]>;
  parameters(
    component: 'federation-upstream' | 'federation-upstream-set' | 'shovel',
    vhost: string,
  ): Promise<Parameter[]>;
  federationLinkList(vhost: string): Promise<Reported['federation'] | string>;
  shovelList(vhost: string): Promise<Reported['shovels'] | string>;
  streamExchanges: InventorySource['streamExchanges'];
  streamQueues(vhost: string, opts: { stats: boolean; lifetime?: boolean }): AsyncIterable<QueueListing>;
}

/** The broker's version and the plugins enabled (undefined: not known): asked once for every vhost. */
export type BrokerAbout = Promise<[BrokerVersion, ReadonlySet<string> | undefined]>;

/** Asked beside the vhosts' reads, not before them: the plugins may take a request of their own. */
export function brokerAbout(source: LinksSource): BrokerAbout {
  const about: BrokerAbout = Promise.all([
    source.overview().then((o) => o.version),
    source.plugins ? source.plugins().catch(() => undefined) : undefined,
  ]);
  about.catch(() => undefined);
  return about;
}

/** The application the shovel plugin runs as on each node where it is enabled. */
const SHOVEL_APPLICATION = 'rabbitmq_shovel';

/** Whether every node runs `application` (true), none does (false); undefined: some do, or not read. */
export function appRunning(
  nodes: readonly (readonly string[])[] | undefined,
  application: string,
): boolean | undefined {
  if (!nodes || nodes.length === 0) return undefined;
  const running = nodes.map((apps) => apps.includes(application));
  if (running.every(Boolean)) return true;
  return running.some(Boolean) ? undefined : false;
}

/** One vhost's links, as read. */
export interface LinksReading {
  readonly version: BrokerVersion;
  readonly plugins: ReadonlySet<string> | undefined;
  readonly policies: Policy[];
  readonly upstreams: Parameter[];
  readonly upstreamSets: Parameter[];
  readonly shovels: Parameter[];
  /** The exchanges and queues with their policy in force (none when no policy sets a federation key). */
  readonly objects: LinkedObject[];
  /** A queue's type by name (`classic`, `quorum`, …). */
  readonly queueTypes: ReadonlyMap<string, string>;
  readonly reported: Reported;
  /** What could not be listed, in words (the links of it are then `unknown`). */
  readonly notRead: string[];
  /**
   * Whether the shovel plugin is enabled: its listing served, or (not served: its management part
   * is off) every node running `rabbitmq_shovel` (true) or none (false); undefined when not known.
   */
  readonly shovelPlugin: boolean | undefined;
}

async function objectsOf(
  source: LinksSource,
  vhost: string,
): Promise<{ objects: LinkedObject[]; queueTypes: Map<string, string> }> {
  const exchanges: LinkedObject[] = [];
  const queues: LinkedObject[] = [];
  const queueTypes = new Map<string, string>();
  await Promise.all([
    (async () => {
      for await (const e of source.streamExchanges(vhost)) {
        if (e.name === '') continue;
        exchanges.push({
          vhost,
          name: e.name,
          kind: 'exchange',
          policy: e.policy,
          ...(e.internal ? { internal: true } : {}),
        });
      }
    })(),
    (async () => {
      for await (const q of source.streamQueues(vhost, { stats: false })) {
        queues.push({ vhost, name: q.name, kind: 'queue', policy: q.policy ?? null });
        queueTypes.set(q.name, q.type);
      }
    })(),
  ]);
  return { objects: [...exchanges, ...queues], queueTypes };
}

const listed = <T>(v: T | string, what: string, notRead: string[]): T | null => {
  if (typeof v !== 'string') return v;
  notRead.push(`${what}: ${v}`);
  return null;
};

/**
 * Reads one vhost. `asking`: the policies whose federation keys decide whether the objects are
 * listed (default the broker's; `links --against` gives the file's).
 */
export async function readLinks(
  source: LinksSource,
  vhost: string,
  about: BrokerAbout = brokerAbout(source),
  asking?: readonly Policy[],
): Promise<LinksReading> {
  const policiesRead = source.listPolicies(vhost);
  // The objects are listed as soon as the policies say a federation key is set, beside the rest.
  const objectsRead = policiesRead.then((policies) =>
    (asking ?? policies).some((p) => readsFederation(p.definition))
      ? objectsOf(source, vhost)
      : { objects: [], queueTypes: new Map<string, string>() },
  );
  const [
    policies,
    upstreams,
    upstreamSets,
    shovels,
    federation,
    running,
    { objects, queueTypes },
    [version, plugins],
  ] = await Promise.all([
    policiesRead,
    source.parameters('federation-upstream', vhost),
    source.parameters('federation-upstream-set', vhost),
    source.parameters('shovel', vhost),
    source.federationLinkList(vhost),
    source.shovelList(vhost),
    objectsRead,
    about,
  ]);
  const notRead: string[] = [];
  const shovelPlugin =
    running !== null ? true : appRunning(await source.nodeApplications?.(), SHOVEL_APPLICATION);
  return {
    version,
    plugins,
    policies,
    upstreams,
    upstreamSets,
    shovels,
    objects,
    queueTypes,
    reported: {
      federation: listed(federation, 'federation links', notRead),
      shovels: listed(running, 'shovels', notRead),
    },
    notRead,
    shovelPlugin,
  };
}
