// Over 400 lines: the pass is one loop over the objects whose steps share its reused scratch, caches and outcomes.
import type { LiveQueue, World } from '../impact/impact.ts';
import {
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
import { NameTooLongError, type PolicySet } from '../resolve.ts';
import { MAX_NAME_BYTES, type ObjectKind, type Policy, utf8Length } from '../types.ts';
import { bySeverity, type Finding, LINT_RULES, type LintFact } from './kinds.ts';
import {
  type Count,
  type KindTallies,
  type LintContext,
  type LintObject,
  type Names,
  policiesOf,
  type TallyStates,
} from './lintTypes.ts';
import {
  candidates,
  catching,
  type LayerScratch,
  type ListInfo,
  listInfo,
  MASK_SPAN,
  maskOf,
  type PolicyEntry,
  resolveLayer,
  scratch,
} from './reading.ts';
import {
  type Alternative,
  argumentsNodeOf,
  governedReading,
  hasArguments,
  type Outcome,
  type Pair,
  Pairs,
} from './sharing.ts';

export { type Finding, LINT_KINDS, type LintFact, type LintKind, SEVERITY_OF } from './kinds.ts';
export { atLeastAsSevere, LISTED_OBJECTS, type LintObject, SEVERITIES, type Severity } from './lintTypes.ts';

/**
 * `lint`: every surprise a vhost's policies hold for the objects there now, in one pass over
 * them. Pure: the policy set, each object (with its live numbers where they matter) and what the
 * vhost holds come in; findings come out, the most severe first. Each kind is the broker's rule
 * read the other way round (resolve.ts: the highest applicable match wins alone; keys.ts: a key
 * the type refuses makes the policy inapplicable; impact.ts: what `expires` deletes, which targets
 * exist), proven by test/integration/lint.test.ts against 3.10.8, 4.0.5 and 4.3.6, where the
 * broker is asked what governs each object.
 *
 * This module is the pass: it reads each object once, works out its outcome (reading.ts) and
 * hands it to the kinds (kinds.ts, one module each), which keep their tallies and make their
 * findings. A kind is asked when an outcome is worked out and when a governing pair's effect is,
 * never per object: per object the pass only adds the name to the lists the outcome names and
 * applies each kind's effect, so the loop stays the same for every object and allocates nothing.
 *
 * Not claimed: an object of a queue type this bot does not know, or left undecided by a pattern it
 * cannot read, counts for no tie, no shadowing and no hazard (only for `unanchored`, which reads
 * the pattern alone); a policy whose matches include such an object is not called shadowed.
 */

/** Objects read in one go (`Linter.add`). */
const BATCH = 1024;

/** A kind's tallies as the pass holds them. */
type Tallies = KindTallies<LintFact>;
/** One whose tallies read the governing pair. */
type GoverningTallies = Tallies & Required<Pick<Tallies, 'governed' | 'apply' | 'applyTied'>>;

/** The policies of an object no policy governs. */
const NONE = { user: null, operator: null } as const;

/** A governing pair that does nothing any kind keeps: most of them. */
const NOTHING: readonly unknown[] = [];

export interface LinterOptions {
  /**
   * Each object resolved in full and what the policies do to it worked out for it alone, its
   * arguments always read (no outcome shared by lists and masks, nothing by pair, kind and
   * arguments): the reference the shared reading is tested against.
   */
  readonly unshared?: boolean;
  /** `--target-version` and the deprecated features the broker reports (the upgrade kind). */
  readonly context?: LintContext;
}

/**
 * The pass: `add` every object (queues and exchanges alike, in any order), `pending`/`settle` for
 * the patterns the backtracking engine decides, then `findings` once the live numbers and the
 * vhost's federation are known.
 */
export class Linter {
  readonly #set: PolicySet;
  readonly #cache: PatternCache;
  readonly #options: LinterOptions;
  /** Every kind's tallies, in LINT_RULES' order; then those asked per outcome, per governing pair, about live numbers. */
  #kinds: readonly Tallies[] = [];
  #outcomeKinds: readonly Tallies[] = [];
  #governingKinds: readonly GoverningTallies[] = [];
  #liveKinds: readonly Tallies[] = [];
  #objectKinds: readonly Tallies[] = [];
  readonly #entries = new Map<Policy, PolicyEntry>();
  /** By the user policy, the operator policy, the kind, then the arguments. */
  readonly #pairs: Pairs;
  readonly #exchanges = new Set<string>();
  #parked: { object: LintObject; view: NameView }[] = [];
  #objects = 0;
  /** Reused by every object (`#read` is not re-entered): nothing of them is kept past it. */
  readonly #user = scratch('user');
  readonly #operator = scratch('operator');
  readonly #lists = new Map<readonly IndexedPolicy[], ListInfo>();
  readonly #view: PassView = { latin1: '', shifted: '', pending: new Set<CompiledPattern>() };
  /** Objects added and not read yet (`add`). */
  readonly #batch: LintObject[] = [];

  constructor(set: PolicySet, cache: PatternCache, options: LinterOptions = {}) {
    this.#set = set;
    this.#cache = cache;
    this.#options = options;
    this.#pairs = new Pairs(options.unshared === true);
    for (const { layer, policy } of policiesOf(set))
      this.#entries.set(policy, {
        layer,
        policy,
        unanchored: !isAnchored(policy.pattern) && !matchesEveryName(policy.pattern),
      });
    this.#useKinds(LINT_RULES.map((r) => r.tallies(set, options.context ?? {}) as Tallies));
  }

  #useKinds(kinds: readonly Tallies[]): void {
    this.#kinds = kinds;
    this.#outcomeKinds = kinds.filter((k) => k.outcome !== undefined);
    this.#governingKinds = kinds.filter((k): k is GoverningTallies => k.governed !== undefined);
    this.#liveKinds = kinds.filter((k) => k.mayWantLive === true);
    this.#objectKinds = kinds.filter((k) => k.object !== undefined);
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
    // #pairs is a cache of what the policies do to an object: left empty, it is made again, and
    // the kinds find their copied tallies by their ids.
    l.#useKinds(this.#kinds.map((k) => k.fork(set)));
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
    if (this.#liveKinds.length === 0) return false;
    this.#flush();
    return this.#liveKinds.some((k) => k.wantsLive?.(name) === true);
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

  #entry = (policy: Policy): PolicyEntry => {
    const e = this.#entries.get(policy);
    // Unreachable: every match is a policy of the set.
    if (!e) throw new Error(`lint: no policy ${policy.name}`);
    return e;
  };

  /** The list of `index` that `name` reaches, with its `ListInfo`, into `into`. */
  #list(index: PolicyIndex, kind: KindOrUnknown, name: string, into: LayerScratch): void {
    const list = index.reachingFor(kind, name);
    into.kind = kind;
    if (list === into.list) return;
    let info = this.#lists.get(list);
    if (!info) {
      info = listInfo(index, kind, list, this.#entry);
      this.#lists.set(list, info);
    }
    into.info = info;
    into.refused = info.refused;
    into.list = list;
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
      const userMask = maskOf(u, view, this.#cache);
      const operatorMask = userMask < 0 ? -1 : maskOf(op, view, this.#cache);
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
      resolveLayer(view, u);
      resolveLayer(view, op);
      catching(u, view, this.#cache);
      catching(op, view, this.#cache);
      if (collect && view.pending && view.pending.size > 0) return false;
      outcome = this.#outcome(kind);
      byMask?.set(key, outcome);
    }
    this.#apply(outcome, o);
    return true;
  }

  /** The outcome of the object resolved in the scratch layers: each kind reads each layer. */
  #outcome(kind: KindOrUnknown): Outcome {
    const sink = { names: [] as Names[], counts: [] as Count[] };
    const known = kind !== null;
    const user = candidates(this.#user, known);
    const operator = candidates(this.#operator, known);
    for (const layer of [this.#user, this.#operator])
      for (const k of this.#outcomeKinds) k.outcome?.(layer, sink);
    const { names, counts } = sink;
    if (user === null && operator === null) return { names, counts, governing: undefined, none: true };
    if (kind === null) return { names, counts, governing: undefined };
    if (user === undefined || operator === undefined) {
      // Under a tie, the pairs of its candidates (`tied`) and the other layer's winner or candidates.
      const users = user === undefined ? this.#user.tied : [user];
      const operators = operator === undefined ? this.#operator.tied : [operator];
      const alternatives = this.#pairs.alternatives(kind, users, operators);
      return alternatives
        ? { names, counts, alternatives, governing: undefined }
        : { names, counts, governing: undefined };
    }
    const { pair, root } = this.#pairs.of(kind, user, operator);
    return { names, counts, governing: { kind, user, operator, pair, root } };
  }

  /** One object counted as its outcome says, and what its governing pair does to it. */
  #apply(outcome: Outcome, o: LintObject): void {
    const name = o.name;
    this.#objects++;
    const { names, counts, governing } = outcome;
    for (let i = 0; i < names.length; i++) (names[i] as Names).add(name);
    for (let i = 0; i < counts.length; i++) (counts[i] as Count).n++;
    const objectKinds = this.#objectKinds;
    if (objectKinds.length > 0) {
      const pair = governing ?? (outcome.none ? NONE : undefined);
      for (let i = 0; i < objectKinds.length; i++) objectKinds[i]?.object?.(o, pair);
    }
    if (governing === undefined) {
      if (outcome.alternatives) this.#applyTied(o, outcome.alternatives);
      return;
    }
    const { root } = governing;
    // Shared by the objects whose arguments are the same (most have none, or only `x-queue-type`).
    const node = hasArguments(o.arguments) ? argumentsNodeOf(root, o.arguments) : root;
    node.governed ??= this.#governed(o, governing.kind, governing.user, governing.operator, governing.pair);
    const effects = node.governed;
    const kinds = this.#governingKinds;
    for (let i = 0; i < effects.length; i++) {
      const e = effects[i];
      if (e !== undefined) (kinds[i] as GoverningTallies).apply(e, name);
    }
  }

  /**
   * A tied object: whichever pair the broker picks, a finding that holds for every one of them
   * holds; one that holds for some is not claimed. Each kind is handed what each pair does.
   */
  #applyTied(o: LintObject, alternatives: readonly Alternative[]): void {
    const kind = o.kind as ObjectKind;
    const all = alternatives.map(({ user, operator, pair, root }) => {
      const node = hasArguments(o.arguments) ? argumentsNodeOf(root, o.arguments) : root;
      node.governed ??= this.#governed(o, kind, user, operator, pair);
      return node.governed;
    });
    if (all.length === 0) return;
    const kinds = this.#governingKinds;
    for (let i = 0; i < kinds.length; i++)
      (kinds[i] as GoverningTallies).applyTied(
        all.map((effects) => effects[i]),
        o.name,
      );
  }

  /** What the two policies governing an object do there, by kind of finding (`NOTHING`: nothing any kind keeps). */
  #governed(o: LintObject, kind: ObjectKind, user: Policy | null, operator: Policy | null, pair: Pair) {
    const unshared = this.#options.unshared === true;
    const reading = governedReading(o, kind, user, operator, pair, this.#set.version, unshared);
    const effects = this.#governingKinds.map((k) => k.governed(reading));
    return effects.every((e) => e === undefined) ? NOTHING : effects;
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
    const out: TallyStates = new Map();
    for (const k of this.#kinds) k.states(out);
    return out;
  }

  /**
   * Every finding, the most severe first (then by kind, as LINT_RULES lists them; the most objects
   * first; by policy). `live`: the queues' numbers by name (`null`: none reported; absent: not
   * read); `world`: the vhost's federation (`exchanges` as seen by the pass when not given).
   */
  findings(live: ReadonlyMap<string, LiveQueue | null> | null, world: Partial<World>, at: number): Finding[] {
    this.#flush();
    const full: World = {
      exchanges: world.exchanges === undefined ? this.#exchanges : world.exchanges,
      upstreams: world.upstreams ?? null,
      upstreamSets: world.upstreamSets ?? null,
      links: world.links ?? null,
    };
    const out: Finding[] = [];
    for (const k of this.#kinds) out.push(...k.findings({ live, world: full, at }));
    return out.sort(bySeverity);
  }
}
