import { refusedKeys, scopeFits, vetoedKeys } from './keys.ts';
import { type CompiledPattern, type NameView, PatternCache } from './pattern/pattern.ts';
import { type BrokerVersion, OBJECT_KINDS, type ObjectKind, type Policy } from './types.ts';

/**
 * One layer's policies (user or operator) read once, as both `which` (resolve.ts) and `preview`
 * (simulate.ts) need them: each pattern compiled, the policies in the broker's order of choice
 * (highest priority first; code-unit order of names below that, any stable order will do), and
 * per object kind the ones whose apply-to reaches it, filed by literal prefix so that a name is
 * read only against the policies that can match it. Key vetoes are decided here too: a policy
 * with a key the kind refuses is never applicable to it.
 */

export interface IndexedPolicy {
  readonly policy: Policy;
  readonly name: string;
  readonly priority: number;
  readonly pattern: CompiledPattern;
}

/** What the broker decides for one name in one layer. */
export interface Scan {
  /** The applicable matches sharing the top priority. One: the winner. More: a tie. */
  readonly candidates: IndexedPolicy[];
  /** Policies whose pattern this bot cannot read for this name and which could be first or tie. */
  readonly undecided: IndexedPolicy[];
}

/** Overrides the reading of a policy's pattern: `undefined` reads it. */
export type Known = (e: IndexedPolicy) => boolean | 'undecidable' | undefined;

/** Said of a policy whose pattern the bot cannot read for one name, when the pattern is readable otherwise. */
const MAY_READ_DIFFERENTLY = 'the broker and this bot may read this pattern differently for this name';

export function whyUnreadable(e: { readonly pattern: CompiledPattern }): string {
  return e.pattern.why ?? MAY_READ_DIFFERENTLY;
}

const byPriority = (a: IndexedPolicy, b: IndexedPolicy) =>
  b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** One character more of a hash of a string's start, kept a small integer (a cheap Map key). */
const hashStep = (h: number, c: number) => (Math.imul(h, 31) + c) & 0x3fffffff;

/** A filed prefix, and `for`'s answer for the names it is the longest filed prefix of (made once asked). */
interface Filed {
  readonly text: string;
  merged: readonly IndexedPolicy[] | undefined;
}

/** A list of policies filed by literal prefix, and the rest. Exported for its tests. */
export class PrefixIndex implements ListFor {
  readonly #byPrefix = new Map<string, IndexedPolicy[]>();
  /**
   * The filed prefixes by the hash of their characters: a name is read once, character by
   * character, not sliced and hashed again at each length (a burst of outside changes asks for
   * every object of the vhost; a slice per length was most of the lookup).
   */
  readonly #byHash = new Map<number, Filed[]>();
  /** Which hashes' low bits some filed prefix has: most lengths of most names are ruled out here. */
  readonly #maybe: Uint8Array;
  readonly #general: IndexedPolicy[] = [];
  /** The lengths of the filed prefixes, longest first. */
  readonly #lengths: number[];
  /** The name's hash at each length up to the longest prefix, reused by every lookup. */
  readonly #hashes: number[];

  constructor(sorted: readonly IndexedPolicy[]) {
    for (const e of sorted) {
      const prefix = e.pattern.literalPrefix;
      if (prefix === undefined || prefix.caseless) {
        this.#general.push(e);
        continue;
      }
      const list = this.#byPrefix.get(prefix.text);
      if (list) list.push(e);
      else this.#byPrefix.set(prefix.text, [e]);
    }
    // About one in sixteen hashes of names not filed gets past `#maybe`.
    this.#maybe = new Uint8Array(2 ** Math.ceil(Math.log2(16 * this.#byPrefix.size + 1)));
    for (const text of this.#byPrefix.keys()) {
      let h = 0;
      for (let i = 0; i < text.length; i++) h = hashStep(h, text.charCodeAt(i));
      const filed: Filed = { text, merged: undefined };
      const same = this.#byHash.get(h);
      if (same) same.push(filed);
      else this.#byHash.set(h, [filed]);
      this.#maybe[h & (this.#maybe.length - 1)] = 1;
    }
    this.#lengths = [...new Set([...this.#byPrefix.keys()].map((p) => p.length))].sort((a, b) => b - a);
    this.#hashes = new Array<number>((this.#lengths[0] ?? 0) + 1).fill(0);
  }

