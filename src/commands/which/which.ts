// Over 400 lines: `which` whole, around one result: the broker's report explained, the engine's answer where the broker gives none (which `--at` shares), the object's links.
import { InputError } from '../../core/index.ts';
import type { LinkRow } from '../../links/index.ts';
import type { BacktrackingReader } from '../../patterns/index.ts';
import { resolveRead } from '../../patterns/index.ts';
import { type Hazard, readsFederation } from '../../policy/impact/index.ts';
import {
  type AlsoMatched,
  type BrokerVersion,
  buildPolicySet,
  type EffectiveValue,
  effectiveDefinition,
  explainLosers,
  formatVersion,
  keyHasEffect,
  type NotApplied,
  type ObjectKind,
  type Policy,
  type Resolution,
  type Source,
  withArguments,
} from '../../policy/index.ts';
import { isAnchored, type PatternCache } from '../../policy/pattern/index.ts';
import type { LiveNow } from '../../preview/index.ts';
import type { NotAskedWhy } from '../../rabbit/index.ts';
import type { WhichInput } from '../parse.ts';
import { usageOf } from '../registry.ts';
import { closeObjects, type NamedKind } from '../suggest.ts';
import { kindWords } from '../words.ts';
import { whichPathLine } from './whichDurability.ts';
import { liveHazards } from './whichHazards.ts';
import { linksOfObject } from './whichLinks.ts';
import { type Lookup, listOperatorPolicies, lookUp, notAskedOf, type WhichBroker } from './whichLookup.ts';

/**
 * `which NAME`: which policy governs this object. The policy in force is the broker's report,
 * never a recomputation; the engine explains it (who else matched and why they lose), and where
 * its own reading disagrees with the report, the answer says so instead of hiding it.
 */

export type { WhichBroker } from './whichLookup.ts';

/** Whether the broker reported the policy in force (the `answer` key of `--json`). */
export type BrokerReport = 'reported' | 'not-reported' | 'not-asked';

export interface PolicyView {
  name: string;
  pattern: string;
  applyTo: string;
  priority: number;
  definition: Record<string, unknown>;
  /** The pattern searches inside names rather than starting at their beginning. */
  unanchored: boolean;
}

/**
 * A policy the broker reports by name that is not among the vhost's policies now (deleted a
 * moment ago): only its name is known, and `--json` says so rather than filling in blanks.
 */
export interface UnknownPolicyView {
  name: string;
  unknown: true;
}

export function isKnownPolicy(p: PolicyView | UnknownPolicyView | null): p is PolicyView {
  return p !== null && !('unknown' in p);
}

