import * as z from 'zod';
import { codeOf, formatDuration, InputError, missingVhost, type VhostLister } from '../../core/index.ts';
import { type DefinitionsFile, missingVhostWords, withDeclared } from '../../definitions/index.ts';
import { type BacktrackingReader, defaultReader } from '../../patterns/index.ts';
import { changesOf } from '../../plan/index.ts';
import { readsFederation } from '../../policy/impact/index.ts';
import {
  buildPolicySet,
  type DeprecatedUse,
  formatVersion,
  type Policy,
  type PolicyLayer,
  TARGET_VERSIONS,
  type TargetVersion,
} from '../../policy/index.ts';
import {
  atLeastAsSevere,
  type Finding,
  findingWhy,
  Linter,
  type LintWords,
  SEVERITIES,
  type Severity,
} from '../../policy/lint/index.ts';
import { PatternCache } from '../../policy/pattern/index.ts';
import type { DeprecatedFeature, NotAskedWhy, Unread } from '../../rabbit/index.ts';
import { type InventorySource, openInventory, unreadOf } from '../../rabbit/index.ts';
import { quoted, valueWritten } from '../../text/index.ts';
import {
  type FlagDefaults,
  parseArgs,
  parseVhostMap,
  parseWith,
  Vhost,
  type VhostMapping,
} from '../parse.ts';
import { usageOf } from '../registry.ts';
import { notAskedOf } from '../which/whichLookup.ts';
import { type IncompleteJson, incompleteJson } from '../words.ts';
import { type DurabilityLinted, DurabilityReading, type DurabilitySource } from './durability.ts';

const LINT_USAGE = usageOf('lint');

/**
 * `lint [FILE] [--vhost V] [--env E] [--fail-on error|warning]`: every surprise the vhost's
 * policies hold for the objects there now, in one pass over the listings `preview` reads (one
 * queue listing with the live numbers, one exchange listing, the two policy lists, the
 * federation): no call per object. The rules and their sentences are src/policy/lint/ (a module
 * per kind); names, durations and values are written here, as the terminal and Slack show them.
 * With a file's policies (`policies`), they are linted as if applied. Writes nothing.
 */

/** Exit code with `--fail-on` when a finding that severe (or worse) is there (docs/lint.md, exit codes). */
export const LINT_FAIL_EXIT = 4;

const LintInput = z.object({
  vhost: Vhost,
  env: z.string().min(1).optional(),
  failOn: z.enum(['error', 'warning']).optional(),
  file: z.string().min(1).optional(),
  targetVersion: z.enum(TARGET_VERSIONS).optional(),
});
export type LintInput = z.output<typeof LintInput> & {
  /**
   * With a file: `--vhost` as given, which the file is read with (undefined: every vhost the file
   * names; the terminal's RMQ_VHOST does not narrow a file).
   */
  readonly fileVhost?: string | undefined;
  /** With a file, `--vhost-map FROM=TO`: the file's vhost FROM read as TO. */
  readonly vhostMap?: readonly VhostMapping[] | undefined;
};

export function parseLint(words: readonly string[], defaults: FlagDefaults = {}): LintInput {
  const { positionals, flags, lists } = parseArgs(
    words,
    { vhost: 'string', 'vhost-map': 'list', env: 'string', 'fail-on': 'string', 'target-version': 'string' },
    LINT_USAGE,
  );
  if (positionals.length > 1) {
    throw new InputError(
      `lint takes at most one file, got ${positionals.length} words: ${positionals.map((p) => quoted(p)).join(', ')}.`,
      {
        usage: LINT_USAGE,
      },
    );
  }
  const failOn = flags['fail-on'];
  if (failOn !== undefined && failOn !== 'error' && failOn !== 'warning') {
    throw new InputError(`--fail-on takes error or warning, got ${quoted(String(failOn))}.`, {
      usage: LINT_USAGE,
    });
  }
  const target = flags['target-version'];
  if (target !== undefined && !(TARGET_VERSIONS as readonly unknown[]).includes(target)) {
    throw new InputError(
      `--target-version takes ${TARGET_VERSIONS.join(' or ')}, got ${quoted(String(target))}.`,
      { usage: LINT_USAGE },
    );
  }
  const file = positionals[0];
  const vhostMap = parseVhostMap(lists['vhost-map'], LINT_USAGE);
  if (vhostMap && file === undefined)
    throw new InputError("--vhost-map reads a file's vhosts as others: lint FILE --vhost-map FROM=TO.", {
      usage: LINT_USAGE,
    });
  const input = parseWith(
    LintInput,
    {
      vhost: flags.vhost ?? (file === undefined ? defaults.vhost : undefined),
      env: flags.env ?? defaults.env,
      failOn,
      file,
      targetVersion: target,
    },
    LINT_USAGE,
  );
  if (file === undefined) return input;
  const given = typeof flags.vhost === 'string' ? flags.vhost : undefined;
  return { ...input, fileVhost: given, ...(vhostMap ? { vhostMap } : {}) };
}

