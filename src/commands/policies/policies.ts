import * as z from 'zod';
import type { VhostLister } from '../../core/index.ts';
import { InputError, type Instant } from '../../core/index.ts';
import { formatVersion, type Policy, scopesMeet } from '../../policy/index.ts';
import { atOf, type FlagDefaults, parseArgs, parseWith, Vhost } from '../parse.ts';
import { usageOf } from '../registry.ts';
import { type PolicyView, policyView } from '../which/which.ts';
import { listOperatorPolicies, notAskedOf } from '../which/whichLookup.ts';

/**
 * `policies [--vhost V]`: every policy of the vhost by priority, highest first, unanchored
 * patterns marked, policies sharing a priority next to each other and marked; the operator
 * policies apart. Reads two lists; writes nothing.
 */

const POLICIES_USAGE = usageOf('policies');

const PoliciesInput = z.object({ vhost: Vhost, env: z.string().min(1).optional() });
export type PoliciesInput = z.output<typeof PoliciesInput> & {
  /** `--at TIME`: the policies then, replayed from the audit trail. */
  readonly at?: Instant;
};

export function parsePolicies(
  words: readonly string[],
  defaults: FlagDefaults = {},
  now: Date = new Date(),
): PoliciesInput {
  const { positionals, flags } = parseArgs(
    words,
    { vhost: 'string', env: 'string', at: 'string' },
    POLICIES_USAGE,
  );
  if (positionals.length > 0) {
    throw new InputError(
      `policies takes no name, got ${JSON.stringify(positionals[0])}; to ask about one object, use which.`,
      { usage: POLICIES_USAGE },
    );
  }
  const input = parseWith(
    PoliciesInput,
    { vhost: flags.vhost ?? defaults.vhost, env: flags.env ?? defaults.env },
    POLICIES_USAGE,
  );
  const at = atOf(flags.at, now, POLICIES_USAGE);
  return at ? { ...input, at } : input;
}

/** What `policies` needs of the management API. ManagementClient satisfies it. */
export interface PoliciesBroker extends VhostLister {
  overview(): Promise<{ version: { major: number; minor: number; patch: number } }>;
  listPolicies(vhost: string): Promise<Policy[]>;
  listOperatorPolicies(vhost: string): Promise<Policy[]>;
}

export interface ListedPolicy extends PolicyView {
  /**
   * Another policy of the same layer has this priority and an apply-to that meets this one's:
   * where both match, the broker's pick is not defined.
   */
  tie: boolean;
}

export interface PoliciesResult {
  vhost: string;
  answer: 'listed' | 'not-asked';
  /** Why the broker could not be asked, and its words. */
  why?: string;
  detail?: string;
  brokerVersion?: string;
  /** Highest priority first; equal priorities next to each other, by name. */
  policies: ListedPolicy[];
  operatorPolicies: ListedPolicy[];
  /** The operator policies could not be listed with this identity: the broker's reason. */
  operatorPoliciesNotRead?: string;
}

/**
 * Highest priority first, then by name (code-unit order), each marked when another policy shares
 * its priority with an apply-to that can reach the same object (`scopesMeet`: `queues` and
 * `exchanges` at one priority are no tie).
 */
export function byPriority(list: readonly Policy[]): ListedPolicy[] {
  const sorted = [...list].sort(
    (a, b) => b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const byLevel = new Map<number, Policy[]>();
  for (const p of sorted) {
    const level = byLevel.get(p.priority);
    if (level) level.push(p);
    else byLevel.set(p.priority, [p]);
  }
  const tied = (p: Policy) =>
    (byLevel.get(p.priority) ?? []).some((q) => q !== p && scopesMeet(p.applyTo, q.applyTo));
  return sorted.map((p) => ({ ...policyView(p), tie: tied(p) }));
}

export async function policies(input: PoliciesInput, broker: PoliciesBroker): Promise<PoliciesResult> {
  const r: PoliciesResult = { vhost: input.vhost, answer: 'not-asked', policies: [], operatorPolicies: [] };
  try {
    const [{ version }, user, operator] = await Promise.all([
      broker.overview(),
      broker.listPolicies(input.vhost),
      listOperatorPolicies(broker, input.vhost),
    ]);
    r.answer = 'listed';
    r.brokerVersion = formatVersion(version);
    r.policies = byPriority(user);
    if ('notRead' in operator) r.operatorPoliciesNotRead = operator.notRead;
    else r.operatorPolicies = byPriority(operator);
    return r;
  } catch (err) {
    return { ...r, ...(await notAskedOf(err, broker, input.vhost)) };
  }
}
