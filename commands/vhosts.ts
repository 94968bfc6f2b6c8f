import { InputError } from '../src/errors.ts';

/**
 * A vhost that does not exist is a mistake to point out, not a question answered with "nothing
 * governs": one sentence for `which` and `preview`, with the close names the identity can see.
 */

/** What the missing-vhost sentence may ask of the broker. ManagementClient satisfies it. */
export interface VhostLister {
  /** The vhosts this identity can see. */
  listVhosts?(): Promise<string[]>;
}

/** Levenshtein distance, stopping early once it is over `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const v = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      cur.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] ?? max + 1;
}

/**
 * Up to five of `known` that look like `typed`: same letters in another case, a typo or two
 * away, or one the start of the other (`orders` for `orders-eu`), closest first.
 */
export function closeVhosts(typed: string, known: readonly string[]): string[] {
  const lower = typed.toLowerCase();
  const max = typed.length <= 2 ? 0 : typed.length <= 4 ? 1 : 2;
  const score = (v: string): number => {
    const other = v.toLowerCase();
    if (other === lower) return 0;
    const d = distance(lower, other, max);
    if (d <= max) return d;
    const shorter = Math.min(other.length, lower.length);
    return shorter >= 3 && (other.startsWith(lower) || lower.startsWith(other))
      ? max + 1
      : Number.POSITIVE_INFINITY;
  };
  return known
    .map((v) => ({ v, d: score(v) }))
    .filter((x) => Number.isFinite(x.d) && x.v !== typed)
    .sort((a, b) => a.d - b.d || (a.v < b.v ? -1 : a.v > b.v ? 1 : 0))
    .slice(0, 5)
    .map((x) => x.v);
}

/** "vhost X does not exist" and, when the broker lists any, the close names (never fails). */
export async function missingVhost(
  broker: VhostLister,
  vhost: string,
): Promise<{ sentence: string; close: string[] }> {
  let close: string[] = [];
  try {
    close = closeVhosts(vhost, (await broker.listVhosts?.()) ?? []);
  } catch {
    // Only a hint: the vhost is missing whether or not the list can be read.
  }
  const hint = close.length ? `; did you mean ${close.map((v) => JSON.stringify(v)).join(' or ')}?` : '';
  return { sentence: `vhost ${JSON.stringify(vhost)} does not exist${hint}`, close };
}

/** The missing vhost as the InputError `which` and `policies` refuse with (exit 2), usage attached. */
export async function missingVhostError(
  broker: VhostLister,
  vhost: string,
  usage: string,
): Promise<InputError> {
  const { sentence } = await missingVhost(broker, vhost);
  const capitalised = `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}`;
  return new InputError(capitalised.endsWith('?') ? capitalised : `${capitalised}.`, usage);
}
