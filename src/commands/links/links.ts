import * as z from 'zod';
import { codeOf, InputError, type VhostLister } from '../../core/index.ts';
import { type DefinitionsFile, missingVhostWords } from '../../definitions/index.ts';
import {
  type ExpectedLink,
  expectedLinks,
  type LinkedObject,
  type LinksDocument,
  linksDocument,
  type Parameter,
  type Reported,
} from '../../links/index.ts';
import { readsFederation } from '../../policy/impact/index.ts';
import {
  type BrokerVersion,
  buildPolicySet,
  formatVersion,
  type Policy,
  resolve,
} from '../../policy/index.ts';
import type { ExchangeListing, NotAskedWhy, QueueListing } from '../../rabbit/index.ts';
import { toQueueKind } from '../../rabbit/index.ts';
import { quoted } from '../../text/index.ts';
import { type FlagDefaults, parseArgs, parseWith, Vhost } from '../parse.ts';
import { usageOf } from '../registry.ts';
import { notAskedOf } from '../which/whichLookup.ts';

const LINKS_USAGE = usageOf('links');

/**
 * `links [--vhost V] [--env E] [--against FILE] [--fail-on missing|stopped|risk]`: every
 * federation link and shovel that should exist (the policies in force as the broker reports them
 * on each object, the upstreams, sets and shovel parameters; or what FILE says), whether it runs,
 * where, and why not (src/links/). Reads, per vhost and all at once: the policies, the three
 * parameter components, the federation links and shovels every node reports, and, only when a
 * policy sets a federation key, the exchanges and queues with their policy (no statistics).
 * Writes nothing.
 */

/** Exit code with `--fail-on` when that problem (or a worse one) is there (docs/commands.md). */
export const LINKS_FAIL_EXIT = 4;

export const FAIL_ON = ['missing', 'stopped', 'risk'] as const;
export type LinksFailOn = (typeof FAIL_ON)[number];

const LinksInput = z.object({
  vhost: Vhost,
  env: z.string().min(1).optional(),
  failOn: z.enum(FAIL_ON).optional(),
  against: z.string().min(1).optional(),
});
export type LinksInput = z.output<typeof LinksInput> & {
  /** With a file: `--vhost` as given (undefined: every vhost the file names). */
  readonly fileVhost?: string | undefined;
};

export function parseLinks(words: readonly string[], defaults: FlagDefaults = {}): LinksInput {
  const { positionals, flags } = parseArgs(
    words,
    { vhost: 'string', env: 'string', 'fail-on': 'string', against: 'string' },
    LINKS_USAGE,
  );
  if (positionals.length > 0)
    throw new InputError(`links takes no name, got ${positionals.map((p) => quoted(p)).join(', ')}.`, {
      usage: LINKS_USAGE,
    });
  const failOn = flags['fail-on'];
  if (failOn !== undefined && !(FAIL_ON as readonly unknown[]).includes(failOn))
    throw new InputError(`--fail-on takes ${FAIL_ON.join(', ')}, got ${quoted(String(failOn))}.`, {
      usage: LINKS_USAGE,
    });
  const against = flags.against;
  const input = parseWith(
    LinksInput,
    {
      vhost: flags.vhost ?? (against === undefined ? defaults.vhost : undefined),
      env: flags.env ?? defaults.env,
      failOn,
      against,
    },
    LINKS_USAGE,
  );
  if (against === undefined) return input;
  return { ...input, fileVhost: typeof flags.vhost === 'string' ? flags.vhost : undefined };
}

/** What `links` needs of the management API. ManagementClient satisfies it. */
export interface LinksBroker extends VhostLister {
  overview(): Promise<{ version: BrokerVersion }>;
  plugins?(): Promise<ReadonlySet<string> | undefined>;
  listPolicies(vhost: string): Promise<Policy[]>;
  parameters(
    component: 'federation-upstream' | 'federation-upstream-set' | 'shovel',
    vhost: string,
  ): Promise<Parameter[]>;
  federationLinkList(vhost: string): Promise<Reported['federation'] | string>;
  shovelList(vhost: string): Promise<Reported['shovels'] | string>;
  streamExchanges(vhost: string): AsyncIterable<ExchangeListing>;
  streamQueues(vhost: string, opts: { stats: boolean }): AsyncIterable<QueueListing>;
}