/** What `lint` needs of the management API. ManagementClient satisfies it. */
export interface LintBroker extends InventorySource, VhostLister, DurabilitySource {
  /** The one queue listing lint reads on a broker (records, live numbers, durability columns). */
  streamQueuesLive: NonNullable<InventorySource['streamQueuesLive']>;
  /** With `--target-version`: the deprecated features in use (null: not reported by this version). */
  deprecatedFeaturesUsed?(): Promise<DeprecatedFeature[] | null>;
}

/** A policy kind's finding, or a durability kind's (`policy` "": no policy is its cause), with its sentence. */
export type LintedFinding = (Finding & { readonly why: string }) | DurabilityLinted;

export interface LintResult {
  env: string;
  vhost: string;
  answer: 'linted' | 'not-asked';
  why?: NotAskedWhy;
  detail?: string;
  brokerVersion?: string;
  /** The file whose policies were linted as if applied, when one was given. */
  file?: string;
  /** `--target-version`, when given: the `upgrade` findings are against it. */
  targetVersion?: TargetVersion;
  /**
   * With `--target-version`: the deprecated features the broker reports in use, with the phase it
   * gives each; null when this version does not report them (3.10.8), absent when not asked or not read.
   */
  deprecatedFeatures?: DeprecatedUse[] | null;
  /** The most severe first. */
  findings: LintedFinding[];
  /** Policies linted (both layers). */
  policies: number;
  /** Objects read. */
  objects: number;
  /** Readings that failed: what they would have found is not claimed either way. */
  notRead: string[];
  /**
   * A listing the findings depend on could not be read (the queues' numbers; the federation
   * upstreams, when a policy names one): the lint is incomplete, no answer (exit 3). Absent when
   * all was read. `message` is the sentence both views lead with.
   */
  incomplete?: IncompleteJson;
}

export interface LintOptions {
  readonly env: string;
  /** A definitions file's policies, linted as if applied (the broker's others kept, as `plan` leaves them). */
  readonly file?: DefinitionsFile;
  readonly reader?: BacktrackingReader;
  readonly now?: () => number;
}

