import { keySpec, scopeFits, vetoedKeys } from './keys.ts';
import {
  type CompiledPattern,
  hasTopLevelAlternation,
  isAnchored,
  type NameView,
  nameView,
  PatternCache,
} from './pattern.ts';
import { type EffectiveValue, effectiveDefinition } from './resolve.ts';
import {
  atLeast,
  type BrokerVersion,
  type Definition,
  OBJECT_KINDS,
  type ObjectKind,
  type Policy,
  type PolicyLayer,
} from './types.ts';

/**
 * What a create, edit or delete of one policy does to every object of the vhost, before it is
 * made. Pure: the inventory and the policies come in, outcomes come out.
 *
 * The rule is the broker's (see resolve.ts): per layer, the highest-priority applicable match
 * wins alone. What is known *before* the change is the broker's own report for the user layer
 * (the `policy` field, read from the object's record); the engine only works out what changes.
 * That makes the simulation both exact and cheap:
 * - a delete touches only the objects the broker reports governed by the deleted policy;
 * - a create or edit touches only the objects its old version governs or its new version reaches;
 * - for an object whose winner is removed, every applicable policy with a higher priority than
 *   the reported winner is known not to match (else the broker would have chosen it): only the
 *   lower ones are read, and an unreadable pattern above the winner costs nothing.
 * The operator layer is not reported by the cheap listing, so it is the engine's reading of the
 * operator policies (few, in practice), and a tie there is said as a tie.
 * Anything the engine cannot decide is `unpredictable`, with the reason, never guessed.
 */

export type ChangeAction = 'create' | 'edit' | 'delete';

export interface PolicyChange {
  readonly action: ChangeAction;
  readonly layer: PolicyLayer;
  /** The policy as it is now; null for a create. */
  readonly before: Policy | null;
  /** The policy as proposed; null for a delete. */
  readonly after: Policy | null;
}

/** One queue or exchange, as the inventory listed it. */
export interface InventoryObject {
  readonly name: string;
  /** null: a queue of a type this bot does not know (its vetoes are unknown). */
  readonly kind: ObjectKind | null;
  /** The broker's type word, for queues of unknown type. */
  readonly type?: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The user policy the broker reports: a name, null for none, undefined when not reported. */
  readonly policy: string | null | undefined;
  /** The operator policy the broker reports, when the listing carries it. */
  readonly operatorPolicy?: string | null | undefined;
}

/** What losing a key means to a person, in the order a preview lists it. */
export const RISKS = [
  'dead-letter',
  'ttl',
  'limit',
  'delivery-limit',
  'federation',
  'alternate-exchange',
  'retention',
] as const;
export type Risk = (typeof RISKS)[number];

export const RISK_WORDS: Readonly<Record<Risk, string>> = {
  'dead-letter': 'lose a dead-letter target',
  ttl: 'lose a TTL (message-ttl or expires)',
  limit: 'lose a length limit',
  'delivery-limit': 'lose a delivery limit',
  federation: 'lose a federation upstream',
  'alternate-exchange': 'lose an alternate exchange',
  retention: 'lose a stream retention setting',
};

/**
 * Which object types a risky key does something for. A stream that "loses" message-ttl loses
 * nothing (it never used it), and a queue that loses alternate-exchange neither.
 */
const USED_BY: Readonly<Record<string, readonly ObjectKind[]>> = {
  'dead-letter-exchange': ['classic', 'quorum'],
  'dead-letter-routing-key': ['classic', 'quorum'],
  'dead-letter-strategy': ['quorum'],
  'message-ttl': ['classic', 'quorum'],
  expires: ['classic', 'quorum'],
  'max-length': ['classic', 'quorum'],
  'max-length-bytes': ['classic', 'quorum', 'stream'],
  overflow: ['classic', 'quorum'],
  'delivery-limit': ['quorum'],
  'federation-upstream': ['classic', 'quorum', 'stream', 'exchange'],
  'federation-upstream-set': ['classic', 'quorum', 'stream', 'exchange'],
  'federation-upstream-pattern': ['classic', 'quorum', 'stream', 'exchange'],
  'alternate-exchange': ['exchange'],
  'max-age': ['stream'],
  'stream-max-segment-size-bytes': ['stream'],
};

export function riskOf(key: string, kind: ObjectKind): Risk | undefined {
  const risk = keySpec(key)?.risk;
  if (!risk) return undefined;
  return USED_BY[key]?.includes(kind) ? risk : undefined;
}

// --- the object's own arguments (reference section 6) ------------------------------------------

/** How the broker combines an object's own argument with the policy's value for the same key. */
export type ArgumentRule = 'smaller' | 'argument' | 'policy';