export type LinksResult = {
  readonly env: string;
  readonly vhosts: readonly string[];
  readonly answer: 'answered' | 'not-asked';
  readonly why?: NotAskedWhy;
  readonly detail?: string;
  readonly brokerVersion?: string;
  /** The file whose links were expected, with `--against`. */
  readonly against?: string;
  /** What could not be read (the running links, a plugin's listing): those links are `unknown`. */
  readonly notRead: readonly string[];
} & LinksDocument;

export interface LinksOptions {
  readonly env: string;
  readonly file?: DefinitionsFile;
  readonly now?: () => number;
}

/** The objects a policy could federate, with the policy the broker reports in force on each. */
async function objectsOf(
  broker: LinksBroker,
  vhost: string,
): Promise<{ objects: LinkedObject[]; kinds: Map<string, string> }> {
  const objects: LinkedObject[] = [];
  const kinds = new Map<string, string>();
  const [exchanges, queues] = [broker.streamExchanges(vhost), broker.streamQueues(vhost, { stats: false })];
  for await (const e of exchanges) {
    if (e.name === '') continue;
    objects.push({
      vhost,
      name: e.name,
      kind: 'exchange',
      policy: e.policy,
      ...(e.internal ? { internal: true } : {}),
    });
    kinds.set(`exchange\u0000${e.name}`, 'exchange');
  }
  for await (const q of queues) {
    objects.push({ vhost, name: q.name, kind: 'queue', policy: q.policy ?? null });
    kinds.set(`queue\u0000${q.name}`, q.type);
  }
  return { objects, kinds };
}

/**
 * With a file: the policy in force on each object as the file's policies would make it (the
 * broker's rule: src/policy/resolve.ts; on a tie, the first of the candidates).
 */
function asFileSays(
  objects: readonly LinkedObject[],
  kinds: ReadonlyMap<string, string>,
  policies: readonly Policy[],
  version: BrokerVersion,
): LinkedObject[] {
  const set = buildPolicySet(policies, [], version);
  return objects.map((o) => {
    const type = kinds.get(`${o.kind}\u0000${o.name}`) ?? o.kind;
    const kind = o.kind === 'exchange' ? 'exchange' : toQueueKind(type);
    return { ...o, policy: resolve(set, o.name, kind).user.candidates[0]?.name ?? null };
  });
}

const notListed = <T>(v: T | string, what: string, notRead: string[]): T | null => {
  if (typeof v !== 'string') return v;
  notRead.push(`${what}: ${v}`);
  return null;
};

/** One vhost read and classified. */
async function linksOfVhost(
  broker: LinksBroker,
  vhost: string,
  version: BrokerVersion,
  plugins: ReadonlySet<string> | undefined,
  options: LinksOptions,
): Promise<{ document: LinksDocument; notRead: string[] }> {
  const [policies, upstreams, upstreamSets, shovels, federation, running] = await Promise.all([
    broker.listPolicies(vhost),
    broker.parameters('federation-upstream', vhost),
    broker.parameters('federation-upstream-set', vhost),
    broker.parameters('shovel', vhost),
    broker.federationLinkList(vhost),
    broker.shovelList(vhost),
  ]);
  const file = options.file;
  const filed = <C extends string>(component: C) =>
    (file?.parameters ?? []).filter((p) => p.component === component && p.vhost === vhost);
  const filePolicies = file?.policies
    .filter((p) => p.layer === 'user' && p.policy.vhost === vhost)
    .map((p) => p.policy);
  const asking = filePolicies ?? policies;
  const { objects, kinds } = asking.some((p) => readsFederation(p.definition))
    ? await objectsOf(broker, vhost)
    : { objects: [], kinds: new Map<string, string>() };
  const notRead: string[] = [];
  const reported: Reported = {
    federation: notListed(federation, 'federation links', notRead),
    shovels: notListed(running, 'shovels', notRead),
  };
  const expected: ExpectedLink[] | undefined = file
    ? expectedLinks({
        objects: filePolicies ? asFileSays(objects, kinds, filePolicies, version) : objects,
        policies: asking,
        upstreams: filed('federation-upstream'),
        upstreamSets: filed('federation-upstream-set'),
        shovels: filed('shovel'),
      })
    : undefined;
  const document = linksDocument({
    objects,
    policies,
    upstreams,
    upstreamSets,
    shovels,
    reported,
    plugins: {
      federation: plugins?.has('federation'),
      // Without the shovel plugin its parameters are refused and its listing is not served.
      shovel: running === null ? false : undefined,
    },
    version,
    now: (options.now ?? Date.now)(),
    ...(expected ? { expected } : {}),
  });
  return { document, notRead };
}