export async function lint(input: LintInput, broker: LintBroker, options: LintOptions): Promise<LintResult> {
  const r: LintResult = {
    env: options.env,
    vhost: input.vhost,
    answer: 'not-asked',
    ...(input.file === undefined ? {} : { file: input.file }),
    ...(input.targetVersion === undefined ? {} : { targetVersion: input.targetVersion }),
    findings: [],
    policies: 0,
    objects: 0,
    notRead: [],
  };
  // The durability kinds need live facts a file does not hold: on the broker's own policies only.
  const durability = options.file ? undefined : new DurabilityReading(broker, input.vhost);
  try {
    let linter: Linter | undefined;
    const deprecated = input.targetVersion === undefined ? undefined : deprecatedOf(broker);
    const keepLive = () => (name: string) => linter?.wantsLive(name) === true;
    const inventory = await openInventory(
      broker,
      input.vhost,
      durability
        ? // The durability kinds read every queue's statistics: one listing carries its record,
          // its numbers and their columns (the numbers kept of the queues a kind reads them for).
          { live: true, withoutReportedPolicies: true, keepLive, durability }
        : // The records first; then the numbers of the queues a kind reads them for (`expires-idle`), alone.
          { live: true, afterRecords: true, plugins: true, keepLive },
    );
    if (options.file) {
      // What the broker would refuse of the file, refused as `plan` refuses it, in its words.
      const mine = options.file.policies.filter((p) => p.policy.vhost === input.vhost);
      const { problems } = changesOf(mine, inventory, inventory.version, input.vhost, false);
      if (problems.length > 0) {
        await inventory.cancel();
        throw new InputError(problems.join(' '));
      }
    }
    const user = options.file ? asApplied(inventory.user, options.file, 'user', input.vhost) : inventory.user;
    const operator = options.file
      ? asApplied(inventory.operator, options.file, 'operator', input.vhost)
      : inventory.operator;
    const cache = new PatternCache();
    const used = await deprecated;
    if (used && 'why' in used)
      r.notRead.push(`the deprecated features in use could not be read (${used.why})`);
    const features = used && !('why' in used) ? used.features : undefined;
    linter = new Linter(buildPolicySet(user, operator, inventory.version, cache), cache, {
      context: { target: input.targetVersion, deprecated: features ?? null },
    });
    const l = linter;
    await durability?.begin(inventory.version, user);
    await inventory.each((o) => l.add(o));
    const pending = l.pending();
    if (pending.size > 0) await (options.reader ?? defaultReader()).decide(pending);
    l.settle();
    const live = await inventory.live();
    if (live?.queuesWhy) r.notRead.push(`the queues' numbers could not be read (${live.queuesWhy})`);
    if (live?.federationWhy)
      r.notRead.push(`the federation upstreams could not be read (${live.federationWhy})`);
    const at = live ? Date.parse(live.sampledAt) : (options.now ?? Date.now)();
    const federation = {
      upstreams: live?.federation?.upstreams ?? null,
      upstreamSets: live?.federation?.upstreamSets ?? null,
    };
    const findings = l.findings(
      live?.queuesWhy ? null : (live?.queues ?? null),
      options.file ? withDeclared(options.file, input.vhost, federation) : federation,
      at,
    );
    // The upstreams matter only where a policy names one (missing-target); the numbers always.
    const unread = unreadOf(
      live,
      input.vhost,
      [...user, ...operator].some((p) => readsFederation(p.definition)),
    );
    const incomplete = incompleteJson(unread, 'findings', quoted);
    const durable = durability ? await durability.findings(r.notRead) : [];
    const linted: LintedFinding[] = [...findings.map((f) => ({ ...f, why: whyOf(f) })), ...durable];
    return {
      ...r,
      answer: 'linted',
      ...(incomplete ? { incomplete } : {}),
      brokerVersion: formatVersion(inventory.version),
      ...(features === undefined ? {} : { deprecatedFeatures: features }),
      findings: linted.sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity)),
      policies: user.length + operator.length,
      objects: l.objects,
    };
  } catch (err) {
    await durability?.cancel();
    if (options.file && codeOf(err) === 'not-found') {
      const { sentence } = await missingVhost(broker, input.vhost);
      throw new InputError(missingVhostWords(options.file, input.vhost, sentence));
    }
    return { ...r, ...(await notAskedOf(err, broker, input.vhost)) };
  }
}

/**
 * The deprecated features the broker reports in use (null: this version does not report them), or
 * why they could not be read (a permission, a timeout): then the upgrade findings say nothing of
 * them, and the answer says so.
 */
async function deprecatedOf(
  broker: LintBroker,
): Promise<{ features: DeprecatedUse[] | null } | { why: string }> {
  if (!broker.deprecatedFeaturesUsed) return { features: null };
  try {
    return { features: await broker.deprecatedFeaturesUsed() };
  } catch (err) {
    return { why: err instanceof Error ? err.message : String(err) };
  }
}

/** A file's lint over the several vhosts it names: one answer, each finding with its vhost. */
export type LintAnswer = LintResult | (Omit<LintResult, 'vhost'> & { readonly vhosts: readonly string[] });