export interface WhichResult {
  object: {
    vhost: string;
    name: string;
    /** One of classic, quorum, stream, exchange; or the broker's own word for a queue type this bot does not know. */
    kind: ObjectKind | string;
    exists: boolean;
    kindAssumed: boolean;
    /** Present (false) for a queue type whose key vetoes and argument rules this bot does not know. */
    keyRulesKnown?: false;
    /** The object's own arguments (`x-…`; bare names on exchanges), when it exists. */
    arguments?: Record<string, unknown>;
  };
  answer: BrokerReport;
  /** Why the broker did not report, or could not be asked. */
  why?: 'missing' | 'stats-pending' | 'past' | NotAskedWhy;
  /** The broker's words, when it gave a reason for not answering. */
  detail?: string;
  brokerVersion?: string;
  inForce: PolicyView | UnknownPolicyView | null;
  operatorPolicy: PolicyView | UnknownPolicyView | null;
  /** Exchanges never report their operator policy: it is then the engine's reading. */
  operatorPolicySource?: 'broker' | 'engine';
  /**
   * What the object gets, and where each value comes from (the object's own arguments included);
   * `noEffect` where its type takes the key and does nothing with it on this version.
   */
  effective: Record<string, { value: unknown; from: Source; noEffect?: true }>;
  alsoMatched: {
    name: string;
    priority: number;
    reason: NotApplied;
    keys?: string[];
    /** The pattern searches inside names rather than starting at their beginning. */
    unanchored: boolean;
  }[];
  /**
   * Operator policies whose pattern matches and that do not apply (as `alsoMatched`, for the
   * operator layer): a stream matched by an operator policy of keys it refuses has one here and
   * `operatorPolicy` null. Absent when there is none.
   */
  operatorAlsoMatched?: WhichResult['alsoMatched'];
  /**
   * The operator policies could not be listed (an identity that is not an administrator: the
   * broker's reason). The answer is what the broker reports; the operator layer is its report
   * alone, by name.
   */
  operatorPoliciesNotRead?: string;
  unreadable: { name: string; pattern: string; why: string }[];
  nothingGoverns: boolean;
  ambiguous: boolean;
  /** With `ambiguous`: every policy sharing the first one's priority. */
  candidates?: string[];
  /** Where the engine's reading and the broker's report disagree, and why they may. */
  disagreements: string[];
  /** When the object does not exist: the closest existing queues and exchanges, at most three. */
  didYouMean?: { name: string; kind: NamedKind }[];
  /**
   * A queue that exists: its statistics when they were read (`sampledAt`; they lag the broker by
   * seconds); `null` when the broker reports none for it: unknown, never zeros.
   */
  now?: LiveNow | null;
  /** A queue whose node is down (a cluster's node stopped): why `now` is null. */
  nodeDown?: true;
  /** What threatens the object as it stands (src/policy/impact/impact.ts, hazardsOf); [] when nothing. */
  hazards: Hazard[];
  /** Reads the hazards needed that failed: what they would have checked is not claimed. */
  hazardsNotRead?: string[];
  /**
   * The object's federation links, when its policy in force sets a federation key: each that
   * should run, whether it runs, on which node (src/links/). Absent otherwise.
   */
  links?: LinkRow[];
  /** What `path` would flag about the messages there now, in one line; absent when nothing. */
  pathLine?: string;
}

/** An answer about `object` that claims nothing yet: every part empty, to be filled in. */
export function emptyAnswer(object: WhichResult['object'], answer: BrokerReport): WhichResult {
  return {
    object,
    answer,
    inForce: null,
    operatorPolicy: null,
    effective: {},
    alsoMatched: [],
    unreadable: [],
    nothingGoverns: false,
    ambiguous: false,
    disagreements: [],
    hazards: [],
  };
}

export function policyView(p: Policy): PolicyView {
  return {
    name: p.name,
    pattern: p.pattern,
    applyTo: p.applyTo,
    priority: p.priority,
    definition: { ...p.definition },
    unanchored: !isAnchored(p.pattern),
  };
}

export interface WhichOptions {
  /** Patterns read once and kept between questions (the bot keeps one for its lifetime). */
  readonly patterns?: PatternCache;
  /** The backtracking engine for lookaround patterns; default the process's. */
  readonly reader?: BacktrackingReader;
  /**
   * Only what governs the object and the values it uses (`path`): where the broker reports the
   * user policy, the vhost's other user policies are not read against the name, so `alsoMatched`,
   * `unreadable`, `ambiguous` and the user layer's disagreements are left empty, and no `pathLine`.
   */
  readonly governingOnly?: boolean;
}

