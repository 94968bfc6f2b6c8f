import * as z from 'zod';
import { codeOf, InputError, type VhostLister } from '../../core/index.ts';
import { type DefinitionsFile, missingVhostWords } from '../../definitions/index.ts';
import {
  type ExpectedLink,
  expectedLinks,
  type LinkedObject,
  type LinksAsWatched,
  type LinksDocument,
  linksDocument,
  NO_LINKS,
  STARTING_RETRIES_WORDS,
} from '../../links/index.ts';
import {
  type BrokerVersion,
  buildPolicySet,
  formatVersion,
  type Policy,
  resolve,
} from '../../policy/index.ts';
import {
  type BrokerAbout,
  brokerAbout,
  type LinksSource,
  type NotAskedWhy,
  readLinks,
  toQueueKind,
} from '../../rabbit/index.ts';
import { quoted } from '../../text/index.ts';
import { type FlagDefaults, parseArgs, parseWith, Vhost } from '../parse.ts';
import { usageOf } from '../registry.ts';
import { notAskedOf } from '../which/whichLookup.ts';

const LINKS_USAGE = usageOf('links');

/**
 * `links [--vhost V] [--env E] [--against FILE] [--fail-on missing|stopped|risk]`: every
 * federation link and shovel that should exist (the policies in force as the broker reports them
 * on each object, the upstreams, sets and shovel parameters; or what FILE says), whether it runs,
 * where, and why not (src/links/). What it reads of each vhost, all at once, is
 * src/rabbit/linksReading.ts (the watcher reads the same).
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
export interface LinksBroker extends LinksSource, VhostLister {}

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
  /** Whether the bot's watch's record was read (absent: not asked). */
  readonly watch?: LinksWatchRead;
} & LinksDocument;

export interface LinksOptions {
  readonly env: string;
  readonly file?: DefinitionsFile;
  readonly now?: () => number;
  /**
   * What the bot's watch recorded of the environment's links down (undefined: no watch reads them
   * now); it throws when the record cannot be read. Absent: not asked (the watch's own reading).
   */
  readonly watched?: () => Promise<LinksAsWatched | undefined>;
}

/**
 * Whether the bot's watch's record was read: with it, a link the broker reports `starting` that
 * the watch saw not running for over a minute is `stuck` (src/links/watched.ts).
 */
export type LinksWatchRead =
  | {
      readonly read: true;
      /** When the watch's unbroken run of readings began (ISO). */
      readonly from: string;
    }
  | { readonly read: false; readonly why: string };

/** The record, or why it was not read. */
async function readWatched(
  watched: NonNullable<LinksOptions['watched']>,
): Promise<{ asWatched?: LinksAsWatched; watch: LinksWatchRead }> {
  try {
    const asWatched = await watched();
    if (!asWatched)
      return {
        watch: { read: false, why: "the bot's watch has not read the links of this environment lately" },
      };
    return { asWatched, watch: { read: true, from: asWatched.from } };
  } catch (err) {
    return {
      watch: {
        read: false,
        why: `the bot's watch's record could not be read (${err instanceof Error ? err.message : String(err)})`,
      },
    };
  }
}

/**
 * With a file: the policy in force on each object as the file's policies would make it (the
 * broker's rule: src/policy/resolve.ts; on a tie, the first of the candidates).
 */
function asFileSays(
  objects: readonly LinkedObject[],
  queueTypes: ReadonlyMap<string, string>,
  policies: readonly Policy[],
  version: BrokerVersion,
): LinkedObject[] {
  const set = buildPolicySet(policies, [], version);
  return objects.map((o) => {
    const kind = o.kind === 'exchange' ? 'exchange' : toQueueKind(queueTypes.get(o.name) ?? 'classic');
    return { ...o, policy: resolve(set, o.name, kind).user.candidates[0]?.name ?? null };
  });
}

/** One vhost read and classified. */
async function linksOfVhost(
  broker: LinksBroker,
  vhost: string,
  about: BrokerAbout,
  options: LinksOptions,
  watched: LinksAsWatched | undefined,
): Promise<{ document: LinksDocument; notRead: string[] }> {
  const file = options.file;
  const filed = <C extends string>(component: C) =>
    (file?.parameters ?? []).filter((p) => p.component === component && p.vhost === vhost);
  const filePolicies = file?.policies
    .filter((p) => p.layer === 'user' && p.policy.vhost === vhost)
    .map((p) => p.policy);
  const read = await readLinks(broker, vhost, about, filePolicies);
  const { objects, policies, upstreams, upstreamSets, shovels, reported, version, plugins } = read;
  const asking = filePolicies ?? policies;
  const expected: ExpectedLink[] | undefined = file
    ? expectedLinks({
        objects: filePolicies ? asFileSays(objects, read.queueTypes, filePolicies, version) : objects,
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
      shovel: read.shovelPlugin,
    },
    version,
    now: (options.now ?? Date.now)(),
    ...(expected ? { expected } : {}),
    ...(watched ? { watched } : {}),
  });
  return { document, notRead: read.notRead };
}

const EMPTY: LinksDocument = {
  links: [],
  risks: [],
  advisories: [],
  counts: NO_LINKS,
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
    const about = brokerAbout(broker);
    const fromWatch = options.watched ? await readWatched(options.watched) : undefined;
    const docs: LinksDocument[] = [];
    const notRead: string[] = [];
    for (const vhost of vhosts) {
      current = vhost;
      const one = await linksOfVhost(broker, vhost, about, options, fromWatch?.asWatched);
      docs.push(one.document);
      notRead.push(...one.notRead.map((n) => (vhosts.length > 1 ? `vhost ${quoted(vhost)}: ${n}` : n)));
    }
    const [version] = await about;
    const links = docs.flatMap((d) => d.links);
    const counts = { ...NO_LINKS };
    for (const d of docs)
      for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += d.counts[k];
    return {
      ...base,
      answer: 'answered',
      brokerVersion: formatVersion(version),
      notRead: [...new Set(notRead)],
      ...(fromWatch ? { watch: fromWatch.watch } : {}),
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

/**
 * Said once by an answer with a link that should run and is `starting`: one reading cannot tell a
 * link retrying its handshake stuck, and whether the bot's watch could tell it here. Undefined
 * when no such link.
 */
export function startingWords(r: LinksResult): string | undefined {
  if (!r.links.some((l) => l.expected && l.state === 'starting')) return undefined;
  const w = r.watch;
  if (!w) return STARTING_RETRIES_WORDS;
  if (w.read)
    return `${STARTING_RETRIES_WORDS} The bot's watch, reading since ${w.from}, has not seen it not running for over a minute.`;
  return `${STARTING_RETRIES_WORDS} Not asked of the bot's watch: ${w.why}.`;
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