  /** Highest priority first: those without a literal prefix, and those whose prefix `name` starts with. */
  for(name: string): readonly IndexedPolicy[] {
    if (this.#byPrefix.size === 0) return this.#general;
    const hashes = this.#hashes;
    const upTo = Math.min(name.length, hashes.length - 1);
    let h = 0;
    for (let i = 0; i < upTo; i++) {
      h = hashStep(h, name.charCodeAt(i));
      hashes[i + 1] = h;
    }
    const maybe = this.#maybe;
    const mask = maybe.length - 1;
    const lengths = this.#lengths;
    for (let l = 0; l < lengths.length; l++) {
      const n = lengths[l] as number;
      if (n > upTo) continue;
      const hash = hashes[n] as number;
      if (maybe[hash & mask] === 0) continue;
      const same = this.#byHash.get(hash);
      if (same === undefined) continue;
      for (let f = 0; f < same.length; f++) {
        const filed = same[f] as Filed;
        if (filed.text.length === n && name.startsWith(filed.text)) {
          filed.merged ??= this.#merge(filed.text);
          return filed.merged;
        }
      }
    }
    return this.#general;
  }

  /**
   * `for`'s answer by the longest filed prefix a name starts with: the shorter ones it starts
   * with are that prefix's own prefixes, so the answer depends on it alone. Merged and sorted
   * once per prefix, not once per name (a burst of outside changes asks for every object).
   */
  #merge(longest: string): readonly IndexedPolicy[] {
    let found: IndexedPolicy[] = [];
    for (let n = 1; n <= longest.length; n++) {
      const list = this.#byPrefix.get(longest.slice(0, n));
      if (list) found = found.length === 0 ? list : found.concat(list);
    }
    return this.#general.length === 0 && found.length === 1
      ? found
      : [...this.#general, ...found].sort(byPriority);
  }
}

/** A name's list: what `PrefixIndex` and `PrefixOverlay` answer alike. */
interface ListFor {
  for(name: string): readonly IndexedPolicy[];
}

/**
 * Another index's lists with some of its policies taken out and at most one put in (a change's
 * other side): read through that index's, each of its lists adjusted once, not filed again.
 */
class PrefixOverlay implements ListFor {
  /** The adjusted lists, by the list the base hands: without `added`, and with it. */
  readonly #adjusted = [
    new Map<readonly IndexedPolicy[], IndexedPolicy[]>(),
    new Map<readonly IndexedPolicy[], IndexedPolicy[]>(),
  ] as const;

  constructor(
    readonly base: ListFor,
    readonly removed: ReadonlySet<IndexedPolicy>,
    readonly added: IndexedPolicy | undefined,
  ) {}

  for(name: string): readonly IndexedPolicy[] {
    const list = this.base.for(name);
    const added = this.added;
    const prefix = added?.pattern.literalPrefix;
    const adds =
      added !== undefined && (prefix === undefined || prefix.caseless || name.startsWith(prefix.text));
    if (!adds && this.removed.size === 0) return list;
    const adjusted = this.#adjusted[adds ? 1 : 0];
    let out = adjusted.get(list);
    if (!out) {
      out = this.removed.size === 0 ? [...list] : list.filter((e) => !this.removed.has(e));
      if (adds) {
        const at = out.findIndex((e) => byPriority(added, e) < 0);
        out.splice(at < 0 ? out.length : at, 0, added);
      }
      adjusted.set(list, out);
    }
    return out;
  }
}

interface PerKind {
  /** Apply-to reaches the kind; highest priority first. */
  readonly reaching: ListFor;
  /** Reaching, and no key the kind vetoes. */
  readonly applicable: ListFor;
  readonly isApplicable: (e: IndexedPolicy) => boolean;
  /** Empty for a queue type this bot does not know: its vetoes are unknown, none is invented. */
  readonly vetoes: ReadonlySet<string>;
  /** `refused`'s answers, per policy: read for every match of every object of a whole-vhost pass. */
  readonly refused: Map<IndexedPolicy, readonly string[]>;
}

/** An object kind, or `null` for a queue of a type this bot does not know. */
export type KindOrUnknown = ObjectKind | null;

const entryOf = (p: Policy, cache: PatternCache): IndexedPolicy => ({
  policy: p,
  name: p.name,
  priority: p.priority,
  pattern: cache.get(p.pattern),
});

/** What an index made by `PolicyIndex.replacing` reads through (not built by hand). */
export interface ReplacedLayer {
  readonly base: PolicyIndex;
  readonly removed: ReadonlySet<IndexedPolicy>;
  readonly added: IndexedPolicy | undefined;
}

export class PolicyIndex {
  readonly version: BrokerVersion;
  /** Built only when read, for an index made by `replacing` (`named` reads through its base). */
  #byName: Map<string, IndexedPolicy> | undefined;
  /** Empty for an index made by `replacing`: its lists are read through its base's. */
  readonly #sorted: readonly IndexedPolicy[];
  readonly #perKind = new Map<KindOrUnknown, PerKind>();
  readonly #replaced: ReplacedLayer | undefined;

  constructor(
    policies: readonly Policy[] | ReplacedLayer,
    version: BrokerVersion,
    cache: PatternCache = new PatternCache(),
  ) {
    this.version = version;
    if ('base' in policies) {
      this.#replaced = policies;
      this.#sorted = [];
      return;
    }
    const entries = policies.map((p) => entryOf(p, cache));
    this.#byName = new Map(entries.map((e) => [e.name, e]));
    this.#sorted = entries.sort(byPriority);
  }

  /** Every policy of the layer, by name. */
  get byName(): ReadonlyMap<string, IndexedPolicy> {
    if (!this.#byName) {
      const { base, removed, added } = this.#replaced as ReplacedLayer;
      const byName = new Map(base.byName);
      for (const e of removed) byName.delete(e.name);
      if (added) byName.set(added.name, added);
      this.#byName = byName;
    }
    return this.#byName;
  }

