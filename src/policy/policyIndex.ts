import { refusedKeys, scopeFits, vetoedKeys } from './keys.ts';
import { type CompiledPattern, type NameView, PatternCache } from './pattern.ts';
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

/** A list of policies filed by literal prefix, and the rest. */
class PrefixIndex {
  readonly #byPrefix = new Map<string, IndexedPolicy[]>();
  readonly #general: IndexedPolicy[] = [];
  /** The lengths of the filed prefixes, longest first: a name is sliced only at those. */
  readonly #lengths: number[];
  /**
   * `for`'s answer by the longest filed prefix a name starts with: the shorter ones it starts
   * with are that prefix's own prefixes, so the answer depends on it alone. Merged and sorted
   * once per prefix, not once per name (a burst of outside changes asks for every object).
   */
  readonly #merged = new Map<string, readonly IndexedPolicy[]>();

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
    this.#lengths = [...new Set([...this.#byPrefix.keys()].map((p) => p.length))].sort((a, b) => b - a);
  }

  /** Highest priority first: those without a literal prefix, and those whose prefix `name` starts with. */
  for(name: string): readonly IndexedPolicy[] {
    if (this.#byPrefix.size === 0) return this.#general;
    let longest: string | undefined;
    for (const n of this.#lengths) {
      if (n > name.length) continue;
      const prefix = name.slice(0, n);
      if (this.#byPrefix.has(prefix)) {
        longest = prefix;
        break;
      }
    }
    if (longest === undefined) return this.#general;
    let merged = this.#merged.get(longest);
    if (!merged) {
      let found: IndexedPolicy[] = [];
      for (let n = 1; n <= longest.length; n++) {
        const list = this.#byPrefix.get(longest.slice(0, n));
        if (list) found = found.length === 0 ? list : found.concat(list);
      }
      merged =
        this.#general.length === 0 && found.length === 1
          ? found
          : [...this.#general, ...found].sort(byPriority);
      this.#merged.set(longest, merged);
    }
    return merged;
  }
}

interface PerKind {
  /** Apply-to reaches the kind; highest priority first. */
  readonly reaching: PrefixIndex;
  /** Reaching, and no key the kind vetoes. */
  readonly applicable: PrefixIndex;
  readonly applicableSet: ReadonlySet<IndexedPolicy>;
  /** Empty for a queue type this bot does not know: its vetoes are unknown, none is invented. */
  readonly vetoes: ReadonlySet<string>;
}

/** An object kind, or `null` for a queue of a type this bot does not know. */
export type KindOrUnknown = ObjectKind | null;

export class PolicyIndex {
  readonly version: BrokerVersion;
  readonly byName = new Map<string, IndexedPolicy>();
  readonly #sorted: readonly IndexedPolicy[];
  readonly #perKind = new Map<KindOrUnknown, PerKind>();

  constructor(policies: readonly Policy[], version: BrokerVersion, cache: PatternCache = new PatternCache()) {
    this.version = version;
    const entries = policies.map((p) => ({
      policy: p,
      name: p.name,
      priority: p.priority,
      pattern: cache.get(p.pattern),
    }));
    for (const e of entries) this.byName.set(e.name, e);
    this.#sorted = entries.sort(byPriority);
  }

  /** Every kind's lists, built now rather than on the first name of each kind. */
  prepare(): this {
    for (const kind of OBJECT_KINDS) this.#kind(kind);
    return this;
  }

  #kind(kind: KindOrUnknown): PerKind {
    let k = this.#perKind.get(kind);
    if (!k) {
      const vetoes = kind === null ? new Set<string>() : vetoedKeys(kind, this.version);
      const reaching = this.#sorted.filter((e) => scopeFits(e.policy.applyTo, kind));
      const applicable = reaching.filter((e) => refusedKeys(e.policy.definition, vetoes).length === 0);
      k = {
        reaching: new PrefixIndex(reaching),
        applicable: new PrefixIndex(applicable),
        applicableSet: new Set(applicable),
        vetoes,
      };
      this.#perKind.set(kind, k);
    }
    return k;
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
    const e = this.byName.get(name);
    return e && this.#kind(kind).applicableSet.has(e) ? e : undefined;
  }

  /** The keys of this policy the kind refuses; any one of them means it can never govern it. */
  refused(e: IndexedPolicy, kind: KindOrUnknown): readonly string[] {
    return refusedKeys(e.policy.definition, this.#kind(kind).vetoes);
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