export async function which(
  input: WhichInput,
  broker: WhichBroker,
  options: WhichOptions = {},
): Promise<WhichResult> {
  if (input.name === '' && input.kind !== undefined && input.kind !== 'exchange') {
    throw new InputError('A queue cannot have an empty name; the empty name is the default exchange.', {
      usage: usageOf('which'),
    });
  }
  const base = (kind: ObjectKind | string, exists: boolean, kindAssumed: boolean): WhichResult =>
    emptyAnswer({ vhost: input.vhost, name: input.name, kind, exists, kindAssumed }, 'not-asked');

  let version: BrokerVersion;
  let lookup: Lookup;
  let user: Policy[];
  let operator: Policy[] | { notRead: string };
  const sampledAt = new Date().toISOString();
  try {
    [{ version }, lookup, user, operator] = await Promise.all([
      broker.overview(),
      lookUp(broker, input),
      broker.listPolicies(input.vhost),
      listOperatorPolicies(broker, input.vhost),
    ]);
  } catch (err) {
    const r = base(input.kind ?? 'classic', false, input.kind === undefined);
    return { ...r, ...(await notAskedOf(err, broker, input.vhost)) };
  }

  const notRead = 'notRead' in operator ? operator.notRead : undefined;
  const operators = 'notRead' in operator ? [] : operator;
  // Where the broker's report names what governs, explaining the others is `which`'s, not `path`'s.
  const explain = options.governingOnly !== true || lookup.policy === undefined;
  const explainOperator = explain || lookup.kind === 'exchange' || lookup.operatorPolicy === undefined;
  const set = buildPolicySet(
    explain ? user : [],
    explainOperator ? operators : [],
    version,
    options.patterns,
  );
  const resolution = await resolveRead(set, input.name, lookup.kind, options.reader);
  const r = base(lookup.kind ?? lookup.type, lookup.exists, lookup.kindAssumed);
  if (lookup.kind === null) r.object.keyRulesKnown = false;
  if (lookup.exists) r.object.arguments = { ...lookup.arguments };
  if (notRead !== undefined) r.operatorPoliciesNotRead = notRead;
  r.brokerVersion = formatVersion(version);
  r.unreadable = [...resolution.user.unreadable, ...resolution.operator.unreadable].map((u) => ({
    name: u.policy.name,
    pattern: u.policy.pattern,
    why: u.why,
  }));
  if (lookup.policy !== undefined) {
    r.answer = 'reported';
    explainReported(r, resolution, lookup, { user, operators, explain, explainOperator }, version);
  } else {
    r.answer = 'not-reported';
    r.why = lookup.forbidden ? 'forbidden' : lookup.exists ? 'stats-pending' : 'missing';
    if (lookup.forbidden) r.detail = lookup.forbidden;
    explainComputed(r, resolution, lookup, version);
  }
  r.nothingGoverns = r.inForce === null && r.operatorPolicy === null && !r.ambiguous;
  const operatorInForce = operators.find((p) => p.name === r.operatorPolicy?.name) ?? null;
  const operatorLosers = explainLosers(resolution.operator, operatorInForce).alsoMatched;
  if (operatorLosers.length > 0) r.operatorAlsoMatched = alsoMatchedView(operatorLosers);
  if (lookup.exists && lookup.kind !== null) {
    const values = Object.fromEntries(Object.entries(r.effective).map(([k, e]) => [k, e.value]));
    const live = await liveHazards(broker, input.vhost, lookup.kind, values, lookup.live, sampledAt);
    if (lookup.kind !== 'exchange') r.now = live.now;
    if (lookup.nodeDown && r.now === null) r.nodeDown = true;
    r.hazards = live.hazards;
    if (live.notRead.length) r.hazardsNotRead = live.notRead;
    const line =
      lookup.detail && options.governingOnly !== true
        ? whichPathLine(input.name, lookup.detail, values, r.hazards, version)
        : null;
    if (line) r.pathLine = line;
  }
  const federated = user.find((p) => p.name === r.inForce?.name);
  if (lookup.exists && federated && readsFederation(federated.definition)) {
    const kind = lookup.kind === 'exchange' ? 'exchange' : 'queue';
    const object = { vhost: input.vhost, name: input.name, kind } as const;
    const got = await linksOfObject(broker, object, federated, Date.parse(sampledAt));
    if (got) r.links = got.links;
  }
  if (!lookup.exists && !lookup.forbidden) {
    // A typo is the likelier story than a question about an object nobody declared.
    const close = await closeObjects(broker, input.vhost, input.name, input.kind);
    if (close.length) r.didYouMean = close;
  }
  return r;
}

