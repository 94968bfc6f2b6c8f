import { RISKS, type Risk, riskOf } from '../policy/risks.ts';
import type { ObjectOutcome, PolicyChange, SimulationResult } from '../policy/simulate.ts';
import type { BrokerVersion } from '../policy/types.ts';
import type { ImpactSummary } from './impact.ts';

/**
 * A preview's summary, for a person: the risks in the order they hurt, the new ties, what an
 * unanchored pattern catches, and the objects grouped by what happens to them, each group said
 * in a few words. Lists are bounded however large the vhost.
 */

/** What losing a key means to a person, by risk (`summary.risks[].words`). */
export const RISK_WORDS: Readonly<Record<Risk, string>> = {
  'dead-letter': 'lose a dead-letter target',
  ttl: 'lose a TTL (message-ttl or expires)',
  limit: 'lose a length limit',
  'delivery-limit': 'lose a delivery limit',
  federation: 'lose a federation upstream',
  'alternate-exchange': 'lose an alternate exchange',
  retention: 'lose a stream retention setting',
  'retry-delay': 'lose a delayed retry (rejected and returned messages come back at once)',
  'consumer-timeout': 'lose a consumer timeout (consumer-timeout or consumer-disconnected-timeout)',
};

/** Lists kept in a summary: enough to read, bounded however large the vhost. */
export const SUMMARY_NAMES = 50;

export interface OutcomeGroup {
  /** Short words: "falls back to audit-fallback", "governed by nothing", "undefined between a and b". */
  readonly outcome: string;
  readonly after: string | null;
  readonly candidates?: string[];
  readonly lost: string[];
  readonly gained: string[];
  readonly changed: string[];
  readonly count: number;
  readonly names: string[];
}

export interface PreviewSummary {
  readonly objects: number;
  readonly unpredictable: number;
  /** In RISKS order; only risks that occur. */
  readonly risks: {
    risk: Risk;
    words: string;
    count: number;
    possible: number;
    keys: string[];
    names: string[];
  }[];
  readonly newTies: { count: number; objects: { name: string; candidates: string[] }[] };
  readonly unanchoredCatch: { pattern: string; count: number; names: string[] } | null;
  readonly groups: OutcomeGroup[];
  /** Kept for the reader: values an operator policy keeps in force although the user policy changes. */
  readonly heldByOperator: number;
  /** Objects of the vhost read to get here. */
  readonly scanned: { queues: number; exchanges: number };
  /** What the change does to the messages there now (absent in requests filed before it existed). */
  readonly impact?: ImpactSummary;
}

/**
 * The words for an object left without a policy in the changed layer. After an operator
 * change its user policy still governs it: only the layer on top goes.
 */
export function nothingAfterWords(o: ObjectOutcome): string {
  const other = o.unchangedLayer;
  if (other.layer !== 'user') return 'governed by nothing';
  if (other.candidates)
    return `no operator policy; its policy (undefined between ${other.candidates.join(' and ')}) stays in force`;
  return other.policy === null
    ? 'governed by nothing: no operator policy and no policy'
    : `no operator policy; policy ${other.policy} stays in force`;
}

/** What happens to the object, in a few words. */
function outcomeWords(o: ObjectOutcome, change: PolicyChange): string {
  if (o.after.candidates) return `undefined between ${o.after.candidates.join(' and ')}`;
  if (o.after.policy === null) return nothingAfterWords(o);
  if (o.after.policy === o.before.policy) return `stays with ${o.after.policy}`;
  return change.action === 'delete' || o.before.policy === change.before?.name
    ? `falls back to ${o.after.policy}`
    : `taken over by ${o.after.policy}`;
}

export function summarize(
  result: SimulationResult,
  change: PolicyChange,
  version: BrokerVersion,
): PreviewSummary {
  const { objects, unpredictable } = result;
  const risks: PreviewSummary['risks'] = [];
  for (const risk of RISKS) {
    const sure = objects.filter((o) => o.risks.includes(risk));
    const maybe = objects.filter((o) => o.possibleRisks?.includes(risk));
    if (sure.length === 0 && maybe.length === 0) continue;
    const keys = new Set<string>();
    for (const o of [...sure, ...maybe]) {
      for (const k of Object.keys(o.lost)) if (riskOf(k, o.kind, version) === risk) keys.add(k);
      for (const d of Object.values(o.ifCandidate ?? {})) {
        for (const k of Object.keys(d.lost)) if (riskOf(k, o.kind, version) === risk) keys.add(k);
      }
    }
    risks.push({
      risk,
      words: RISK_WORDS[risk],
      count: sure.length,
      possible: maybe.length,
      keys: [...keys].sort(),
      names: [...sure, ...maybe].slice(0, SUMMARY_NAMES).map((o) => o.name),
    });
  }
  const ties = objects.filter((o) => o.newTie);
  const groups = new Map<
    string,
    { g: Omit<OutcomeGroup, 'count' | 'names'>; names: string[]; count: number }
  >();
  for (const o of objects) {
    const lost = Object.keys(o.lost).sort();
    const gained = Object.keys(o.gained).sort();
    const changed = Object.keys(o.changed).sort();
    const outcome = outcomeWords(o, change);
    const key = JSON.stringify([outcome, lost, gained, changed]);
    let g = groups.get(key);
    if (!g) {
      g = {
        g: {
          outcome,
          after: o.after.policy,
          ...(o.after.candidates ? { candidates: o.after.candidates } : {}),
          lost,
          gained,
          changed,
        },
        names: [],
        count: 0,
      };
      groups.set(key, g);
    }
    g.count++;
    if (g.names.length < SUMMARY_NAMES) g.names.push(o.name);
  }
  const caught = result.unanchoredCatch;
  return {
    objects: objects.length,
    unpredictable: unpredictable.length,
    risks,
    newTies: {
      count: ties.length,
      objects: ties
        .slice(0, SUMMARY_NAMES)
        .map((o) => ({ name: o.name, candidates: o.after.candidates ?? [] })),
    },
    unanchoredCatch: caught ? { ...caught, names: caught.names.slice(0, SUMMARY_NAMES) } : null,
    groups: [...groups.values()]
      .sort((a, b) => b.count - a.count)
      .map(({ g, names, count }) => ({ ...g, count, names })),
    heldByOperator: objects.filter((o) => Object.values(o.heldBy).includes('operator-policy')).length,
    scanned: { ...result.scanned },
  };
}
