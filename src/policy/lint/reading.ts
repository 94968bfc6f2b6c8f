import {
  anchoredForm,
  type CompiledPattern,
  matchesEveryName,
  type NameView,
  type PatternCache,
} from '../pattern/pattern.ts';
import type { IndexedPolicy, KindOrUnknown, PolicyIndex } from '../policyIndex.ts';
import type { Policy, PolicyLayer } from '../types.ts';
import type { LayerReading } from './lintTypes.ts';
import type { Outcome } from './sharing.ts';

/**
 * How the pass (lint.ts) reads one object, apart from what any kind makes of it: the index's
 * lists read once each (`ListInfo`), a layer resolved into reused scratch (resolve.ts's rule
 * written out so that no list is made per object), the mask by which objects alike share one
 * `Outcome` (sharing.ts), and the candidates of a layer.
 */

/** The pass's own record of a policy: what reading a name against it needs beyond the index. */
export interface PolicyEntry {
  readonly layer: PolicyLayer;
  readonly policy: Policy;
  /** Its pattern is not anchored and may catch a name (a catch-all never does: `matchesEveryName`). */
  readonly unanchored: boolean;
  /** Its pattern anchored at the start, compiled once it is needed. */
  anchored?: CompiledPattern;
}

/**
 * What a pass reads of one of the index's lists (the policies a name's prefix can reach, per kind
 * and layer), worked out once per list rather than once per object: each entry's record, the keys
 * the kind refuses of it, and whether an unreadable pattern of it could decide anything.
 */
export interface ListInfo {
  readonly entries: readonly PolicyEntry[];
  readonly refused: readonly (readonly string[])[];
  readonly applicable: readonly boolean[];
  /**
   * It matches every name the list is handed for, unread: a catch-all, or a pattern that finds
   * exactly the names starting with the literal prefix it is filed by (the index hands a policy
   * filed by prefix only for a name that starts with it).
   */
  readonly always: readonly boolean[];
  /** Some of its policies may catch a name (`PolicyEntry.unanchored`). */
  readonly unanchored: boolean;
  /**
   * The positions of the policies whose pattern must be read for a name (not `always`), when
   * there are at most MAX_CHECKS of them: an object's mask reads these alone.
   */
  readonly checks: readonly number[] | undefined;
  /** What reading an object does, by the other layer's list, then by both layers' masks (`Outcome`). */
  readonly outcomes: Map<ListInfo, Map<number, Outcome>>;
}

/** Policies of one list read per name for a mask: two bits each, a layer's mask within 26 bits. */
const MAX_CHECKS = 13;
/** The operator layer's mask below, the user layer's above, in one number under 2^52. */
export const MASK_SPAN = 2 ** (2 * MAX_CHECKS);

/** One layer of the object being read: resolve.ts's LayerResolution, its lists not made anew; what the kinds read. */
export interface LayerScratch extends LayerReading {
  kind: KindOrUnknown;
  list: readonly IndexedPolicy[];
  info: ListInfo;
  refused: readonly (readonly string[])[];
  readonly hits: number[];
  count: number;
  top: number | undefined;
  known: boolean;
  /** Set by `resolveLayer` (no unreadable pattern could change the winner), then by `candidates` (and the type known). */
  decided: boolean;
  first: number;
  candidates: number;
  readonly caught: number[];
  caughtCount: number;
  /** The candidates of a tie, each of which the broker may pick; else empty. */
  readonly tied: Policy[];
}

const NO_INFO: ListInfo = {
  entries: [],
  refused: [],
  applicable: [],
  always: [],
  unanchored: false,
  checks: [],
  outcomes: new Map(),
};

export const scratch = (layer: PolicyLayer): LayerScratch => ({
  layer,
  kind: null,
  list: [],
  info: NO_INFO,
  refused: [],
  hits: [],
  count: 0,
  top: undefined,
  known: true,
  decided: true,
  first: -1,
  candidates: 0,
  caught: [],
  caughtCount: 0,
  tied: [],
});

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

