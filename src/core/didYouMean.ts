/**
 * "Did you mean": the names closest to one that names nothing, by edit distance, folded over a
 * listing as it streams (no list held, no per-name call). At most three, and only close ones: a
 * typo or two away (three for long names, none for names of one or two characters), the same
 * letters in another case, or, after those, a name that starts the other (three letters at least).
 *
 *   const close = new CloseNames('orders.adit');
 *   for await (const q of listing) close.add(q.name);
 *   close.names(); // ['orders.audit']
 */

export const MAX_SUGGESTIONS = 3;

/** How far a name may be from the typed one and still be offered: grows with its length. */
export function maxDistance(typed: string): number {
  const n = [...typed].length;
  // One or two characters: any other name is "a typo away"; only a change of case is close.
  return n <= 2 ? 0 : n <= 4 ? 1 : n <= 12 ? 2 : 3;
}

/** ASCII letters folded to lower case; other code units as they are. */
const fold = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/**
 * Levenshtein distance between `a` and `b` (UTF-16 code units), or `max + 1` as soon as it is
 * known to be over `max`. Names whose lengths differ by more are never compared; only the band
 * of cells within `max` of the diagonal is computed (the others are over `max` anyway), and a row
 * whose every cell is over `max` ends the loop. Rows are reused, so 100,000 names allocate
 * nothing. `caseBlind` folds ASCII letters (the caller lower-cases the rest).
 */
export function boundedDistance(
  a: string,
  b: string,
  max: number,
  rows?: [Uint32Array, Uint32Array],
  caseBlind = false,
): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (a === b) return 0;
  const over = max + 1;
  const [r0, r1] = rows && rows[0].length > m + 1 ? rows : [new Uint32Array(m + 2), new Uint32Array(m + 2)];
  let prev = r0;
  let cur = r1;
  for (let j = 0; j <= m; j++) prev[j] = j <= max ? j : over;
  prev[m + 1] = over;
  for (let i = 1; i <= n; i++) {
    const lo = Math.max(1, i - max);
    const hi = Math.min(m, i + max);
    cur[lo - 1] = lo === 1 ? Math.min(i, over) : over;
    let best = cur[lo - 1] as number;
    const ca = caseBlind ? fold(a.charCodeAt(i - 1)) : a.charCodeAt(i - 1);
    for (let j = lo; j <= hi; j++) {
      const cb = caseBlind ? fold(b.charCodeAt(j - 1)) : b.charCodeAt(j - 1);
      let v = (prev[j - 1] as number) + (ca === cb ? 0 : 1);
      const del = (prev[j] as number) + 1;
      if (del < v) v = del;
      const ins = (cur[j - 1] as number) + 1;
      if (ins < v) v = ins;
      if (v > over) v = over;
      cur[j] = v;
      if (v < best) best = v;
    }
    // The cell right of the band stays "over" for the next row's deletion.
    cur[hi + 1] = over;
    if (best > max) return over;
    [prev, cur] = [cur, prev];
  }
  return Math.min(prev[m] as number, over);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}

interface Near<T> {
  readonly name: string;
  readonly tag: T;
  /** Case-blind distance, then the exact one, then code-unit order: the ranking. */
  readonly folded: number;
  readonly exact: number;
}

const better = <T>(x: Near<T>, y: Near<T>) =>
  x.folded - y.folded || x.exact - y.exact || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);

/** `T`: what goes with each name (its kind, when several listings are folded together). */
export class CloseNames<T = undefined> {
  private readonly lower: string;
  private readonly asciiTyped: boolean;
  private readonly typedCounts = new Int32Array(128);
  private readonly typedBuckets: number[];
  private readonly seen = new Int32Array(128);
  private readonly max: number;
  private readonly best: Near<T>[] = [];
  private readonly rows: [Uint32Array, Uint32Array] = [new Uint32Array(512), new Uint32Array(512)];

  constructor(
    private readonly typed: string,
    private readonly limit = MAX_SUGGESTIONS,
  ) {
    this.lower = typed.toLowerCase();
    this.asciiTyped = isAscii(typed);
    this.max = maxDistance(typed);
    // Buckets of 128 (folded code & 127): merging letters only lowers the bound, so it stays one.
    for (let i = 0; i < this.lower.length; i++)
      (this.typedCounts[fold(this.lower.charCodeAt(i)) & 127] as number)++;
    this.typedBuckets = [...this.typedCounts.keys()].filter((b) => this.typedCounts[b] !== 0);
  }

  /** One name of the listing. The typed name itself is never offered. */
  add(name: string, ...tag: T extends undefined ? [] : [T]): void {
    if (name === this.typed) return;
    const worst = this.best.length === this.limit ? this.best[this.best.length - 1] : undefined;
    const bound = worst ? Math.min(this.max, worst.folded) : this.max;
    // ASCII-only names (nearly all) are compared case-blind in place, without a copy.
    const lower = this.asciiTyped && isAscii(name) ? name : name.toLowerCase();
    let folded =
      Math.abs(lower.length - this.lower.length) > bound || this.lettersApart(lower) > bound
        ? bound + 1
        : boundedDistance(this.lower, lower, bound, this.rows, true);
    if (folded > bound) {
      // Not a typo away, but one starts the other (`orders` for `orders-eu`): ranked after typos.
      if (!this.prefixOf(lower)) return;
      folded = this.max + 1;
    }
    const exact = boundedDistance(this.typed, name, this.max + 8, this.rows);
    const near: Near<T> = { name, tag: tag[0] as T, folded, exact };
    if (worst && better(near, worst) >= 0) return;
    this.best.push(near);
    this.best.sort(better);
    if (this.best.length > this.limit) this.best.pop();
  }

  /**
   * A lower bound of the distance, from letter counts alone: each edit changes the counts by at
   * most two, so half their difference cannot exceed it. Most names of a large listing are ruled
   * out here, in a pass over their letters, before the distance is computed for the few left.
   */
  private lettersApart(other: string): number {
    const seen = this.seen;
    for (let i = 0; i < other.length; i++) (seen[fold(other.charCodeAt(i)) & 127] as number)++;
    let apart = 0;
    for (const b of this.typedBuckets)
      apart += Math.abs((this.typedCounts[b] as number) - (seen[b] as number));
    for (let i = 0; i < other.length; i++) {
      const b = fold(other.charCodeAt(i)) & 127;
      if (this.typedCounts[b] === 0) apart++;
    }
    for (let i = 0; i < other.length; i++) seen[fold(other.charCodeAt(i)) & 127] = 0;
    return Math.ceil(apart / 2);
  }

  /** One starts the other, case-blind (ASCII), over three characters at least. */
  private prefixOf(other: string): boolean {
    const shorter = Math.min(other.length, this.lower.length);
    if (shorter < 3) return false;
    for (let i = 0; i < shorter; i++) {
      if (fold(other.charCodeAt(i)) !== this.lower.charCodeAt(i)) return false;
    }
    return true;
  }

  addAll(this: CloseNames<undefined>, names: Iterable<string>): CloseNames<undefined> {
    for (const n of names) this.add(n);
    return this;
  }

  /** The closest first. */
  names(): string[] {
    return this.best.map((n) => n.name);
  }

  /** The closest first, each with its tag. */
  matches(): { name: string; tag: T }[] {
    return this.best.map((n) => ({ name: n.name, tag: n.tag }));
  }
}

/** The close ones among names already listed (policies, vhosts). */
export function closeNames(typed: string, names: Iterable<string>): string[] {
  return new CloseNames(typed).addAll(names).names();
}
