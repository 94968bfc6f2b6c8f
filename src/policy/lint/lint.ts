import { type EffectiveValue, effectiveDefinition } from '../effective.ts';
import {
  hazardsOf,
  type LiveQueue,
  type TargetKey,
  targetExists,
  targetKeys,
  type World,
} from '../impact/impact.ts';
import { keySpec, scopesMeet, stricterLimit } from '../keys.ts';
import {
  anchoredForm,
  type CompiledPattern,
  isAnchored,
  matchesEveryName,
  type NameView,
  nameView,
  type PassView,
  type PatternCache,
  type PendingVerdicts,
  pendingVerdicts,
  refillView,
} from '../pattern/pattern.ts';
import type { IndexedPolicy, KindOrUnknown, PolicyIndex } from '../policyIndex.ts';
import { type SourcedValue, withArguments } from '../provenance.ts';
import { NameTooLongError, type PolicySet } from '../resolve.ts';
import { MAX_NAME_BYTES, type ObjectKind, type Policy, type PolicyLayer, utf8Length } from '../types.ts';

/**
 * `lint`: every surprise a vhost's policies hold for the objects there now, in one pass over
 * them. Pure: the policy set, each object (with its live numbers where they matter) and what the
 * vhost holds come in; findings come out, the most severe first. Each kind is the broker's rule
 * read the other way round (resolve.ts: the highest applicable match wins alone; keys.ts: a key
 * the type refuses makes the policy inapplicable; impact.ts: what `expires` deletes, which targets
 * exist), proven by test/integration/lint.test.ts against 3.10.8, 4.0.5 and 4.3.6, where the
 * broker is asked what governs each object.
 *
 * What it does not claim: an object of a queue type this bot does not know, or whose resolution a
 * pattern it cannot read leaves undecided, counts for no tie, no shadowing and no hazard (only
 * for `unanchored`, which reads the pattern alone); a policy whose matches include such an
 * object is not called shadowed.
 *
 * Over the size aim as one idea: one pass over the objects feeds every kind's tallies from the
 * same per-object outcome (the two layers' matches, the governing pair: worked out once for the
 * objects alike, `Outcome`), and a kind split out would read each object again; the rules it
 * reads live in resolve.ts, keys.ts and impact.ts.
 */

export const LINT_KINDS = [
  'tie',
  'missing-target',
  'expires-idle',
  'cannot-govern',
  'unanchored',
  'shadowed',
  'operator-never-stricter',
] as const;
export type LintKind = (typeof LINT_KINDS)[number];