/**
 * The lints of a file's vhosts as one answer: every finding (with its vhost) the most severe
 * first, the counts summed; the first vhost not asked answers for all.
 */
export function lintOfVhosts(results: readonly LintResult[]): LintAnswer {
  const [first] = results;
  if (!first) throw new Error('lintOfVhosts: no vhost linted');
  const notAsked = results.find((r) => r.answer === 'not-asked');
  if (notAsked) return notAsked;
  const findings = results
    .flatMap((r) => r.findings.map((f) => ({ ...f, vhost: r.vhost })))
    .sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
  const several = results.length > 1;
  const { vhost: _one, env, ...rest } = first;
  return {
    ...(several ? { env, vhosts: results.map((r) => r.vhost), ...rest } : first),
    findings,
    policies: results.reduce((n, r) => n + r.policies, 0),
    objects: results.reduce((n, r) => n + r.objects, 0),
    notRead: results.flatMap((r) =>
      r.notRead.map((why) => (several ? `vhost ${quoted(r.vhost)}: ${why}` : why)),
    ),
    ...incompleteOfAll(results),
  };
}

/** Every vhost's `incomplete`, as one. */
function incompleteOfAll(results: readonly LintResult[]): { incomplete?: IncompleteJson } {
  const unread: Unread[] = results.flatMap((r) => r.incomplete?.unread ?? []);
  const incomplete = incompleteJson(unread, 'findings', quoted);
  return incomplete ? { incomplete } : {};
}

/**
 * One layer as it would be once the file is applied: the file's policies of the vhost created or
 * replaced by name, the broker's others left alone (no `--prune`: `plan`'s default).
 */
export function asApplied(
  broker: readonly Policy[],
  file: DefinitionsFile,
  layer: PolicyLayer,
  vhost: string,
): Policy[] {
  const mine = file.policies
    .filter((p) => p.layer === layer && p.policy.vhost === vhost)
    .map((p) => p.policy);
  const named = new Set(mine.map((p) => p.name));
  return [...broker.filter((p) => !named.has(p.name)), ...mine];
}

/**
 * 0 answered; 3 not asked, or a listing the findings depend on not read (incomplete, whatever
 * `--fail-on` says); 4 with `--fail-on` when a finding that severe or worse is there.
 */
export function lintExitCode(result: LintAnswer, failOn: Severity | undefined): number {
  if (result.answer === 'not-asked' || result.incomplete) return 3;
  if (failOn && result.findings.some((f) => atLeastAsSevere(f.severity, failOn))) return LINT_FAIL_EXIT;
  return 0;
}

/**
 * What the answer says of the broker's deprecated features with `--target-version`, when it has
 * no finding of them: that this version does not report them, or that it reports none in use.
 */
export function deprecatedSaid(r: {
  readonly deprecatedFeatures?: readonly DeprecatedUse[] | null;
}): string | undefined {
  if (r.deprecatedFeatures === undefined) return undefined;
  if (r.deprecatedFeatures === null)
    return 'Deprecated features in use: not reported by this version of the broker (no GET /api/deprecated-features/used).';
  return r.deprecatedFeatures.length === 0
    ? 'Deprecated features in use: none, the broker reports.'
    : undefined;
}

/** The findings counted by severity, worst first: "2 errors, 1 warning" ("no findings"). */
export function lintCounts(findings: readonly { severity: Severity }[]): string {
  const parts = SEVERITIES.map((s) => {
    const n = findings.filter((f) => f.severity === s).length;
    return n === 0 ? '' : `${n} ${s === 'info' ? 'info' : n === 1 ? s : `${s}s`}`;
  }).filter(Boolean);
  return parts.length === 0 ? 'no findings' : parts.join(', ');
}

// How a kind's sentence writes what is not ours: as every other answer of the terminal and Slack does.
const WORDS: LintWords = { name: quoted, duration: formatDuration, value: valueWritten };

/** One sentence per finding, names as written. */
export function whyOf(f: Finding): string {
  return findingWhy(f, WORDS);
}