  /** The policy of this name, if the layer has it. */
  named(name: string): IndexedPolicy | undefined {
    const replaced = this.#replaced;
    if (this.#byName || !replaced) return this.#byName?.get(name);
    if (replaced.added?.name === name) return replaced.added;
    const e = replaced.base.named(name);
    return e && replaced.removed.has(e) ? undefined : e;
  }

  /**
   * This layer with the policies named `names` taken out and `add` put in: what a fresh index of
   * that list would answer, read through this one's lists rather than filing them again (a
   * burst of outside changes indexes the vhost's policies once, not twice per change).
   */
  replacing(names: readonly (string | undefined)[], add: Policy | null, cache: PatternCache): PolicyIndex {
    const removed = new Set<IndexedPolicy>();
    for (const n of names) {
      const e = n === undefined ? undefined : this.named(n);
      if (e) removed.add(e);
    }
    const added = add ? entryOf(add, cache) : undefined;
    return new PolicyIndex({ base: this, removed, added }, this.version, cache);
  }

  /** Every kind's lists, built now rather than on the first name of each kind. */
  prepare(): this {
    for (const kind of OBJECT_KINDS) this.#kind(kind);
    return this;
  }

  #kind(kind: KindOrUnknown): PerKind {
    let k = this.#perKind.get(kind);
    if (!k) {
      k = this.#replaced ? PolicyIndex.#kindReplaced(this.#replaced, kind) : this.#kindBuilt(kind);
      this.#perKind.set(kind, k);
    }
    return k;
  }

  #kindBuilt(kind: KindOrUnknown): PerKind {
    const vetoes = kind === null ? new Set<string>() : vetoedKeys(kind, this.version);
    const reaching = this.#sorted.filter((e) => scopeFits(e.policy.applyTo, kind));
    const applicable = reaching.filter((e) => refusedKeys(e.policy.definition, vetoes).length === 0);
    const applicableSet = new Set(applicable);
    return {
      reaching: new PrefixIndex(reaching),
      applicable: new PrefixIndex(applicable),
      isApplicable: (e) => applicableSet.has(e),
      vetoes,
      refused: new Map(),
    };
  }

  static #kindReplaced({ base, removed, added }: ReplacedLayer, kind: KindOrUnknown): PerKind {
    const b = base.#kind(kind);
    const reaches = added !== undefined && scopeFits(added.policy.applyTo, kind);
    const applies = reaches && refusedKeys(added.policy.definition, b.vetoes).length === 0;
    return {
      reaching: new PrefixOverlay(b.reaching, removed, reaches ? added : undefined),
      applicable: new PrefixOverlay(b.applicable, removed, applies ? added : undefined),
      isApplicable: (e) => (e === added ? applies : b.isApplicable(e)),
      vetoes: b.vetoes,
      refused: b.refused,
    };
  }

  /** Every policy whose apply-to reaches this kind and that can match `name`, vetoed or not. */
  reachingFor(kind: KindOrUnknown, name: string): readonly IndexedPolicy[] {
    return this.#kind(kind).reaching.for(name);
  }

  /** The applicable policies that can match `name`, highest priority first. */
  candidatesFor(kind: KindOrUnknown, name: string): readonly IndexedPolicy[] {
    return this.#kind(kind).applicable.for(name);
  }

  /** The policy by name, if its apply-to reaches this kind and the kind vetoes none of its keys. */
  applicable(name: string, kind: KindOrUnknown): IndexedPolicy | undefined {
    const e = this.named(name);
    return e && this.#kind(kind).isApplicable(e) ? e : undefined;
  }

  /** The keys of this policy the kind refuses; any one of them means it can never govern it. */
  refused(e: IndexedPolicy, kind: KindOrUnknown): readonly string[] {
    const k = this.#kind(kind);
    let keys = k.refused.get(e);
    if (!keys) {
      keys = refusedKeys(e.policy.definition, k.vetoes);
      k.refused.set(e, keys);
    }
    return keys;
  }
}

/** The broker's choice in one layer: walk down the priorities, stop below the first match. */
export function scan(list: readonly IndexedPolicy[], view: NameView, known?: Known): Scan {
  // Each list made on its first entry, at its size: a first push would reserve 16 (a broad
  // change scans twice for each of 19,000 objects, and the reserve was most of what it allocated).
  let candidates: IndexedPolicy[] | undefined;
  let undecided: IndexedPolicy[] | undefined;
  let top: number | undefined;
  for (const e of list) {
    if (top !== undefined && e.priority < top) break;
    const hit = known?.(e) ?? e.pattern.match(view);
    if (hit === true) {
      top ??= e.priority;
      if (candidates) candidates.push(e);
      else candidates = [e];
    } else if (hit === 'undecidable') {
      if (undecided) undecided.push(e);
      else undecided = [e];
    }
  }
  return { candidates: candidates ?? [], undecided: undecided ?? [] };
}