/**
 * The answer where the broker reports none (an object it does not report, or a past instant
 * replayed from the trail): the engine's resolution says it, the first applicable match by priority
 * in force, a tie at that priority ambiguous, the effective values computed from both layers.
 */
export function explainComputed(
  r: WhichResult,
  resolution: Resolution,
  lookup: Pick<Lookup, 'kind' | 'arguments'>,
  version: BrokerVersion,
): void {
  const [first, ...rest] = resolution.user.candidates;
  r.inForce = first ? policyView(first) : null;
  r.ambiguous = rest.length > 0;
  if (r.ambiguous) r.candidates = resolution.user.candidates.map((p) => p.name);
  const op = resolution.operator.candidates[0];
  r.operatorPolicy = op ? policyView(op) : null;
  r.operatorPolicySource = 'engine';
  r.alsoMatched = losers(resolution, first ?? null);
  r.effective = sourced(effectiveDefinition(first?.definition, op?.definition, version), lookup, version);
  if (!resolution.user.decided) {
    r.disagreements.push('A policy whose pattern this bot cannot read may match this name and come first.');
  }
}

function losers(resolution: Resolution, inForce: Policy | null): WhichResult['alsoMatched'] {
  return alsoMatchedView(explainLosers(resolution.user, inForce).alsoMatched);
}

/**
 * Where each value comes from, the object's own arguments included, and which keys its type
 * ignores; a queue type whose argument rules this bot does not know gets the policies' values as
 * they are.
 */
function sourced(
  layers: Record<string, EffectiveValue>,
  lookup: Pick<Lookup, 'kind' | 'arguments'>,
  version: BrokerVersion,
): WhichResult['effective'] {
  const kind = lookup.kind;
  if (kind === null) return { ...layers };
  const out: WhichResult['effective'] = withArguments(layers, lookup.arguments, kind, version);
  for (const [key, e] of Object.entries(out))
    if (keyHasEffect(key, kind, version) === false) out[key] = { ...e, noEffect: true };
  return out;
}

export function alsoMatchedView(list: readonly AlsoMatched[]): WhichResult['alsoMatched'] {
  return list.map((m) => ({
    name: m.policy.name,
    priority: m.policy.priority,
    reason: m.reason,
    ...(m.keys ? { keys: [...m.keys] } : {}),
    unanchored: !isAnchored(m.policy.pattern),
  }));
}

function explainReported(
  r: WhichResult,
  resolution: Resolution,
  lookup: Lookup,
  policies: { user: Policy[]; operators: Policy[]; explain: boolean; explainOperator: boolean },
  version: BrokerVersion,
): void {
  const { user, explain } = policies;
  const reported = lookup.policy ?? null;
  const inForce = reported ? user.find((p) => p.name === reported) : undefined;
  r.inForce = inForce ? policyView(inForce) : reported ? { name: reported, unknown: true } : null;
  if (reported && !inForce) {
    r.disagreements.push(
      `The broker reports ${reported}, which is not among the vhost's policies now: it was probably deleted a moment ago and the broker's statistics do not show it yet.`,
    );
  }
  if (explain) explainUserLayer(r, resolution, reported, inForce);
  explainOperatorLayer(r, resolution, lookup, policies.operators, policies.explainOperator);
  const known = (p: WhichResult['inForce']) => (isKnownPolicy(p) ? p.definition : undefined);
  const inForceDefinition = known(r.inForce);
  const computed = effectiveDefinition(inForceDefinition, known(r.operatorPolicy), version);
  // An operator policy known by name only (its definition could not be read) sets what the user policy does not.
  const fallback = r.operatorPolicy && r.operatorPoliciesNotRead !== undefined ? 'operator-policy' : 'policy';
  const layers = lookup.effective
    ? // The broker's own effective definition; `from` says which layers set the key.
      Object.fromEntries(
        Object.entries(lookup.effective).map(([k, value]) => [
          k,
          {
            value,
            from: computed[k]?.from ?? (inForceDefinition && k in inForceDefinition ? 'policy' : fallback),
          },
        ]),
      )
    : computed;
  r.effective = sourced(layers, lookup, version);
}