export function argumentRule(key: string, kind: ObjectKind, v: BrokerVersion): ArgumentRule | undefined {
  if (key === 'consumer-timeout' && kind !== 'exchange') return 'smaller';
  switch (kind) {
    case 'classic':
      if (['expires', 'message-ttl', 'max-length', 'max-length-bytes'].includes(key)) return 'smaller';
      if (
        [
          'dead-letter-exchange',
          'dead-letter-routing-key',
          'overflow',
          'queue-mode',
          'queue-version',
        ].includes(key)
      ) {
        return 'argument';
      }
      return undefined;
    case 'quorum':
      if (key.startsWith('dead-letter-')) return 'argument';
      if (atLeast(v, 4)) {
        if (['max-length', 'max-length-bytes', 'expires', 'message-ttl', 'delivery-limit'].includes(key))
          return 'smaller';
        if (['consumer-disconnected-timeout', 'delayed-retry-min', 'delayed-retry-max'].includes(key))
          return 'smaller';
        if (key === 'overflow' || key === 'delayed-retry-type') return 'policy';
        return undefined;
      }
      if (
        [
          'max-length',
          'max-length-bytes',
          'max-in-memory-length',
          'max-in-memory-bytes',
          'delivery-limit',
          'message-ttl',
        ].includes(key)
      ) {
        return 'smaller';
      }
      if (key === 'overflow' || key === 'expires') return 'policy';
      return undefined;
    case 'stream':
      return [
        'max-length-bytes',
        'max-age',
        'stream-max-segment-size-bytes',
        'stream-filter-size-bytes',
      ].includes(key)
        ? 'policy'
        : undefined;
    case 'exchange':
      return key === 'alternate-exchange' ? 'argument' : undefined;
  }
}

/** The argument that sets `key` on this object: `x-<key>` on queues, the bare key on exchanges. */
export function argumentName(key: string, kind: ObjectKind): string {
  return kind === 'exchange' ? key : `x-${key}`;
}

/** Which value an object uses, given its argument and the policies' effective value. */
export function valueInUse(
  rule: ArgumentRule,
  key: string,
  argument: unknown,
  policy: unknown,
  v: BrokerVersion,
): { value: unknown; from: 'argument' | 'policy' | 'both' | 'none' } {
  if (argument === undefined && policy === undefined) return { value: undefined, from: 'none' };
  if (argument === undefined) return { value: policy, from: 'policy' };
  if (policy === undefined) return { value: argument, from: 'argument' };
  if (rule === 'argument') return { value: argument, from: 'argument' };
  if (rule === 'policy') return { value: policy, from: 'policy' };
  if (typeof argument !== 'number' || typeof policy !== 'number')
    return { value: argument, from: 'argument' };
  if (argument === policy) return { value: argument, from: 'both' };
  // 4.0+: a negative delivery limit means unlimited, and a limited value beats it.
  const unlimitedLoses = key === 'delivery-limit' && atLeast(v, 4) && (argument < 0 || policy < 0);
  const pick = unlimitedLoses ? Math.max(argument, policy) : Math.min(argument, policy);
  return { value: pick, from: pick === argument ? 'argument' : 'policy' };
}

export interface ArgumentNote {
  /** The object's own argument, e.g. `x-message-ttl`. */
  readonly argument: string;
  readonly argumentValue: unknown;
  readonly rule: ArgumentRule;
  /** The value the object really uses, before and after the change. */
  readonly before: unknown;
  readonly after: unknown;
  /** Where the value in use after the change comes from. */
  readonly holds: 'argument' | 'policy' | 'both' | 'none';
}

// --- outcomes ------------------------------------------------------------------------------

export interface KeyDiff {
  readonly lost: Record<string, unknown>;
  readonly gained: Record<string, unknown>;
  readonly changed: Record<string, [unknown, unknown]>;
}

export interface ObjectOutcome extends KeyDiff {
  readonly name: string;
  readonly kind: ObjectKind;
  /** The changed layer's policy (the operator policy for an operator change). */
  readonly before: { policy: string | null; candidates?: string[] };
  /** `policy` is null and `candidates` lists the tie when the broker's choice is undefined. */
  readonly after: { policy: string | null; candidates?: string[] };
  /** The other layer, which the change leaves as it is. */
  readonly unchangedLayer: {
    layer: PolicyLayer;
    policy: string | null;
    candidates?: string[];
    source: 'broker' | 'engine';
  };
  /** After a tie: what each candidate would give. `lost`/`gained`/`changed` then hold only what all agree on. */
  readonly ifCandidate?: Record<string, KeyDiff>;
  /** Where each key's effective value after the change comes from (user policy, operator policy, both). */
  readonly heldBy: Record<string, EffectiveValue['from']>;
  /** Keys the user policy gave (or shared) before and only the operator policy gives after: not lost. */
  readonly keptByOperator?: string[];
  /** Keys the object's own arguments also set, and which value holds (reference section 6). */
  readonly arguments?: Record<string, ArgumentNote>;
  /** What the object really loses, by risk, first the worst. */
  readonly risks: Risk[];
  /** Risks under some tie candidates only. */
  readonly possibleRisks?: Risk[];
  /** The change leaves the broker's choice undefined where it was defined. */
  readonly newTie?: true;
  /** The new pattern is unanchored and reaches this name without it starting with the pattern. */
  readonly unanchoredCatch?: true;
  readonly notes?: string[];
}