const EMPTY: LinksDocument = {
  links: [],
  risks: [],
  advisories: [],
  counts: {
    expected: 0,
    running: 0,
    starting: 0,
    missing: 0,
    stopped: 0,
    stuck: 0,
    unexpected: 0,
    unknown: 0,
  },
};

/** The vhosts answered for: `--vhost`, else (with a file) every vhost the file names. */
export function vhostsOf(input: LinksInput, file: DefinitionsFile | undefined): string[] {
  if (!file || input.fileVhost !== undefined) return [input.fileVhost ?? input.vhost];
  const named = [...file.vhosts, ...file.parameters.map((p) => p.vhost)];
  return named.length ? [...new Set(named)].sort() : [input.vhost];
}

export async function links(
  input: LinksInput,
  broker: LinksBroker,
  options: LinksOptions,
): Promise<LinksResult> {
  const vhosts = vhostsOf(input, options.file);
  const base = {
    env: options.env,
    vhosts,
    ...(input.against === undefined ? {} : { against: input.against }),
    notRead: [] as string[],
  };
  let current = vhosts[0] ?? input.vhost;
  try {
    const [{ version }, plugins] = await Promise.all([
      broker.overview(),
      broker.plugins ? broker.plugins().catch(() => undefined) : undefined,
    ]);
    const docs: LinksDocument[] = [];
    const notRead: string[] = [];
    for (const vhost of vhosts) {
      current = vhost;
      const one = await linksOfVhost(broker, vhost, version, plugins, options);
      docs.push(one.document);
      notRead.push(...one.notRead.map((n) => (vhosts.length > 1 ? `vhost ${quoted(vhost)}: ${n}` : n)));
    }
    const links = docs.flatMap((d) => d.links);
    const counts = { ...EMPTY.counts };
    for (const d of docs)
      for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += d.counts[k];
    return {
      ...base,
      answer: 'answered',
      brokerVersion: formatVersion(version),
      notRead: [...new Set(notRead)],
      links,
      risks: docs.flatMap((d) => d.risks),
      advisories: docs[0]?.advisories ?? [],
      counts,
    };
  } catch (err) {
    if (options.file && codeOf(err) === 'not-found') {
      const { missingVhost } = await import('../../core/index.ts');
      const { sentence } = await missingVhost(broker, current);
      throw new InputError(missingVhostWords(options.file, current, sentence));
    }
    return { ...base, ...EMPTY, answer: 'not-asked', ...(await notAskedOf(err, broker, current)) };
  }
}

/** How bad each `--fail-on` level is; a problem fails the run at its level or below. */
const LEVEL: Readonly<Record<LinksFailOn, number>> = { risk: 0, stopped: 1, missing: 2 };

/** The worst problem the answer holds, as a `--fail-on` level. */
function worst(r: LinksResult): number {
  if (r.counts.missing > 0) return LEVEL.missing;
  if (r.counts.stopped + r.counts.stuck > 0) return LEVEL.stopped;
  if (r.risks.length > 0) return LEVEL.risk;
  return -1;
}

/**
 * 3 not asked, or the running links not read (every expected link then `unknown`); with
 * `--fail-on`, 4 when that problem or a worse one is there (missing > stopped or stuck > risk),
 * else 0; without, 1 when an expected link does not run (missing, stopped, stuck), else 0.
 */
export function linksExitCode(r: LinksResult, failOn: LinksFailOn | undefined): number {
  if (r.answer === 'not-asked' || r.counts.unknown > 0) return 3;
  if (failOn) return worst(r) >= LEVEL[failOn] ? LINKS_FAIL_EXIT : 0;
  return r.counts.missing + r.counts.stopped + r.counts.stuck > 0 ? 1 : 0;
}
