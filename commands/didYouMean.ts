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

/**
 * Levenshtein distance between `a` and `b` (UTF-16 code units), or `max + 1` as soon as it is
 * known to be over `max`: names whose lengths differ by more are never compared, and a row whose
 * every cell is over `max` ends the loop. Rows are reused, so 100,000 names allocate nothing.
 */
export function boundedDistance(
  a: string,
  b: string,
  max: number,
  rows?: [Uint32Array, Uint32Array],
): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a === b) return 0;
  const [r0, r1] =
    rows && rows[0].length > b.length ? rows : [new Uint32Array(b.length + 1), new Uint32Array(b.length + 1)];
  let prev = r0;
  let cur = r1;
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let best = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] as number) + (ca === b.charCodeAt(j - 1) ? 0 : 1);
      const del = (prev[j] as number) + 1;
      const ins = (cur[j - 1] as number) + 1;
      const v = Math.min(sub, del, ins);
      cur[j] = v;
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    [prev, cur] = [cur, prev];
  }
  return Math.min(prev[b.length] as number, max + 1);
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
  private readonly max: number;
  private readonly best: Near<T>[] = [];
  private readonly rows: [Uint32Array, Uint32Array] = [new Uint32Array(512), new Uint32Array(512)];

  constructor(
    private readonly typed: string,
    private readonly limit = MAX_SUGGESTIONS,
  ) {
    this.lower = typed.toLowerCase();
    this.max = maxDistance(typed);
  }

  /** One name of the listing. The typed name itself is never offered. */
  add(name: string, ...tag: T extends undefined ? [] : [T]): void {
    if (name === this.typed) return;
    const worst = this.best.length === this.limit ? this.best[this.best.length - 1] : undefined;
    const bound = worst ? Math.min(this.max, worst.folded) : this.max;
    const lower = name.toLowerCase();
    let folded = boundedDistance(this.lower, lower, bound, this.rows);
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

  private prefixOf(lower: string): boolean {
    const shorter = Math.min(lower.length, this.lower.length);
    return shorter >= 3 && (lower.startsWith(this.lower) || this.lower.startsWith(lower));
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
