import { STUCK_AFTER_MS } from './classify.ts';
import { linkKey } from './expected.ts';
import { nextStep } from './nextStep.ts';
import type { LinkRow, LinksAsWatched } from './types.ts';

/**
 * A link whose upstream never answers the handshake is reported `starting` at each try, with a
 * new timestamp, for up to the 60 s connection timeout, then `error` for a moment, then `starting`
 * again (docs/broker-facts.md): no one reading shows it starting for a minute. The bot's watch
 * reads again and again and records it down (src/watch/linksStore.ts); a `links` answer that can
 * read that record says a link the broker reports `starting` stuck when the watch has seen it not
 * running for more than a minute. Pure.
 */

/** Said once by an answer with a link `starting` that no record of the watch tells stuck. */
export const STARTING_RETRIES_WORDS =
  'A link whose upstream never answers the handshake reads `starting` at every try (a new try each minute), so one reading cannot tell it stuck (docs/links.md).';

/**
 * The rows with a link the broker reports `starting` that the watch recorded reported and not
 * running (`stopped` or `stuck`: a link recorded `missing` that now starts was just created, not
 * stuck) for more than a minute, said `stuck`; the others as they are.
 */
export function stuckAsWatched(rows: readonly LinkRow[], watched: LinksAsWatched, now: number): LinkRow[] {
  const from = Date.parse(watched.from);
  return rows.map((r) => {
    if (!r.expected || r.state !== 'starting') return r;
    const down = watched.down.get(linkKey(r));
    if (!down || (down.state !== 'stopped' && down.state !== 'stuck')) return r;
    const since = Math.max(Date.parse(down.since), from);
    if (!Number.isFinite(since) || now - since <= STUCK_AFTER_MS) return r;
    const error = down.error ? `; the broker's last error: ${down.error}` : '';
    const stuck = {
      ...r,
      state: 'stuck' as const,
      reason: `starting again at each try, not running since ${new Date(since).toISOString()} as the bot's watch saw it${error}`,
    };
    return { ...stuck, next: nextStep(stuck) };
  });
}