export interface Unpredictable {
  readonly name: string;
  readonly kind: ObjectKind | string;
  readonly why: string;
}

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
}

export interface SimulationResult {
  readonly objects: ObjectOutcome[];
  readonly unpredictable: Unpredictable[];
  readonly summary: PreviewSummary;
}

/** Lists kept in a summary: enough to read, bounded however large the vhost. */
export const SUMMARY_NAMES = 50;
const CATCH_NAMES = 1000;

// --- compiled layers --------------------------------------------------------------------------

interface Entry {
  readonly policy: Policy;
  readonly name: string;
  readonly priority: number;
  readonly pattern: CompiledPattern;
}

/**
 * The ASCII literal every name a pattern matches must start with, when that is plain to see:
 * `^` then literal characters, no alternation outside a group. A name that does not start with
 * it cannot match, so such policies are filed under their prefix and read only for names that
 * start with it. ASCII only, so the name's own string can be compared (a multi-byte character
 * never equals an ASCII one). Undefined when there is no such prefix.
 */
export function literalPrefix(pattern: string): string | undefined {
  if (!pattern.startsWith('^') || hasTopLevelAlternation(pattern)) return undefined;
  const units: string[] = [];
  let i = 1;
  for (; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (/[A-Za-z0-9_\-/:@#%&=,;'"!~ <>]/.test(c)) units.push(c);
    else if (c === '\\' && /[!-/:-@[-`{-~]/.test(pattern[i + 1] ?? 'a')) units.push(pattern[++i] as string);
    else break;
  }
  // A quantifier after the prefix makes its last character optional.
  if (i < pattern.length && '*?{+'.includes(pattern[i] as string)) units.pop();
  const prefix = units.join('');
  return prefix === '' ? undefined : prefix;
}

/** Per object kind: the applicable policies filed by literal prefix, and the rest. */
interface KindIndex {
  readonly byPrefix: Map<string, Entry[]>;
  readonly longest: number;
  readonly general: Entry[];
}

const byPriority = (a: Entry, b: Entry) =>
  b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** One layer's policies, compiled, and per object kind the applicable ones, highest priority first. */
class Layer {
  readonly byName = new Map<string, Entry>();
  readonly perKind: Record<ObjectKind, Entry[]>;
  readonly #applicable: Record<ObjectKind, Set<Entry>>;
  readonly #index: Record<ObjectKind, KindIndex>;

  constructor(entries: readonly Entry[], version: BrokerVersion) {
    for (const e of entries) this.byName.set(e.name, e);
    const sorted = [...entries].sort(byPriority);
    const perKind = {} as Record<ObjectKind, Entry[]>;
    for (const kind of OBJECT_KINDS) {
      const vetoes = vetoedKeys(kind, version);
      perKind[kind] = sorted.filter(
        (e) =>
          scopeFits(e.policy.applyTo, kind) && !Object.keys(e.policy.definition).some((k) => vetoes.has(k)),
      );
    }
    this.perKind = perKind;
    this.#applicable = Object.fromEntries(OBJECT_KINDS.map((k) => [k, new Set(perKind[k])])) as Record<
      ObjectKind,
      Set<Entry>
    >;
    const index = {} as Record<ObjectKind, KindIndex>;
    for (const kind of OBJECT_KINDS) {
      const byPrefix = new Map<string, Entry[]>();
      const general: Entry[] = [];
      let longest = 0;
      for (const e of perKind[kind]) {
        const prefix = literalPrefix(e.policy.pattern);
        if (prefix === undefined) {
          general.push(e);
          continue;
        }
        longest = Math.max(longest, prefix.length);
        const list = byPrefix.get(prefix);
        if (list) list.push(e);
        else byPrefix.set(prefix, [e]);
      }
      index[kind] = { byPrefix, longest, general };
    }
    this.#index = index;
  }

  /**
   * The applicable policies that can match this name, highest priority first: those without a
   * literal prefix, and those whose prefix the name starts with. Every other one cannot match.
   */
  candidatesFor(kind: ObjectKind, name: string): Entry[] {
    const { byPrefix, longest, general } = this.#index[kind];
    if (byPrefix.size === 0) return general;
    let found: Entry[] | undefined;
    const upTo = Math.min(longest, name.length);
    for (let n = 1; n <= upTo; n++) {
      const list = byPrefix.get(name.slice(0, n));
      if (list) found = found ? found.concat(list) : list;
    }
    if (!found) return general;
    return general.length === 0 && found.length === 1 ? found : [...general, ...found].sort(byPriority);
  }

  /** The policy by name, if its scope fits this kind and the kind vetoes none of its keys. */
  applicable(name: string, kind: ObjectKind): Entry | undefined {
    const e = this.byName.get(name);
    return e && this.#applicable[kind].has(e) ? e : undefined;
  }
}

type Known = (e: Entry) => boolean | 'undecidable' | undefined;

interface Scan {
  /** The applicable matches sharing the top priority. */
  readonly candidates: Entry[];
  /** Unreadable-for-this-name policies that could be first or tie. */
  readonly undecided: Entry[];
}

/** The broker's choice in one layer: walk down the priorities, stop below the first match. */
function scan(list: readonly Entry[], view: NameView, known?: Known): Scan {
  const candidates: Entry[] = [];
  const undecided: Entry[] = [];
  let top: number | undefined;
  for (const e of list) {
    if (top !== undefined && e.priority < top) break;
    const hit = known?.(e) ?? e.pattern.match(view);
    if (hit === true) {
      top ??= e.priority;
      candidates.push(e);
    } else if (hit === 'undecidable') {
      undecided.push(e);
    }
  }
  return { candidates, undecided };
}

function whyUnreadable(e: Entry): string {
  return e.pattern.why ?? 'the broker and this bot may read this pattern differently for this name';
}

const names = (entries: readonly Entry[]) => entries.map((e) => e.name);

function sameNames(a: readonly Entry[], b: readonly Entry[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(names(a));
  return b.every((e) => set.has(e.name));
}

/** JSON equality for definition values (numbers, strings, the odd list). */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function diffEffective(
  before: Record<string, EffectiveValue>,
  after: Record<string, EffectiveValue>,
): KeyDiff {
  const lost: Record<string, unknown> = {};
  const gained: Record<string, unknown> = {};
  const changed: Record<string, [unknown, unknown]> = {};
  for (const [k, b] of Object.entries(before)) {
    const a = after[k];
    if (!a) lost[k] = b.value;
    else if (!sameValue(a.value, b.value)) changed[k] = [b.value, a.value];
  }
  for (const [k, a] of Object.entries(after)) if (!(k in before)) gained[k] = a.value;
  return { lost, gained, changed };
}

const isEmptyDiff = (d: KeyDiff) =>
  Object.keys(d.lost).length === 0 &&
  Object.keys(d.gained).length === 0 &&
  Object.keys(d.changed).length === 0;

/** What every candidate agrees on. */
function commonDiff(diffs: readonly KeyDiff[]): KeyDiff {
  const [first, ...rest] = diffs;
  if (!first) return { lost: {}, gained: {}, changed: {} };
  const keep = <T>(pick: (d: KeyDiff) => Record<string, T>) =>
    Object.fromEntries(
      Object.entries(pick(first)).filter(([k, v]) =>
        rest.every((d) => k in pick(d) && sameValue(pick(d)[k], v)),
      ),
    );
  return { lost: keep((d) => d.lost), gained: keep((d) => d.gained), changed: keep((d) => d.changed) };
}

// --- the simulation -------------------------------------------------------------------------

export interface SimulationInput {
  readonly version: BrokerVersion;
  /** The vhost's policies and operator policies as they are now. */
  readonly user: readonly Policy[];
  readonly operator: readonly Policy[];
  readonly change: PolicyChange;
  readonly cache?: PatternCache;
}

interface LayerChoice {
  readonly policy: Policy | null;
  readonly candidates?: Policy[];
  readonly source: 'broker' | 'engine';
  readonly undecided?: string;
}

/** Before is read only when needed (to tell a new tie from an old one). */
interface Step {
  readonly before: () => Scan;
  readonly after: Scan;
}

type StepResult = Step | { readonly why: string } | null;

/**
 * Fed the inventory one object at a time (as the listing streams in), keeps only what the change
 * touches. `result()` sorts and summarises.
 */
export class Simulation {
  readonly #version: BrokerVersion;
  readonly #change: PolicyChange;
  readonly #cache: PatternCache;
  readonly #changed: { before: Layer; after: Layer };
  readonly #other: Layer;
  readonly #catch: { pattern: CompiledPattern; anchored: CompiledPattern; applyTo: string } | undefined;
  readonly #objects: ObjectOutcome[] = [];
  readonly #unpredictable: Unpredictable[] = [];
  readonly #catchNames: string[] = [];
  #catchCount = 0;
  #queues = 0;
  #exchanges = 0;

  constructor(input: SimulationInput) {
    const cache = input.cache ?? new PatternCache();
    const { change, version } = input;
    this.#version = version;
    this.#change = change;
    this.#cache = cache;
    const entry = (p: Policy): Entry => ({
      policy: p,
      name: p.name,
      priority: p.priority,
      pattern: cache.get(p.pattern),
    });
    const current = (change.layer === 'user' ? input.user : input.operator).map(entry);
    const proposed = current.filter((e) => e.name !== change.before?.name && e.name !== change.after?.name);
    if (change.after) proposed.push(entry(change.after));
    this.#changed = { before: new Layer(current, version), after: new Layer(proposed, version) };
    this.#other = new Layer((change.layer === 'user' ? input.operator : input.user).map(entry), version);
    const after = change.after;
    if (after && !isAnchored(after.pattern)) {
      const pattern = cache.get(after.pattern);
      if (pattern.readable) {
        this.#catch = { pattern, anchored: cache.get(`^(?:${after.pattern})`), applyTo: after.applyTo };
      }
    }
  }

  add(o: InventoryObject): void {
    if (o.kind === 'exchange') this.#exchanges++;
    else this.#queues++;
    // The common case of a delete, decided without allocating: the broker reports another policy.
    if (this.#change.after === null && this.#change.layer === 'user' && o.kind !== null) {
      const reported = o.policy;
      if (reported !== undefined && reported !== this.#change.before?.name) return;
    }
    let view: NameView | undefined;
    const viewOf = () => {
      view ??= nameView(o.name);
      return view;
    };
    if (o.kind === null) {
      this.#unknownKind(o, viewOf);
      return;
    }
    const kind = o.kind;
    let caught = false;
    if (this.#catch && scopeFits(this.#catch.applyTo, kind)) {
      if (this.#catch.pattern.match(viewOf()) === true && this.#catch.anchored.match(viewOf()) === false) {
        caught = true;
        this.#catchCount++;
        if (this.#catchNames.length < CATCH_NAMES) this.#catchNames.push(o.name);
      }
    }
    const reported = this.#change.layer === 'user' ? o.policy : o.operatorPolicy;
    const step =
      reported === undefined
        ? this.#byEngine(kind, o.name, viewOf)
        : this.#byReport(kind, o.name, reported, viewOf);
    if (step === null) return;
    if ('why' in step) {
      this.#unpredictable.push({ name: o.name, kind, why: step.why });
      return;
    }
    const outcome = this.#outcome(o, kind, step, viewOf, caught);
    if (outcome) this.#objects.push(outcome);
  }

  /** A queue type this bot does not know: reached by the change means unpredictable. */
  #unknownKind(o: InventoryObject, viewOf: () => NameView): void {
    const { before, after, layer } = this.#change;
    const reaches = (p: Policy | null) =>
      p !== null &&
      (p.applyTo === 'all' || p.applyTo === 'queues') &&
      this.#cache.get(p.pattern).match(viewOf()) !== false;
    const governed = layer === 'user' && before !== null && o.policy === before.name;
    if (governed || reaches(before) || reaches(after)) {
      this.#unpredictable.push({
        name: o.name,
        kind: o.type ?? 'unknown',
        why: `a queue of type ${JSON.stringify(o.type ?? 'unknown')}, whose key vetoes this bot does not know`,
      });
    }
  }

  /**
   * The user layer with the broker's report: `reported` is the policy in force now.
   * Returns null when the change does not touch the object.
   */
  #byReport(kind: ObjectKind, name: string, reported: string | null, viewOf: () => NameView): StepResult {
    const { before: B, after: A } = this.#changed;
    const oldName = this.#change.before?.name;
    const oldGoverns = oldName !== undefined && reported === oldName;
    const next = this.#change.after ? A.applicable(this.#change.after.name, kind) : undefined;
    if (!oldGoverns && !next) return null;
    const nextHit = next ? next.pattern.match(viewOf()) : false;
    if (!oldGoverns && nextHit === false) return null;

    const inForce = reported === null ? undefined : B.byName.get(reported);
    if (reported !== null && !inForce) {
      return {
        why: `the broker reports ${reported}, which is not among the vhost's policies now: it changed a moment ago; preview again`,
      };
    }
    if (next && nextHit === 'undecidable') {
      return { why: `this bot cannot read the proposed pattern for this name (${whyUnreadable(next)})` };
    }
    // The policy being changed, as it is now, should not outrank what the broker reports.
    const old = oldName !== undefined && !oldGoverns ? B.applicable(oldName, kind) : undefined;
    if (
      old &&
      (inForce === undefined || old.priority > inForce.priority) &&
      old.pattern.match(viewOf()) === true
    ) {
      return {
        why: `the broker reports ${reported ?? 'no policy'}, though this bot reads ${old.name} as matching it first: preview again, and tell the bot's maintainers if it persists`,
      };
    }
    if (inForce && (inForce.pattern.match(viewOf()) === false || !B.applicable(inForce.name, kind))) {
      return {
        why: `the broker reports ${inForce.name}, which this bot reads as not governing this ${kind}: preview again, and tell the bot's maintainers if it persists`,
      };
    }
    // Before: the one in force, and whatever else matches at its priority (lost the tie).
    const before = (): Scan =>
      inForce
        ? scan(B.candidatesFor(kind, name), viewOf(), (e) =>
            e.priority !== inForce.priority ? false : e === inForce ? true : undefined,
          )
        : { candidates: [], undecided: [] };

    if (oldGoverns && inForce) {
      // The winner goes or changes: read the rest from its priority down; above it nothing matches,
      // or the broker would have chosen it.
      const after = scan(A.candidatesFor(kind, name), viewOf(), (e) => {
        if (e === next) return nextHit;
        return e.priority > inForce.priority ? false : undefined;
      });
      return { before, after };
    }
    // The proposed policy reaches the object and the one in force stays.
    if (!next) return null;
    if (inForce === undefined || next.priority > inForce.priority) {
      return { before, after: { candidates: [next], undecided: [] } };
    }
    if (next.priority < inForce.priority) return null;
    // The same priority as the one in force: a tie with it and whatever else matches at that level.
    const after = scan(A.candidatesFor(kind, name), viewOf(), (e) => {
      if (e.priority !== inForce.priority) return false;
      if (e === next) return nextHit;
      return e.name === inForce.name ? true : undefined;
    });
    return { before, after };
  }

  /** A layer without a report (the operator layer): the engine reads before and after. */
  #byEngine(kind: ObjectKind, name: string, viewOf: () => NameView): StepResult {
    const { before: B, after: A } = this.#changed;
    const old = this.#change.before ? B.applicable(this.#change.before.name, kind) : undefined;
    const next = this.#change.after ? A.applicable(this.#change.after.name, kind) : undefined;
    const oldHit = old ? old.pattern.match(viewOf()) : false;
    const nextHit = next ? next.pattern.match(viewOf()) : false;
    if (oldHit === false && nextHit === false) return null;
    const read = scan(B.candidatesFor(kind, name), viewOf());
    // A policy this bot cannot read for this name may have been the one in force: then the
    // before is one of several, like a tie, and the object is listed rather than skipped.
    const before = read.undecided.length
      ? { candidates: [...read.candidates, ...read.undecided], undecided: read.undecided }
      : read;
    return { before: () => before, after: scan(A.candidatesFor(kind, name), viewOf()) };
  }

  /** The object's choice in the layer the change leaves alone. */
  #otherChoice(o: InventoryObject, kind: ObjectKind, viewOf: () => NameView): LayerChoice {
    const reported = this.#change.layer === 'user' ? o.operatorPolicy : o.policy;
    if (reported !== undefined) {
      const p = reported === null ? null : (this.#other.byName.get(reported)?.policy ?? null);
      return { policy: p, source: 'broker' };
    }
    const s = scan(this.#other.candidatesFor(kind, o.name), viewOf());
    const [first] = s.candidates;
    return {
      policy: first?.policy ?? null,
      source: 'engine',
      ...(s.candidates.length > 1 ? { candidates: s.candidates.map((e) => e.policy) } : {}),
      ...(s.undecided.length > 0
        ? { undecided: s.undecided.map((e) => `${e.name} (${whyUnreadable(e)})`).join(', ') }
        : {}),
    };
  }

  #outcome(
    o: InventoryObject,
    kind: ObjectKind,
    step: Step,
    viewOf: () => NameView,
    caught: boolean,
  ): ObjectOutcome | null {
    const { after } = step;
    const layer = this.#change.layer;
    if (after.undecided.length > 0) {
      const u = after.undecided.map((e) => `${e.name} (${whyUnreadable(e)})`).join(', ');
      this.#unpredictable.push({
        name: o.name,
        kind,
        why: `a policy whose pattern this bot cannot read for this name may govern it after the change: ${u}`,
      });
      return null;
    }
    const reported = layer === 'user' ? o.policy : o.operatorPolicy;
    const before = reported === undefined || after.candidates.length > 1 ? step.before() : undefined;
    const notes: string[] = [];
    if (reported === undefined && before && before.undecided.length > 0) {
      notes.push(
        `Before the change, a policy this bot cannot read for this name may have governed it: ${names(before.undecided).join(', ')}; its values before are not known.`,
      );
    }
    // Before: the broker's report when there is one; the engine's reading otherwise.
    const beforeEntry =
      reported !== undefined
        ? reported === null
          ? undefined
          : this.#changed.before.byName.get(reported)
        : before?.candidates[0];
    const beforeTie = reported === undefined && (before?.candidates.length ?? 0) > 1;
    const afterTie = after.candidates.length > 1;
    const changedNames = new Set([this.#change.before?.name, this.#change.after?.name]);
    // Nothing moved: the same winner as before, and not the policy being changed.
    if (!afterTie && !beforeTie && after.candidates[0]?.name === beforeEntry?.name) {
      if (beforeEntry === undefined || !changedNames.has(beforeEntry.name)) return null;
    }
    if (
      beforeTie &&
      afterTie &&
      before &&
      sameNames(before.candidates, after.candidates) &&
      !after.candidates.some((e) => changedNames.has(e.name))
    ) {
      return null;
    }

    const other = this.#otherChoice(o, kind, viewOf);
    const otherWords = layer === 'user' ? 'operator policy' : 'user policy';
    if (other.undecided) {
      notes.push(
        `The ${otherWords} may be ${other.undecided}, which this bot cannot read for this name; values assume it is not.`,
      );
    }
    if (other.candidates) {
      notes.push(
        `The ${otherWords} is undefined between ${other.candidates.map((p) => p.name).join(' and ')}; values assume ${other.policy?.name}.`,
      );
    }
    if (beforeTie && before) {
      notes.push(
        `Before the change the ${layer === 'user' ? 'policy' : 'operator policy'} is undefined between ${names(before.candidates).join(' and ')}; values assume ${beforeEntry?.name}.`,
      );
    }
    const v = this.#version;
    const effective = (changedDef: Definition | undefined) =>
      layer === 'user'
        ? effectiveDefinition(changedDef, other.policy?.definition, v)
        : effectiveDefinition(other.policy?.definition, changedDef, v);
    const effBefore = effective(beforeEntry?.policy.definition);
    const choices = after.candidates.length > 0 ? after.candidates : [undefined];
    const perCandidate = choices.map((e) => {
      const eff = effective(e?.policy.definition);
      return {
        entry: e,
        eff,
        diff: diffEffective(effBefore, eff),
        risks: this.#risks(kind, effBefore, eff, o.arguments),
      };
    });
    const primary = perCandidate[0] as (typeof perCandidate)[number];
    const diff = afterTie ? commonDiff(perCandidate.map((c) => c.diff)) : primary.diff;
    const winnerSame = !afterTie && !beforeTie && after.candidates[0]?.name === beforeEntry?.name;
    if (winnerSame && isEmptyDiff(primary.diff)) return null;

    const newTie =
      afterTie && !(before && before.candidates.length > 1 && sameNames(before.candidates, after.candidates));
    const risks = RISKS.filter((r) => perCandidate.every((c) => c.risks.includes(r)));
    const possibleRisks = RISKS.filter(
      (r) => !risks.includes(r) && perCandidate.some((c) => c.risks.includes(r)),
    );
    const heldBy: Record<string, EffectiveValue['from']> = {};
    for (const [k, e] of Object.entries(primary.eff)) heldBy[k] = e.from;
    // The operator policy keeps a value the user policy no longer gives (or gave the stricter value already).
    const keptByOperator =
      layer === 'user'
        ? Object.keys(effBefore).filter(
            (k) => effBefore[k]?.from !== 'operator-policy' && primary.eff[k]?.from === 'operator-policy',
          )
        : [];
    const argNotes = this.#argumentNotes(o, kind, effBefore, primary.eff, diff);
    return {
      name: o.name,
      kind,
      before: {
        policy: beforeTie ? null : (beforeEntry?.name ?? null),
        ...(beforeTie && before ? { candidates: names(before.candidates) } : {}),
      },
      after: {
        policy: afterTie ? null : (after.candidates[0]?.name ?? null),
        ...(afterTie ? { candidates: names(after.candidates) } : {}),
      },
      lost: diff.lost,
      gained: diff.gained,
      changed: diff.changed,
      unchangedLayer: {
        layer: layer === 'user' ? 'operator' : 'user',
        policy: other.candidates ? null : (other.policy?.name ?? null),
        ...(other.candidates ? { candidates: other.candidates.map((p) => p.name) } : {}),
        source: other.source,
      },
      ...(afterTie
        ? { ifCandidate: Object.fromEntries(perCandidate.map((c) => [c.entry?.name ?? '', c.diff])) }
        : {}),
      heldBy,
      ...(keptByOperator.length ? { keptByOperator } : {}),
      ...(argNotes ? { arguments: argNotes } : {}),
      risks,
      ...(possibleRisks.length ? { possibleRisks } : {}),
      ...(newTie ? { newTie: true as const } : {}),
      ...(caught ? { unanchoredCatch: true as const } : {}),
      ...(notes.length ? { notes } : {}),
    };
  }

  /** Risky keys the object really stops using: its own arguments may keep them. */
  #risks(
    kind: ObjectKind,
    before: Record<string, EffectiveValue>,
    after: Record<string, EffectiveValue>,
    args: Readonly<Record<string, unknown>>,
  ): Risk[] {
    const found = new Set<Risk>();
    for (const key of Object.keys(before)) {
      if (key in after) continue;
      const risk = riskOf(key, kind);
      if (!risk) continue;
      if (argumentRule(key, kind, this.#version) && args[argumentName(key, kind)] !== undefined) continue;
      found.add(risk);
    }
    return RISKS.filter((r) => found.has(r));
  }

  #argumentNotes(
    o: InventoryObject,
    kind: ObjectKind,
    before: Record<string, EffectiveValue>,
    after: Record<string, EffectiveValue>,
    diff: KeyDiff,
  ): Record<string, ArgumentNote> | undefined {
    const out: Record<string, ArgumentNote> = {};
    const keys = new Set([
      ...Object.keys(diff.lost),
      ...Object.keys(diff.gained),
      ...Object.keys(diff.changed),
    ]);
    for (const key of keys) {
      const rule = argumentRule(key, kind, this.#version);
      const argument = argumentName(key, kind);
      const argumentValue = o.arguments[argument];
      if (!rule || argumentValue === undefined) continue;
      const b = valueInUse(rule, key, argumentValue, before[key]?.value, this.#version);
      const a = valueInUse(rule, key, argumentValue, after[key]?.value, this.#version);
      out[key] = { argument, argumentValue, rule, before: b.value, after: a.value, holds: a.from };
    }
    return Object.keys(out).length ? out : undefined;
  }

  result(): SimulationResult {
    const rank = (o: ObjectOutcome) => {
      const r = o.risks[0] ?? o.possibleRisks?.[0];
      return r === undefined ? RISKS.length + (o.newTie ? 0 : 1) : RISKS.indexOf(r);
    };
    const objects = [...this.#objects].sort(
      (a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    );
    const unpredictable = [...this.#unpredictable].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    return {
      objects,
      unpredictable,
      summary: summarize(objects, unpredictable, this.#change, {
        catchCount: this.#catchCount,
        catchNames: this.#catchNames,
        scanned: { queues: this.#queues, exchanges: this.#exchanges },
      }),
    };
  }
}

export function simulate(input: SimulationInput, objects: Iterable<InventoryObject>): SimulationResult {
  const sim = new Simulation(input);
  for (const o of objects) sim.add(o);
  return sim.result();
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

function summarize(
  objects: readonly ObjectOutcome[],
  unpredictable: readonly Unpredictable[],
  change: PolicyChange,
  extra: { catchCount: number; catchNames: string[]; scanned: { queues: number; exchanges: number } },
): PreviewSummary {
  const risks: PreviewSummary['risks'] = [];
  for (const risk of RISKS) {
    const sure = objects.filter((o) => o.risks.includes(risk));
    const maybe = objects.filter((o) => o.possibleRisks?.includes(risk));
    if (sure.length === 0 && maybe.length === 0) continue;
    const keys = new Set<string>();
    for (const o of [...sure, ...maybe]) {
      for (const k of Object.keys(o.lost)) if (riskOf(k, o.kind) === risk) keys.add(k);
      for (const d of Object.values(o.ifCandidate ?? {})) {
        for (const k of Object.keys(d.lost)) if (riskOf(k, o.kind) === risk) keys.add(k);
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
    const outcome = o.after.candidates
      ? `undefined between ${o.after.candidates.join(' and ')}`
      : o.after.policy === null
        ? nothingAfterWords(o)
        : o.after.policy === o.before.policy
          ? `stays with ${o.after.policy}`
          : change.action === 'delete' || o.before.policy === change.before?.name
            ? `falls back to ${o.after.policy}`
            : `taken over by ${o.after.policy}`;
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
    unanchoredCatch:
      change.after && extra.catchCount > 0
        ? {
            pattern: change.after.pattern,
            count: extra.catchCount,
            names: extra.catchNames.slice(0, SUMMARY_NAMES),
          }
        : null,
    groups: [...groups.values()]
      .sort((a, b) => b.count - a.count)
      .map(({ g, names, count }) => ({ ...g, count, names })),
    heldByOperator: objects.filter((o) => Object.values(o.heldBy).includes('operator-policy')).length,
    scanned: extra.scanned,
  };
}
