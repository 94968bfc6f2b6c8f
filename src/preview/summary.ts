import type { BrokerVersion, ObjectKind } from '../policy/index.ts';
import { RISKS, type Risk, riskOf } from '../policy/index.ts';
import type { ObjectOutcome, PolicyChange, SimulationResult } from '../policy/simulate/index.ts';
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
  // One pass over the objects (a broad change: 19,000) for the risks, the ties and the groups.
  const byRisk = new Map<
    Risk,
    { sure: string[]; maybe: string[]; count: number; possible: number; keys: Set<string> }
  >();
  const riskOf_ = (risk: Risk) => {
    let r = byRisk.get(risk);
    if (!r) {
      r = { sure: [], maybe: [], count: 0, possible: 0, keys: new Set() };
      byRisk.set(risk, r);
    }
    return r;
  };
  const ties: ObjectOutcome[] = [];
  type Group = { g: Omit<OutcomeGroup, 'count' | 'names'>; names: string[]; count: number };
  // By outcome words, then by the object's diff keys (DiffKeys hands one entry per set of keys).
  const groups = new Map<string, Map<DiffKeysEntry, Group>>();
  const inOrder: Group[] = [];
  const diffKeys = new DiffKeys();
  const risky = new RiskyKeys(version);
  const heldByOperator = new Map<object, boolean>();
  let held = 0;
  for (const o of objects) {
    const possible = o.possibleRisks ?? NONE;
    if (o.risks.length > 0 || possible.length > 0) {
      for (const risk of o.risks) {
        const r = riskOf_(risk);
        r.count++;
        if (r.sure.length < SUMMARY_NAMES) r.sure.push(o.name);
      }
      for (const risk of possible) {
        const r = riskOf_(risk);
        r.possible++;
        if (r.maybe.length < SUMMARY_NAMES) r.maybe.push(o.name);
      }
      const losts = o.ifCandidate ? [o.lost, ...Object.values(o.ifCandidate).map((d) => d.lost)] : [o.lost];
      for (const lost of losts) {
        for (const [risk, k] of risky.of(lost, o.kind)) {
          if (o.risks.includes(risk) || possible.includes(risk)) riskOf_(risk).keys.add(k);
        }
      }
    }
    if (o.newTie) ties.push(o);
    const keys = diffKeys.of(o);
    const { lost, gained, changed } = keys;
    const outcome = outcomeWords(o, change);
    let byKeys = groups.get(outcome);
    if (!byKeys) {
      byKeys = new Map();
      groups.set(outcome, byKeys);
    }
    let g = byKeys.get(keys);
    if (!g) {
      g = {
        g: {
          outcome,
          after: o.after.policy,
          ...(o.after.candidates ? { candidates: o.after.candidates } : {}),
          lost: [...lost],
          gained: [...gained],
          changed: [...changed],
        },
        names: [],
        count: 0,
      };
      byKeys.set(keys, g);
      inOrder.push(g);
    }
    g.count++;
    if (g.names.length < SUMMARY_NAMES) g.names.push(o.name);
    let h = heldByOperator.get(o.heldBy);
    if (h === undefined) {
      h = Object.values(o.heldBy).includes('operator-policy');
      heldByOperator.set(o.heldBy, h);
    }
    if (h) held++;
  }
  const risks: PreviewSummary['risks'] = [];
  for (const risk of RISKS) {
    const r = byRisk.get(risk);
    if (!r) continue;
    risks.push({
      risk,
      words: RISK_WORDS[risk],
      count: r.count,
      possible: r.possible,
      keys: [...r.keys].sort(),
      names: [...r.sure, ...r.maybe].slice(0, SUMMARY_NAMES),
    });
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
    groups: inOrder.sort((a, b) => b.count - a.count).map(({ g, names, count }) => ({ ...g, count, names })),
    heldByOperator: held,
    scanned: { ...result.scanned },
  };
}

const NONE: readonly Risk[] = [];

interface DiffKeysEntry {
  readonly lost: string[];
  readonly gained: string[];
  readonly changed: string[];
}

/**
 * An object's lost, gained and changed keys, sorted: one entry per set of keys (what a group is
 * told apart by), read once per diff, since the objects a change moves alike share theirs
 * (simulate.ts).
 */
class DiffKeys {
  readonly #read = new Map<object, Map<object, Map<object, DiffKeysEntry>>>();
  readonly #byJson = new Map<string, DiffKeysEntry>();

  of(o: ObjectOutcome): DiffKeysEntry {
    let byGained = this.#read.get(o.lost);
    if (!byGained) {
      byGained = new Map();
      this.#read.set(o.lost, byGained);
    }
    let byChanged = byGained.get(o.gained);
    if (!byChanged) {
      byChanged = new Map();
      byGained.set(o.gained, byChanged);
    }
    let keys = byChanged.get(o.changed);
    if (!keys) {
      const lost = Object.keys(o.lost).sort();
      const gained = Object.keys(o.gained).sort();
      const changed = Object.keys(o.changed).sort();
      const json = JSON.stringify([lost, gained, changed]);
      keys = this.#byJson.get(json) ?? { lost, gained, changed };
      this.#byJson.set(json, keys);
      byChanged.set(o.changed, keys);
    }
    return keys;
  }
}

/** The lost keys that carry a risk for a kind, with it: read once per lost set (shared, see DiffKeys). */
class RiskyKeys {
  readonly #read = new Map<object, Map<ObjectKind, [Risk, string][]>>();
  constructor(readonly version: BrokerVersion) {}

  of(lost: Record<string, unknown>, kind: ObjectKind): [Risk, string][] {
    let byKind = this.#read.get(lost);
    if (!byKind) {
      byKind = new Map();
      this.#read.set(lost, byKind);
    }
    let pairs = byKind.get(kind);
    if (!pairs) {
      pairs = [];
      for (const k of Object.keys(lost)) {
        const risk = riskOf(k, kind, this.version);
        if (risk !== undefined) pairs.push([risk, k]);
      }
      byKind.set(kind, pairs);
    }
    return pairs;
  }
}