export const SEVERITIES = ['error', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const SEVERITY_OF: { readonly [K in LintKind]: Severity } = {
  tie: 'error',
  'missing-target': 'error',
  'expires-idle': 'error',
  'cannot-govern': 'warning',
  unanchored: 'warning',
  shadowed: 'info',
  'operator-never-stricter': 'info',
};

/** `severity` is `floor` or worse (`--fail-on`). */
export const atLeastAsSevere = (severity: Severity, floor: Severity): boolean =>
  SEVERITIES.indexOf(severity) <= SEVERITIES.indexOf(floor);

/** Names listed per finding; `objectCount` has them all. */
export const LISTED_OBJECTS = 20;

/** Objects read in one go (`Linter.add`). */
const BATCH = 1024;

/** What each kind says beyond the objects it concerns. */
export type LintFact =
  /** `policies`: every policy of the tie, by name; `policy` is the first. */
  | { readonly kind: 'tie'; readonly policies: readonly string[]; readonly priority: number }
  | { readonly kind: 'missing-target'; readonly key: TargetKey; readonly target: string }
  /** `messages`: on the objects listed and counted; `by`: the first deletion, at the latest. */
  | {
      readonly kind: 'expires-idle';
      readonly expiresMs: number;
      readonly messages: number;
      readonly by: string;
    }
  /** `keys`: the keys of the policy the objects' types refuse. */
  | { readonly kind: 'cannot-govern'; readonly keys: readonly string[] }
  | { readonly kind: 'unanchored'; readonly pattern: string }
  /** `by`: the policies that govern the objects it matches instead (at most LISTED_OBJECTS). */
  | { readonly kind: 'shadowed'; readonly by: readonly string[] }
  /** `limit`: the operator policy's; `highestOwn`: the highest value the governed objects use without it. */
  | {
      readonly kind: 'operator-never-stricter';
      readonly key: string;
      readonly limit: number;
      readonly highestOwn: number;
    };

export type Finding = LintFact & {
  readonly severity: Severity;
  readonly policy: string;
  readonly operator: boolean;
  /** At most LISTED_OBJECTS names, in code-unit order. */
  readonly objects: readonly string[];
  readonly objectCount: number;
};

/** An object of the vhost as the listings give it. */
export interface LintObject {
  readonly name: string;
  /** null: a queue of a type this bot does not know. */
  readonly kind: KindOrUnknown;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** The first LISTED_OBJECTS names seen, and how many. */
class Names {
  readonly list: string[] = [];
  count = 0;
  add(name: string): void {
    this.count++;
    if (this.list.length < LISTED_OBJECTS) this.list.push(name);
  }
  copy(): Names {
    const n = new Names();
    n.list.push(...this.list);
    n.count = this.count;
    return n;
  }
  get sorted(): string[] {
    return [...this.list].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

interface PolicyTally {
  readonly layer: PolicyLayer;
  readonly policy: Policy;
  /** Its pattern is not anchored and may catch a name (a catch-all never does: `matchesEveryName`). */
  readonly unanchored: boolean;
  /** Its pattern anchored at the start (for `unanchored`), compiled once it is needed. */
  anchored?: CompiledPattern;
  /** Objects it matches and may govern (no refused key). */
  applicable: number;
  /** Of those, the ones another policy governs. */
  readonly lost: Names;
  readonly winners: Set<string>;
  /** It matches an object whose resolution is not decided: nothing is claimed about shadowing. */
  unsure: boolean;
  readonly refused: Names;
  readonly refusedKeys: Set<string>;
  readonly caught: Names;
}

interface TargetTally {
  readonly layer: PolicyLayer;
  readonly policy: string;
  readonly key: TargetKey;
  readonly target: string;
  readonly names: Names;
}

/** What the policies governing an object do there (`#governed`). */
interface Governed {
  readonly targets: readonly TargetTally[];
  readonly expires: Omit<Expiring, 'name'> | null;
  readonly never: readonly { readonly entry: NeverStricter; readonly own: number | undefined }[];
}

interface Expiring {
  readonly name: string;
  readonly layer: PolicyLayer;
  readonly policy: string;
  readonly expiresMs: number;
  readonly values: Readonly<Record<string, unknown>>;
  readonly kind: 'classic' | 'quorum';
  /** Under a tie: what each pair the broker may pick gives it; deleted only if every one deletes it. */
  readonly alternatives?: readonly Pick<Expiring, 'expiresMs' | 'values'>[];
}

interface NeverStricter {
  readonly policy: string;
  readonly key: string;
  readonly limit: number;
  governed: number;
  never: number;
  highestOwn: number;
  readonly names: Names;
}

/**
 * What a pass reads of one of the index's lists (the policies a name's prefix can reach, per kind
 * and layer), worked out once per list rather than once per object: each entry's tally, the keys
 * the kind refuses of it, and whether an unreadable pattern of it could decide anything.
 */
interface ListInfo {
  readonly tallies: readonly PolicyTally[];
  readonly refused: readonly (readonly string[])[];
  readonly applicable: readonly boolean[];
  /**
   * It matches every name the list is handed for, unread: a catch-all, or a pattern that finds
   * exactly the names starting with the literal prefix it is filed by (the index hands a policy
   * filed by prefix only for a name that starts with it).
   */
  readonly always: readonly boolean[];
  /** Some of its policies may catch a name (`PolicyTally.unanchored`). */
  readonly unanchored: boolean;
  /**
   * The positions of the policies whose pattern must be read for a name (not `always`), when
   * there are at most MAX_CHECKS of them: an object's `#mask` reads these alone.
   */
  readonly checks: readonly number[] | undefined;
  /** What reading an object does, by the other layer's list, then by both layers' masks (`Outcome`). */
  readonly outcomes: Map<ListInfo, Map<number, Outcome>>;
}

/** Policies of one list read per name for a mask: two bits each, a layer's mask within 26 bits. */
const MAX_CHECKS = 13;
/** The operator layer's mask below, the user layer's above, in one number under 2^52. */
const MASK_SPAN = 2 ** (2 * MAX_CHECKS);

/**
 * What reading one object does to the pass's tallies: the same for every object of the same kind
 * whose two lists are the same and whose patterns find it alike (`#mask`), so it is worked out
 * for the first of them (`#outcome`) and then only applied (`#apply`): the bench's 100,000 queues
 * come to a few thousand outcomes. What it changes once and for all (a tie found, a policy
 * unsure, the winners over a policy, the keys a type refuses) is done when it is worked out.
 */
interface Outcome {
  /** The lists of names the object joins: caught, lost, refused, tied. */
  readonly names: readonly Names[];
  /** The policies it counts as an applicable match of. */
  readonly applicable: readonly PolicyTally[];
  /**
   * Under a tie the broker breaks as it likes: every pair it may pick (at most MAX_ALTERNATIVES).
   * What holds for each of them holds (`#applyTied`); set only when `governing` is not.
   */
  readonly alternatives?: readonly Alternative[];
  /** The pair that governs it, decided; undefined: none, or not decided. */
  readonly governing:
    | {
        readonly kind: ObjectKind;
        readonly user: Policy | null;
        readonly operator: Policy | null;
        readonly pair: Pair;
        readonly root: ArgumentsNode;
      }
    | undefined;
}

/** One pair of policies the broker may pick for an object under a tie, with what it does by kind. */
interface Alternative {
  readonly user: Policy | null;
  readonly operator: Policy | null;
  readonly pair: Pair;
  readonly root: ArgumentsNode;
}

/** Pairs weighed for one tied object at most: past this, nothing is claimed for it. */
const MAX_ALTERNATIVES = 16;

/** One layer of the object being read: resolve.ts's LayerResolution, its lists not made anew. */
interface LayerScratch {
  list: readonly IndexedPolicy[];
  info: ListInfo;
  /** The positions in `list` of the policies whose pattern finds the name (highest priority first). */
  readonly hits: number[];
  count: number;
  /** The first applicable match's priority: the candidates'. */
  top: number | undefined;
  decided: boolean;
  /** A tie `#layer` found (its candidates, each of which the broker may pick); else empty. */
  readonly tied: Policy[];
}

const NO_INFO: ListInfo = {
  tallies: [],
  refused: [],
  applicable: [],
  always: [],
  unanchored: false,
  checks: [],
  outcomes: new Map(),
};

/** Whether a list's policy matches every name it is handed for (`ListInfo.always`). */
function alwaysMatches(e: IndexedPolicy): boolean {
  const { pattern } = e;
  if (matchesEveryName(pattern.source)) return true;
  const prefix = pattern.literalPrefix;
  return (
    prefix !== undefined &&
    !prefix.caseless &&
    pattern.startsWithOnly !== undefined &&
    pattern.startsWithOnly === prefix.text
  );
}

/** What the policies of one pair do to objects of a kind, by arguments; the parts the arguments do not change made once. */
interface Pair {
  /** Both layers merged. */
  effective: Record<string, EffectiveValue> | undefined;
  /** The user layer's alone (what an operator limit is weighed against). */
  own: Record<string, EffectiveValue> | undefined;
  /** The operator policy's numeric limits (merged by the lower value), each with its tally. */
  limits:
    | readonly { readonly key: string; readonly limit: number; readonly entry: NeverStricter }[]
    | undefined;
  readonly byKind: Map<ObjectKind, ArgumentsNode>;
}

/** Whether the object has arguments (most have none). */
function hasArguments(args: Readonly<Record<string, unknown>>): boolean {
  for (const _ in args) return true;
  return false;
}
const scratch = (): LayerScratch => ({
  list: [],
  info: NO_INFO,
  hits: [],
  count: 0,
  top: undefined,
  decided: true,
  tied: [],
});

/**
 * `#governed` of the objects whose arguments are the same keys, in the same order, with the same
 * values: one node per argument read, the next key and value each a Map lookup (no string made
 * per object; most objects have none or only `x-queue-type`). A value that is an object or an
 * array is looked up by its JSON, apart from the strings.
 */
interface ArgumentsNode {
  governed: Governed | undefined;
  next: Map<string, Map<unknown, ArgumentsNode>> | undefined;
  nextJson: Map<string, Map<string, ArgumentsNode>> | undefined;
}

const argumentsNode = (): ArgumentsNode => ({ governed: undefined, next: undefined, nextJson: undefined });

/** The node of `args` under `root`, made on the way. */
function argumentsNodeOf(root: ArgumentsNode, args: Readonly<Record<string, unknown>>): ArgumentsNode {
  let node = root;
  for (const k in args) {
    const v = args[k];
    let byValue: Map<unknown, ArgumentsNode> | undefined;
    let value: unknown = v;
    if (typeof v === 'object' && v !== null) {
      node.nextJson ??= new Map();
      byValue = node.nextJson.get(k) as Map<unknown, ArgumentsNode> | undefined;
      if (!byValue) {
        byValue = new Map();
        node.nextJson.set(k, byValue as Map<string, ArgumentsNode>);
      }
      value = JSON.stringify(v);
    } else {
      node.next ??= new Map();
      byValue = node.next.get(k);
      if (!byValue) {
        byValue = new Map();
        node.next.set(k, byValue);
      }
    }
    let child = byValue.get(value);
    if (!child) {
      child = argumentsNode();
      byValue.set(value, child);
    }
    node = child;
  }
  return node;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The layer whose value the object uses for a key (`both`: the one whose value holds). */
function sourceLayer(v: SourcedValue, operatorValue: unknown): PolicyLayer {
  if (v.from === 'policy') return 'user';
  if (v.from === 'operator-policy') return 'operator';
  return v.value === operatorValue ? 'operator' : 'user';
}

export interface LinterOptions {
  /**
   * Each object resolved in full and what the policies do to it worked out for it alone, its
   * arguments always read (no outcome shared by lists and masks, nothing by pair, kind and
   * arguments): the reference the shared reading is tested against.
   */
  readonly unshared?: boolean;
}

/**
 * The pass: `add` every object (queues and exchanges alike, in any order), `pending`/`settle` for
 * the patterns the backtracking engine decides, then `findings` once the live numbers and the
 * vhost's federation are known.
 */
export class Linter {
  readonly #set: PolicySet;
  readonly #cache: PatternCache;
  readonly #tallies = new Map<Policy, PolicyTally>();
  /** By the user policy, the operator policy, the kind, then the arguments (`ArgumentsNode`). */
  readonly #shared = new Map<Policy | null, Map<Policy | null, Pair>>();
  readonly #ties = new Map<
    string,
    { policies: string[]; priority: number; layer: PolicyLayer; names: Names }
  >();
  readonly #targets = new Map<string, TargetTally>();
  readonly #expiring: Expiring[] = [];
  readonly #expiringNames = new Set<string>();
  readonly #never = new Map<string, NeverStricter>();
  readonly #exchanges = new Set<string>();
  #parked: { object: LintObject; view: NameView }[] = [];
  #objects = 0;
  /** Reused by every object (`#read` is not re-entered): nothing of them is kept past it. */
  readonly #user = scratch();
  readonly #operator = scratch();
  readonly #lists = new Map<readonly IndexedPolicy[], ListInfo>();
  readonly #caughtScratch: PolicyTally[] = [];
  readonly #view: PassView = { latin1: '', shifted: '', pending: new Set<CompiledPattern>() };
  readonly #options: LinterOptions;
  /** Objects added and not read yet (`add`). */
  readonly #batch: LintObject[] = [];
  /** Some policy of the set sets `expires`: `wantsLive` must read the batch to answer. */
  readonly #mayExpire: boolean;

  constructor(set: PolicySet, cache: PatternCache, options: LinterOptions = {}) {
    this.#set = set;
    this.#cache = cache;
    this.#options = options;
    this.#mayExpire = [set.user, set.operator].some((index) =>
      [...index.byName.values()].some((e) => e.policy.definition.expires !== undefined),
    );
    for (const [layer, index] of [
      ['user', set.user],
      ['operator', set.operator],
    ] as const) {
      for (const e of index.byName.values()) {
        this.#tallies.set(e.policy, {
          layer,
          policy: e.policy,
          unanchored: !isAnchored(e.policy.pattern) && !matchesEveryName(e.policy.pattern),
          applicable: 0,
          lost: new Names(),
          winners: new Set(),
          unsure: false,
          refused: new Names(),
          refusedKeys: new Set(),
          caught: new Names(),
        });
      }
    }
  }

  /**
   * A linter of another policy set that has read what this one has: for objects none of the
   * policies that differ between the two sets can reach (a plan's end state beside now), whose
   * reading is then the same in both. Tallies of policies the other set does not hold are left
   * out; policies it holds anew start from nothing.
   */
  fork(set: PolicySet): Linter {
    this.#flush();
    const l = new Linter(set, this.#cache, this.#options);
    for (const [policy, t] of this.#tallies) {
      if (!l.#tallies.has(policy)) continue;
      l.#tallies.set(policy, {
        ...t,
        lost: t.lost.copy(),
        winners: new Set(t.winners),
        refused: t.refused.copy(),
        refusedKeys: new Set(t.refusedKeys),
        caught: t.caught.copy(),
      });
    }
    // #shared is a cache of what the policies do to an object: left empty, it is made again, and
    // finds the copied target and limit entries by their ids.
    for (const [id, t] of this.#ties) l.#ties.set(id, { ...t, names: t.names.copy() });
    for (const [id, t] of this.#targets) l.#targets.set(id, { ...t, names: t.names.copy() });
    l.#expiring.push(...this.#expiring);
    for (const n of this.#expiringNames) l.#expiringNames.add(n);
    for (const [id, n] of this.#never) l.#never.set(id, { ...n, names: n.names.copy() });
    for (const e of this.#exchanges) l.#exchanges.add(e);
    l.#parked = [...this.#parked];
    l.#objects = this.#objects;
    return l;
  }

  /** Objects read so far. */
  get objects(): number {
    this.#flush();
    return this.#objects;
  }

  /** The exchanges of the vhost seen so far (every one, once the pass is over). */
  get exchanges(): ReadonlySet<string> {
    this.#flush();
    return this.#exchanges;
  }

  /**
   * Whether this queue's live numbers are wanted: governed with `expires` (few, in practice). Reads
   * the batch first: asked of a queue just added, it reads the queues waiting with it too (the
   * inventory asks for a batch of queues at once: src/rabbit/inventory.ts).
   */
  wantsLive(name: string): boolean {
    if (!this.#mayExpire) return false;
    this.#flush();
    return this.#expiringNames.has(name);
  }

  /**
   * Reads `o`, now or with the next ones: objects are read in batches, so the pass runs in one
   * go over many, its code and tables warm, rather than between the parsing of each (measured in
   * bench/lint.ts: the pass cost about twice as much read object by object between the listing's
   * elements as in a loop of its own). Whatever reads the result reads the batch first.
   */
  add(o: LintObject): void {
    const batch = this.#batch;
    batch.push(o);
    if (batch.length >= BATCH) this.#flush();
  }

  /** The objects waiting in the batch, read. */
  #flush(): void {
    const batch = this.#batch;
    if (batch.length === 0) return;
    try {
      for (let i = 0; i < batch.length; i++) this.#addNow(batch[i] as LintObject);
    } finally {
      batch.length = 0;
    }
  }

  #addNow(o: LintObject): void {
    if (o.kind === 'exchange') this.#exchanges.add(o.name);
    // One view and pending set for every object, copied only for an object parked (few): a view
    // and a set per object were a good part of what the pass allocated.
    const view = refillView(this.#view, o.name);
    if (!this.#read(o, view, true))
      this.#parked.push({ object: o, view: { ...view, pending: new Set(view.pending) } });
  }

  /** The patterns the backtracking engine is to decide, and for which names, before `settle()`. */
  pending(): PendingVerdicts {
    this.#flush();
    return pendingVerdicts(this.#parked.map((p) => p.view));
  }

  /** The parked objects read again, with the verdicts in. */
  settle(): void {
    this.#flush();
    const parked = this.#parked;
    this.#parked = [];
    for (const { object } of parked) this.#read(object, nameView(object.name), false);
  }

  /** `#lists`' entry for one of the index's lists. */
  #info(index: PolicyIndex, kind: KindOrUnknown, list: readonly IndexedPolicy[]): ListInfo {
    let info = this.#lists.get(list);
    if (!info) {
      const tallies = list.map((e) => this.#tally(e.policy));
      const always = list.map(alwaysMatches);
      const checks = always.flatMap((a, i) => (a ? [] : [i]));
      info = {
        tallies,
        refused: list.map((e) => index.refused(e, kind)),
        // It decides nothing when the kind refuses one of its keys (resolve.ts: `decided`).
        applicable: list.map((e) => index.applicable(e.name, kind) !== undefined),
        always,
        unanchored: tallies.some((t) => t.unanchored),
        checks: checks.length <= MAX_CHECKS ? checks : undefined,
        outcomes: new Map(),
      };
      this.#lists.set(list, info);
    }
    return info;
  }

  /** The list of `index` that `name` reaches, with its `ListInfo`, into `into`. */
  #list(index: PolicyIndex, kind: KindOrUnknown, name: string, into: LayerScratch): void {
    const list = index.reachingFor(kind, name);
    if (list === into.list) return;
    into.info = this.#info(index, kind, list);
    into.list = list;
  }

  /**
   * Which of the list's `checks` find the name, and which of those found catch it (their anchored
   * form does not find it), two bits each; -1 when that cannot stand for the object (too many
   * checks, a pattern not read for this name): it is then resolved in full.
   */
  #mask(res: LayerScratch, view: NameView): number {
    const { list, info } = res;
    const checks = info.checks;
    if (checks === undefined) return -1;
    let mask = 0;
    for (let j = 0; j < checks.length; j++) {
      const i = checks[j] as number;
      const hit = (list[i] as IndexedPolicy).pattern.match(view);
      if (hit === false) continue;
      if (hit !== true) return -1;
      mask += 2 ** (2 * j);
      const tally = info.tallies[i] as PolicyTally;
      if (!tally.unanchored) continue;
      const anchored = this.#anchored(tally).match(view);
      if (anchored === false) mask += 2 ** (2 * j + 1);
      else if (anchored !== true) return -1;
    }
    return mask;
  }

  /**
   * One layer of one object resolved into `into` (resolve.ts's rule, written out for the pass: no
   * list made per object): its matches, the candidates' priority (`top`, undefined: none
   * applicable) and whether it is decided.
   */
  #resolveLayer(view: NameView, into: LayerScratch): void {
    const { list, info } = into;
    const hits = into.hits;
    const always = info.always;
    let count = 0;
    let top: number | undefined;
    let unreadableTop: number | undefined;
    for (let i = 0; i < list.length; i++) {
      const e = list[i] as IndexedPolicy;
      const hit = always[i] === true || e.pattern.match(view);
      if (hit === 'undecidable') {
        if (info.applicable[i] && (unreadableTop === undefined || e.priority > unreadableTop))
          unreadableTop = e.priority;
      } else if (hit) {
        hits[count++] = i;
        if (top === undefined && (info.refused[i] as readonly string[]).length === 0) top = e.priority;
      }
    }
    into.count = count;
    into.top = top;
    into.decided = unreadableTop === undefined || (top !== undefined && unreadableTop < top);
  }

  /**
   * Reads one object; false (nothing kept) when a pattern waits for the backtracking engine. Its
   * outcome is looked up by its lists and masks, and worked out from its full resolution the
   * first time (every time `unshared`, or when a mask cannot stand for it).
   */
  #read(o: LintObject, view: NameView, collect: boolean): boolean {
    const name = o.name;
    if (name.length > MAX_NAME_BYTES / 3) {
      const bytes = utf8Length(name);
      if (bytes > MAX_NAME_BYTES) throw new NameTooLongError(bytes);
    }
    const kind = o.kind;
    const u = this.#user;
    const op = this.#operator;
    this.#list(this.#set.user, kind, name, u);
    this.#list(this.#set.operator, kind, name, op);
    let outcome: Outcome | undefined;
    let byMask: Map<number, Outcome> | undefined;
    let key = -1;
    if (!this.#options.unshared) {
      const userMask = this.#mask(u, view);
      const operatorMask = userMask < 0 ? -1 : this.#mask(op, view);
      if (operatorMask >= 0) {
        key = userMask * MASK_SPAN + operatorMask;
        byMask = u.info.outcomes.get(op.info);
        if (!byMask) {
          byMask = new Map();
          u.info.outcomes.set(op.info, byMask);
        }
        outcome = byMask.get(key);
      }
    }
    if (outcome === undefined) {
      this.#resolveLayer(view, u);
      this.#resolveLayer(view, op);
      const caught = this.#caughtScratch;
      if (caught.length > 0) caught.length = 0;
      this.#caught(u, view, caught);
      this.#caught(op, view, caught);
      if (collect && view.pending && view.pending.size > 0) return false;
      outcome = this.#outcome(kind, caught);
      byMask?.set(key, outcome);
    }
    this.#apply(outcome, o);
    return true;
  }

  /** The outcome of the object resolved in the scratch layers, `caught` its catching policies. */
  #outcome(kind: KindOrUnknown, caught: readonly PolicyTally[]): Outcome {
    const names: Names[] = caught.map((t) => t.caught);
    const applicable: PolicyTally[] = [];
    const user = this.#layer('user', this.#user, kind !== null, names, applicable);
    const operator = this.#layer('operator', this.#operator, kind !== null, names, applicable);
    if (kind === null || (user === null && operator === null))
      return { names, applicable, governing: undefined };
    if (user === undefined || operator === undefined) {
      const alternatives = this.#alternatives(kind, user, operator);
      return alternatives
        ? { names, applicable, alternatives, governing: undefined }
        : { names, applicable, governing: undefined };
    }
    const { pair, root } = this.#pair(kind, user, operator);
    return { names, applicable, governing: { kind, user, operator, pair, root } };
  }

  /**
   * The pairs the broker may pick when a layer is a tie (`#layer`'s `tied`) and the other is
   * decided or a tie too; undefined when a layer is not decided for another reason (a pattern not
   * read, a type unknown) or there are too many.
   */
  #alternatives(kind: ObjectKind, user: Policy | null | undefined, operator: Policy | null | undefined) {
    const users = user === undefined ? this.#user.tied : [user];
    const operators = operator === undefined ? this.#operator.tied : [operator];
    if (users.length === 0 || operators.length === 0 || users.length * operators.length > MAX_ALTERNATIVES)
      return undefined;
    const out: Alternative[] = [];
    for (const u of users)
      for (const op of operators) out.push({ user: u, operator: op, ...this.#pair(kind, u, op) });
    return out;
  }

  /** One object counted as its outcome says, and what its governing pair does to it. */
  #apply(outcome: Outcome, o: LintObject): void {
    const name = o.name;
    this.#objects++;
    const { names, applicable, governing } = outcome;
    for (let i = 0; i < names.length; i++) (names[i] as Names).add(name);
    for (let i = 0; i < applicable.length; i++) (applicable[i] as PolicyTally).applicable++;
    if (governing === undefined) {
      if (outcome.alternatives) this.#applyTied(o, outcome.alternatives);
      return;
    }
    const { kind, user, operator, pair, root } = governing;
    // Shared by the objects whose arguments are the same (most have none, or only `x-queue-type`).
    const node = hasArguments(o.arguments) ? argumentsNodeOf(root, o.arguments) : root;
    node.governed ??= this.#governed(o, kind, user, operator, pair);
    const g = node.governed;
    for (const t of g.targets) t.names.add(name);
    if (g.expires) {
      this.#expiring.push({ name, ...g.expires });
      this.#expiringNames.add(name);
    }
    for (const n of g.never) {
      n.entry.governed++;
      if (n.own === undefined) continue;
      n.entry.never++;
      n.entry.highestOwn = Math.max(n.entry.highestOwn, n.own);
      n.entry.names.add(name);
    }
  }

  /**
   * A tied object: whichever pair the broker picks, a finding that holds for every one of them
   * holds (a target every pair names missing, the same policy's `expires` deleting it under each,
   * an operator limit above what each would use without it); one that holds for some is not claimed.
   */
  #applyTied(o: LintObject, alternatives: readonly Alternative[]): void {
    const name = o.name;
    const kind = o.kind as ObjectKind;
    const all = alternatives.map(({ user, operator, pair, root }) => {
      const node = hasArguments(o.arguments) ? argumentsNodeOf(root, o.arguments) : root;
      node.governed ??= this.#governed(o, kind, user, operator, pair);
      return node.governed;
    });
    const [first] = all;
    if (!first) return;
    for (const t of first.targets) if (all.every((g) => g.targets.includes(t))) t.names.add(name);
    const e = first.expires;
    if (e && all.every((g) => g.expires?.layer === e.layer && g.expires.policy === e.policy)) {
      const alternatives = all.map((g) => ({
        expiresMs: g.expires?.expiresMs ?? e.expiresMs,
        values: g.expires?.values ?? e.values,
      }));
      this.#expiring.push({ name, ...e, alternatives });
      this.#expiringNames.add(name);
    }
    for (const n of first.never) {
      const each = all.map((g) => g.never.find((x) => x.entry === n.entry));
      // Another operator policy in some pair: this one's limit may not apply at all.
      if (each.some((x) => x === undefined)) continue;
      n.entry.governed++;
      const own = each.map((x) => x?.own);
      if (own.some((v) => v === undefined)) continue;
      n.entry.never++;
      n.entry.highestOwn = Math.max(n.entry.highestOwn, ...(own as number[]));
      n.entry.names.add(name);
    }
  }

  /** An unanchored policy's pattern anchored at the start, compiled once. */
  #anchored(tally: PolicyTally): CompiledPattern {
    tally.anchored ??= this.#cache.get(anchoredForm(tally.policy.pattern));
    return tally.anchored;
  }

  /** The tallies of the layer's matches whose unanchored pattern catches the name, added to `caught`. */
  #caught(res: LayerScratch, view: NameView, caught: PolicyTally[]): void {
    if (!res.info.unanchored) return;
    for (let h = 0; h < res.count; h++) {
      const tally = res.info.tallies[res.hits[h] as number] as PolicyTally;
      if (!tally.unanchored) continue;
      if (this.#anchored(tally).match(view) === false) caught.push(tally);
    }
  }

  #tally(policy: Policy): PolicyTally {
    const t = this.#tallies.get(policy);
    // Unreachable: every match is a policy of the set.
    if (!t) throw new Error(`lint: no policy ${policy.name}`);
    return t;
  }

  /**
   * One layer's matches of one object, into its outcome: the lists of names it joins (`names`),
   * the policies it is an applicable match of; the policy that governs it (null: none), or
   * undefined when that is not decided (a tie, an unreadable pattern, an unknown type).
   */
  #layer(
    layer: PolicyLayer,
    res: LayerScratch,
    known: boolean,
    names: Names[],
    applicable: PolicyTally[],
  ): Policy | null | undefined {
    const decided = known && res.decided;
    const { list, info, hits, count, top, tied: candidatesOf } = res;
    if (candidatesOf.length > 0) candidatesOf.length = 0;
    // The candidates: the applicable matches of the top priority (matches come highest first).
    let first = -1;
    let candidates = 0;
    if (top !== undefined) {
      for (let h = 0; h < count; h++) {
        const i = hits[h] as number;
        if ((list[i] as IndexedPolicy).priority < top) break;
        if ((info.refused[i] as readonly string[]).length > 0) continue;
        if (first < 0) first = h;
        candidates++;
      }
    }
    if (decided && candidates > 1) {
      // The engine's candidates all reach this object; the rule `policies` marks ties by, all the same.
      const head = (list[hits[first] as number] as IndexedPolicy).policy;
      const tied: Policy[] = [];
      for (let h = first; h < count; h++) {
        const i = hits[h] as number;
        const p = (list[i] as IndexedPolicy).policy;
        if (p.priority < (top as number)) break;
        if ((info.refused[i] as readonly string[]).length === 0 && scopesMeet(head.applyTo, p.applyTo))
          tied.push(p);
      }
      if (tied.length > 1) {
        const policies = tied.map((p) => p.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const key = `${layer}\u0000${policies.join('\u0000')}`;
        let tie = this.#ties.get(key);
        if (!tie) {
          tie = { policies, priority: tied[0]?.priority ?? 0, layer, names: new Names() };
          this.#ties.set(key, tie);
        }
        names.push(tie.names);
      }
    }
    for (let h = 0; h < count; h++) {
      const i = hits[h] as number;
      const t = info.tallies[i] as PolicyTally;
      const keys = info.refused[i] as readonly string[];
      if (keys.length > 0) {
        if (!known) continue;
        names.push(t.refused);
        for (const k of keys) t.refusedKeys.add(k);
        continue;
      }
      applicable.push(t);
      if (!decided) t.unsure = true;
      else if ((list[i] as IndexedPolicy).priority !== top) {
        // Below the top priority: not a candidate (every applicable match of the top priority is).
        names.push(t.lost);
        for (let c = first; c < count && t.winners.size < LISTED_OBJECTS; c++) {
          const j = hits[c] as number;
          const w = list[j] as IndexedPolicy;
          if (w.priority < (top as number)) break;
          if ((info.refused[j] as readonly string[]).length === 0) t.winners.add(w.name);
        }
      }
    }
    if (decided && candidates > 1) {
      for (let h = first; h < count; h++) {
        const i = hits[h] as number;
        const p = (list[i] as IndexedPolicy).policy;
        if (p.priority < (top as number)) break;
        if ((info.refused[i] as readonly string[]).length === 0) candidatesOf.push(p);
      }
    }
    if (!decided || candidates !== 1) return decided && candidates === 0 ? null : undefined;
    return (list[hits[first] as number] as IndexedPolicy).policy;
  }

  /**
   * The pair's entry and its root for the kind: what the pair does is made once per kind and
   * arguments (most objects share both: every quorum queue has the same `x-queue-type`). Made
   * anew each time `unshared`.
   */
  #pair(kind: ObjectKind, user: Policy | null, operator: Policy | null): { pair: Pair; root: ArgumentsNode } {
    if (this.#options.unshared)
      return {
        pair: { effective: undefined, own: undefined, limits: undefined, byKind: new Map() },
        root: argumentsNode(),
      };
    let byOperator = this.#shared.get(user);
    if (!byOperator) {
      byOperator = new Map();
      this.#shared.set(user, byOperator);
    }
    let pair = byOperator.get(operator);
    if (!pair) {
      pair = { effective: undefined, own: undefined, limits: undefined, byKind: new Map() };
      byOperator.set(operator, pair);
    }
    let root = pair.byKind.get(kind);
    if (!root) {
      root = argumentsNode();
      pair.byKind.set(kind, root);
    }
    return { pair, root };
  }

  /**
   * What the two policies governing an object do there: the targets they name (the values it
   * uses: both layers merged, its own arguments on top), the `expires` that may delete it, and
   * each operator limit against what it would use without the operator policy.
   */
  #governed(
    o: LintObject,
    kind: ObjectKind,
    user: Policy | null,
    operator: Policy | null,
    pair: Pair,
  ): Governed {
    const version = this.#set.version;
    pair.effective ??= effectiveDefinition(user?.definition, operator?.definition, version);
    // No arguments: the policies' values as they are (`withArguments` would copy them).
    const sourced: Readonly<Record<string, SourcedValue>> =
      hasArguments(o.arguments) || this.#options.unshared
        ? withArguments(pair.effective, o.arguments, kind, version)
        : pair.effective;
    const of = (layer: PolicyLayer) => (layer === 'user' ? user : operator);
    const targets: TargetTally[] = [];
    for (const key of targetKeys(kind)) {
      const v = sourced[key];
      if (v === undefined || typeof v.value !== 'string' || v.from === 'arguments') continue;
      const layer = sourceLayer(v, operator?.definition[key]);
      const policy = of(layer);
      if (!policy) continue;
      const id = `${layer}\u0000${policy.name}\u0000${key}\u0000${v.value}`;
      let t = this.#targets.get(id);
      if (!t) {
        t = { layer, policy: policy.name, key, target: v.value, names: new Names() };
        this.#targets.set(id, t);
      }
      targets.push(t);
    }
    if (kind !== 'classic' && kind !== 'quorum') return { targets, expires: null, never: [] };
    let expires: Governed['expires'] = null;
    const e = sourced.expires;
    const expiresMs = num(e?.value);
    if (e !== undefined && expiresMs !== undefined && e.from !== 'arguments') {
      const layer = sourceLayer(e, operator?.definition.expires);
      const policy = of(layer);
      const values: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(sourced)) values[k] = v.value;
      if (policy) expires = { layer, policy: policy.name, expiresMs, values, kind };
    }
    return { targets, expires, never: operator ? this.#neverStricter(o, kind, user, operator, pair) : [] };
  }

  /** Each limit of the operator policy against what the object would use without it (`own`: it never bites). */
  #neverStricter(
    o: LintObject,
    kind: 'classic' | 'quorum',
    user: Policy | null,
    operator: Policy,
    pair: Pair,
  ): Governed['never'] {
    const version = this.#set.version;
    pair.limits ??= this.#limits(operator);
    if (pair.limits.length === 0) return [];
    pair.own ??= effectiveDefinition(user?.definition, undefined, version);
    const own: Readonly<Record<string, SourcedValue>> =
      hasArguments(o.arguments) || this.#options.unshared
        ? withArguments(pair.own, o.arguments, kind, version)
        : pair.own;
    return pair.limits.map(({ key, limit, entry }) => {
      const mine = num(own[key]?.value);
      const never = mine !== undefined && mine !== limit && stricterLimit(key, mine, limit, version) === mine;
      return { entry, own: never ? mine : undefined };
    });
  }

  /** The operator policy's numeric limits merged by the lower value, each with its `#never` entry. */
  #limits(operator: Policy): NonNullable<Pair['limits']> {
    const out: { key: string; limit: number; entry: NeverStricter }[] = [];
    for (const [key, raw] of Object.entries(operator.definition)) {
      const limit = num(raw);
      if (limit === undefined || keySpec(key)?.merge !== 'min') continue;
      const id = `${operator.name}\u0000${key}`;
      let entry = this.#never.get(id);
      if (!entry) {
        entry = {
          policy: operator.name,
          key,
          limit,
          governed: 0,
          never: 0,
          highestOwn: -Infinity,
          names: new Names(),
        };
        this.#never.set(id, entry);
      }
      out.push({ key, limit, entry });
    }
    return out;
  }

  /**
   * Each tally of the pass (a policy's matches, a tie, a target, an operator limit, a policy's
   * expiring queues) with the policies whose matches feed it (`layer:name`) and a string equal for
   * two passes exactly when what it holds is: two passes fed the same objects in the same order
   * with equal states find the same findings from it (src/plan/findings.ts reads which tallies a
   * plan's changes move). Left out: what only a finding's wording reads (shadowed's `by`,
   * cannot-govern's `keys`, operator-never-stricter's `highestOwn`), which moves neither whether
   * it is found nor which objects it names.
   */
  tallyStates(): Map<string, { readonly policies: readonly string[]; readonly state: string }> {
    this.#flush();
    const out = new Map<string, { policies: string[]; state: string }>();
    const names = (n: Names) => `${n.count}\u0001${n.list.join('\u0001')}`;
    for (const t of this.#tallies.values()) {
      const state = [t.applicable, t.unsure, names(t.lost), names(t.refused), names(t.caught)].join('\u0002');
      out.set(`p\u0000${t.layer}\u0000${t.policy.name}`, {
        policies: [`${t.layer}:${t.policy.name}`],
        state,
      });
    }
    for (const [id, t] of this.#ties)
      out.set(`t\u0000${id}`, { policies: t.policies.map((p) => `${t.layer}:${p}`), state: names(t.names) });
    for (const [id, t] of this.#targets)
      if (t.names.count > 0)
        out.set(`g\u0000${id}`, { policies: [`${t.layer}:${t.policy}`], state: names(t.names) });
    for (const e of this.#expiring) {
      const id = `e\u0000${e.layer}\u0000${e.policy}`;
      const entry = JSON.stringify([e.name, e.expiresMs, e.kind, e.values, e.alternatives ?? null]);
      const had = out.get(id);
      if (had) had.state += `\u0002${entry}`;
      else out.set(id, { policies: [`${e.layer}:${e.policy}`], state: entry });
    }
    for (const [id, n] of this.#never)
      if (n.governed > 0)
        out.set(`n\u0000${id}`, {
          policies: [`operator:${n.policy}`],
          state: [n.governed, n.never, names(n.names)].join('\u0002'),
        });
    return out;
  }

  /**
   * Every finding, the most severe first (then by kind, as LINT_KINDS lists them; the most objects
   * first; by policy). `live`: the queues' numbers by name (`null`: none reported; absent: not
   * read); `world`: the vhost's federation (`exchanges` as seen by the pass when not given).
   */
  findings(live: ReadonlyMap<string, LiveQueue | null> | null, world: Partial<World>, at: number): Finding[] {
    this.#flush();
    const out: Finding[] = [];
    const full: World = {
      exchanges: world.exchanges === undefined ? this.#exchanges : world.exchanges,
      upstreams: world.upstreams ?? null,
      upstreamSets: world.upstreamSets ?? null,
      links: world.links ?? null,
    };
    const base = (layer: PolicyLayer, policy: string, names: Names) => ({
      policy,
      operator: layer === 'operator',
      objects: names.sorted,
      objectCount: names.count,
    });
    for (const t of this.#ties.values()) {
      out.push({
        kind: 'tie',
        severity: SEVERITY_OF.tie,
        ...base(t.layer, t.policies[0] ?? '', t.names),
        policies: t.policies,
        priority: t.priority,
      });
    }
    for (const t of this.#targets.values()) {
      // Made for a tie's pairs (`#applyTied`) and named by none of its objects: nothing found.
      if (t.names.count === 0 || targetExists(t.key, t.target, full) !== false) continue;
      out.push({
        kind: 'missing-target',
        severity: SEVERITY_OF['missing-target'],
        ...base(t.layer, t.policy, t.names),
        key: t.key,
        target: t.target,
      });
    }
    out.push(...this.#expiresIdle(live, full, at));
    for (const t of this.#tallies.values()) {
      const b = (names: Names) => base(t.layer, t.policy.name, names);
      if (t.refused.count > 0)
        out.push({
          kind: 'cannot-govern',
          severity: SEVERITY_OF['cannot-govern'],
          ...b(t.refused),
          keys: [...t.refusedKeys].sort(),
        });
      if (t.caught.count > 0)
        out.push({
          kind: 'unanchored',
          severity: SEVERITY_OF.unanchored,
          ...b(t.caught),
          pattern: t.policy.pattern,
        });
      if (t.applicable > 0 && !t.unsure && t.lost.count === t.applicable)
        out.push({
          kind: 'shadowed',
          severity: SEVERITY_OF.shadowed,
          ...b(t.lost),
          by: [...t.winners].sort(),
        });
    }
    for (const n of this.#never.values()) {
      if (n.governed === 0 || n.never !== n.governed) continue;
      out.push({
        kind: 'operator-never-stricter',
        severity: SEVERITY_OF['operator-never-stricter'],
        ...base('operator', n.policy, n.names),
        key: n.key,
        limit: n.limit,
        highestOwn: n.highestOwn,
      });
    }
    return out.sort(bySeverity);
  }

  #expiresIdle(live: ReadonlyMap<string, LiveQueue | null> | null, world: World, at: number): Finding[] {
    if (live === null) return [];
    const byPolicy = new Map<
      string,
      { layer: PolicyLayer; policy: string; expiresMs: number; messages: number; by: string; names: Names }
    >();
    for (const e of this.#expiring) {
      const now = live.get(e.name) ?? null;
      if (now === null) continue;
      // Under a tie, deleted only if every pair the broker may pick deletes it (the latest then).
      let expiresMs = e.expiresMs;
      let deleted: { messages: number; by: string } | undefined;
      for (const way of e.alternatives ?? [e]) {
        const h = hazardsOf({ kind: e.kind, values: way.values, now, at }, world).find(
          (x) => x.effect === 'expires-idle' && x.messages > 0,
        );
        if (h?.effect !== 'expires-idle') {
          deleted = undefined;
          break;
        }
        expiresMs = Math.max(expiresMs, way.expiresMs);
        if (!deleted || h.by > deleted.by) deleted = h;
      }
      if (!deleted) continue;
      const id = `${e.layer}\u0000${e.policy}`;
      let g = byPolicy.get(id);
      if (!g) {
        g = { layer: e.layer, policy: e.policy, expiresMs, messages: 0, by: deleted.by, names: new Names() };
        byPolicy.set(id, g);
      }
      g.messages += deleted.messages;
      if (deleted.by < g.by) g.by = deleted.by;
      g.expiresMs = Math.min(g.expiresMs, expiresMs);
      g.names.add(e.name);
    }
    return [...byPolicy.values()].map((g) => ({
      kind: 'expires-idle' as const,
      severity: SEVERITY_OF['expires-idle'],
      policy: g.policy,
      operator: g.layer === 'operator',
      objects: g.names.sorted,
      objectCount: g.names.count,
      expiresMs: g.expiresMs,
      messages: g.messages,
      by: g.by,
    }));
  }
}

function bySeverity(a: Finding, b: Finding): number {
  return (
    SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity) ||
    LINT_KINDS.indexOf(a.kind) - LINT_KINDS.indexOf(b.kind) ||
    b.objectCount - a.objectCount ||
    (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0) ||
    Number(a.operator) - Number(b.operator)
  );
}