/** A list's `ListInfo`, made once. */
export function listInfo(
  index: PolicyIndex,
  kind: KindOrUnknown,
  list: readonly IndexedPolicy[],
  entryOf: (p: Policy) => PolicyEntry,
): ListInfo {
  const entries = list.map((e) => entryOf(e.policy));
  const always = list.map(alwaysMatches);
  const checks = always.flatMap((a, i) => (a ? [] : [i]));
  return {
    entries,
    refused: list.map((e) => index.refused(e, kind)),
    // It decides nothing when the kind refuses one of its keys (resolve.ts: `decided`).
    applicable: list.map((e) => index.applicable(e.name, kind) !== undefined),
    always,
    unanchored: entries.some((t) => t.unanchored),
    checks: checks.length <= MAX_CHECKS ? checks : undefined,
    outcomes: new Map(),
  };
}

/** An unanchored policy's pattern anchored at the start, compiled once. */
function anchored(entry: PolicyEntry, cache: PatternCache): CompiledPattern {
  entry.anchored ??= cache.get(anchoredForm(entry.policy.pattern));
  return entry.anchored;
}

/**
 * Which of the list's `checks` find the name, and which of those found catch it (their anchored
 * form does not find it), two bits each; -1 when that cannot stand for the object (too many
 * checks, a pattern not read for this name): it is then resolved in full.
 */
export function maskOf(res: LayerScratch, view: NameView, cache: PatternCache): number {
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
    const entry = info.entries[i] as PolicyEntry;
    if (!entry.unanchored) continue;
    const found = anchored(entry, cache).match(view);
    if (found === false) mask += 2 ** (2 * j + 1);
    else if (found !== true) return -1;
  }
  return mask;
}

/**
 * One layer of one object resolved into `into` (resolve.ts's rule, written out for the pass: no
 * list made per object): its matches, the candidates' priority (`top`, undefined: none
 * applicable) and whether it is decided.
 */
export function resolveLayer(view: NameView, into: LayerScratch): void {
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

/** The layer's matches whose unanchored pattern catches the name (its anchored form misses it), into `caught`. */
export function catching(res: LayerScratch, view: NameView, cache: PatternCache): void {
  let n = 0;
  if (res.info.unanchored) {
    for (let h = 0; h < res.count; h++) {
      const i = res.hits[h] as number;
      const entry = res.info.entries[i] as PolicyEntry;
      if (entry.unanchored && anchored(entry, cache).match(view) === false) res.caught[n++] = i;
    }
  }
  res.caughtCount = n;
}

/**
 * The candidates of a resolved layer (the applicable matches of the top priority; matches come
 * highest first): the policy that governs the object (null: none), or undefined when that is not
 * decided (a tie, whose candidates go to `tied`; an unreadable pattern; an unknown type).
 */
export function candidates(res: LayerScratch, known: boolean): Policy | null | undefined {
  const decided = known && res.decided;
  res.known = known;
  res.decided = decided;
  const { list, refused, hits, count, top, tied } = res;
  if (tied.length > 0) tied.length = 0;
  let first = -1;
  let n = 0;
  if (top !== undefined) {
    for (let h = 0; h < count; h++) {
      const i = hits[h] as number;
      if ((list[i] as IndexedPolicy).priority < top) break;
      if ((refused[i] as readonly string[]).length > 0) continue;
      if (first < 0) first = h;
      n++;
    }
  }
  res.first = first;
  res.candidates = n;
  if (decided && n > 1) {
    for (let h = first; h < count; h++) {
      const i = hits[h] as number;
      const p = (list[i] as IndexedPolicy).policy;
      if (p.priority < (top as number)) break;
      if ((refused[i] as readonly string[]).length === 0) tied.push(p);
    }
  }
  if (!decided || n !== 1) return decided && n === 0 ? null : undefined;
  return (list[hits[first] as number] as IndexedPolicy).policy;
}