/** Why every other user policy that matches loses to the reported one, and where the engine reads otherwise. */
function explainUserLayer(
  r: WhichResult,
  resolution: Resolution,
  reported: string | null,
  inForce: Policy | undefined,
): void {
  const { alsoMatched, outranks } = explainLosers(resolution.user, inForce ?? null);
  r.alsoMatched = alsoMatchedView(alsoMatched);
  const engineSees = resolution.user.matches.find((m) => m.policy.name === reported);
  // A reported policy whose pattern this bot cannot read is not a disagreement: the report is
  // the answer, and `unreadable` says why the bot could not check it.
  const unreadableReported = resolution.user.unreadable.some((u) => u.policy.name === reported);
  if (reported && inForce && !engineSees && !unreadableReported) {
    r.disagreements.push(
      `By this bot's reading ${reported} does not match this object; a change made seconds ago may not show in the broker's statistics yet.`,
    );
  } else if (engineSees && engineSees.refused.length > 0) {
    r.disagreements.push(
      `By this bot's reading ${reported} sets ${engineSees.refused.join(', ')}, which a ${kindWords(r.object.kind)} refuses; a change made seconds ago may not show in the broker's statistics yet.`,
    );
  }
  if (outranks.length > 0) {
    const names = outranks.map((p) => `${p.name} (priority ${p.priority})`).join(', ');
    r.disagreements.push(
      reported
        ? `By this bot's reading ${names} should win over ${reported}; the broker's statistics lag a change by several seconds, so ask again shortly.`
        : `By this bot's reading ${names} should govern this object although the broker reports no policy; the broker's statistics lag a change by several seconds, so ask again shortly.`,
    );
  }
  // A tie: the reported policy (read or not) and the applicable matches at its priority.
  const tied = alsoMatched.filter((m) => m.reason === 'same-priority').map((m) => m.policy.name);
  if (inForce && (engineSees || unreadableReported) && tied.length > 0) {
    r.ambiguous = true;
    r.candidates = [inForce.name, ...tied].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

/** The operator layer: reported for queues, the engine's reading for exchanges. */
function explainOperatorLayer(
  r: WhichResult,
  resolution: Resolution,
  lookup: Lookup,
  operator: Policy[],
  explain: boolean,
): void {
  if (lookup.kind === 'exchange') {
    const op = resolution.operator.candidates[0];
    r.operatorPolicy = op ? policyView(op) : null;
    r.operatorPolicySource = 'engine';
  } else if (lookup.operatorPolicy === undefined) {
    // The user policy came from the queue record; the operator layer is only in statistics.
    const op = resolution.operator.candidates[0];
    r.operatorPolicy = op ? policyView(op) : null;
    r.operatorPolicySource = 'engine';
  } else {
    const reportedOp = lookup.operatorPolicy ?? null;
    const op = reportedOp ? operator.find((p) => p.name === reportedOp) : undefined;
    r.operatorPolicy = op ? policyView(op) : reportedOp ? { name: reportedOp, unknown: true } : null;
    r.operatorPolicySource = 'broker';
    const engineOp = resolution.operator.candidates.map((p) => p.name);
    if (r.operatorPoliciesNotRead !== undefined || !explain) {
      // Nothing to compare with (or not asked to): the report stands alone.
    } else if (
      (reportedOp === null && engineOp.length > 0) ||
      (reportedOp !== null && !engineOp.includes(reportedOp))
    ) {
      r.disagreements.push(
        `The broker reports operator policy ${reportedOp ?? 'none'}, this bot reads ${engineOp.join(' or ') || 'none'}; the broker's statistics may not show a recent change yet.`,
      );
    }
  }
}
