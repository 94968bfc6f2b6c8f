import { type LinkRow, linkKey, nextStep, reasonFromBroker, STUCK_AFTER_MS } from '../links/index.ts';

/**
 * Which links went down and which came back, from one reading of what should run against what
 * runs (src/links/ `classify`'s rows) and the links recorded down before it. Pure.
 *
 * A link is down when it should exist and every report of it is `missing`, `stopped` or `stuck`;
 * it runs when any report of it is `running`. A link `starting` (moved to another node, or
 * restarting after its upstream came back) or whose reports could not be read (`unknown`) keeps
 * what was recorded of it: starting is not yet back, and turns `stuck` (down) after a minute;
 * not knowing is neither going down nor coming back. A link recorded down that no
 * policy or parameter asks for any more is back as `gone` (its policy, upstream or vhost went).
 */

/** The states of a link that does not run. */
export type DownState = 'missing' | 'stopped' | 'stuck';
/** How a link recorded down came back: it runs again, or nothing asks for it any more. */
export type BackState = 'running' | 'gone';

const DOWN: ReadonlySet<string> = new Set<DownState>(['missing', 'stopped', 'stuck']);

/** A link as the watch records and tells it: the row's fields, and since when it is down. */
export interface WatchedLink {
  readonly kind: LinkRow['kind'];
  readonly vhost: string;
  readonly object: string;
  readonly upstream: string | null;
  readonly policy: string | null;
  readonly state: DownState | BackState;
  readonly node: string | null;
  /** The broker's error as written, or why the link is missing. */
  readonly reason: string | null;
  /** The runbook's next step (null once it runs). */
  readonly next: string | null;
  /** When it was first seen down (ISO); for a link back, how long it was down starts here. */
  readonly since: string;
}

export interface DownLink extends WatchedLink {
  readonly state: DownState;
  /**
   * The broker's last error for it while down, as written (masked): kept while later readings
   * say it starting or stuck in the bot's words. Recorded in the watch's state, not in the trail.
   */
  readonly error?: string | null;
}

export interface LinksMoved {
  /** Links that went down since the recorded state, the worst first. */
  readonly down: readonly DownLink[];
  /** Links recorded down that run again or are no longer asked for. */
  readonly back: readonly WatchedLink[];
  /** The state to record: every link down now, by linkKey (a link still down keeps its `since`). */
  readonly next: ReadonlyMap<string, DownLink>;
}

const ORDER: readonly string[] = ['missing', 'stopped', 'stuck'];

/**
 * Of several reports of one link, the one that says most: a running one; none while one is
 * starting (what was recorded stands); else the worst down one.
 */
function telling(rows: readonly LinkRow[]): LinkRow | undefined {
  const running = rows.find((r) => r.state === 'running');
  if (running || rows.some((r) => r.state === 'starting')) return running;
  return rows
    .filter((r) => DOWN.has(r.state))
    .sort((a, b) => ORDER.indexOf(a.state) - ORDER.indexOf(b.state))[0];
}

const byPlace = (a: WatchedLink, b: WatchedLink) =>
  a.vhost.localeCompare(b.vhost) ||
  a.kind.localeCompare(b.kind) ||
  a.object.localeCompare(b.object) ||
  (a.upstream ?? '').localeCompare(b.upstream ?? '');

export function linksMoved(
  recorded: ReadonlyMap<string, DownLink>,
  rows: readonly LinkRow[],
  at: Date,
  /** When each link was first seen not running (stuckAcross's `since`): a link down since then. */
  notRunningSince: ReadonlyMap<string, number> = new Map(),
): LinksMoved {
  const reports = new Map<string, LinkRow[]>();
  for (const r of rows) {
    if (!r.expected) continue;
    const k = linkKey(r);
    reports.set(k, [...(reports.get(k) ?? []), r]);
  }
  const next = new Map<string, DownLink>();
  const down: DownLink[] = [];
  const back: WatchedLink[] = [];
  for (const [k, list] of reports) {
    const was = recorded.get(k);
    const r = telling(list);
    if (!r) {
      // Starting, or only `unknown` reports: what was recorded stands.
      if (was) next.set(k, was);
      continue;
    }
    const base = {
      kind: r.kind,
      vhost: r.vhost,
      object: r.object,
      upstream: r.upstream,
      policy: r.policy,
      node: r.node,
      reason: r.reason,
    };
    if (r.state === 'running') {
      if (was) back.push({ ...base, state: 'running', next: null, since: was.since });
      continue;
    }
    const first = Math.min(notRunningSince.get(k) ?? at.getTime(), at.getTime());
    const now: DownLink = {
      ...base,
      state: r.state as DownState,
      next: r.next,
      since: was?.since ?? new Date(first).toISOString(),
      error: reasonFromBroker(r) && r.reason !== null ? r.reason : (was?.error ?? null),
    };
    next.set(k, now);
    if (!was) down.push(now);
  }
  for (const [k, was] of recorded) if (!reports.has(k)) back.push({ ...was, state: 'gone', next: null });
  down.sort((a, b) => ORDER.indexOf(a.state) - ORDER.indexOf(b.state) || byPlace(a, b));
  back.sort(byPlace);
  return { down, back, next };
}

/**
 * A second reading, a moment after the first found links down: only the links down in both went
 * down (a link moving to another node is missing for an instant); what came back is the second's.
 */
export function confirmed(
  first: LinksMoved,
  second: LinksMoved,
  recorded: ReadonlyMap<string, DownLink>,
): LinksMoved {
  const firstDown = new Set(first.down.map(linkKey));
  const down = second.down.filter((l) => firstDown.has(linkKey(l)));
  const keep = new Set(down.map(linkKey));
  const next = new Map([...second.next].filter(([k]) => recorded.has(k) || keep.has(k)));
  return { down, back: second.back, next };
}

/**
 * The rows with a link that has not run for longer than a minute, reading after reading, said
 * `stuck`. A link whose upstream never answers the handshake is not `starting` for a minute in any
 * one reading: each try is reported `starting` with a new timestamp for up to the connection
 * timeout (60 s), then `error` for a moment, then `starting` again (4.3.6, docs/broker-facts.md).
 * `since`: when each link was first seen not running (starting or stopped), updated here; a link
 * that runs, or that no row names, is forgotten.
 */
export function stuckAcross(rows: readonly LinkRow[], since: Map<string, number>, now: number): LinkRow[] {
  const reports = new Map<string, LinkRow[]>();
  for (const r of rows) if (r.expected) reports.set(linkKey(r), [...(reports.get(linkKey(r)) ?? []), r]);
  for (const k of since.keys()) if (!reports.has(k)) since.delete(k);
  for (const [k, list] of reports) {
    if (list.some((r) => r.state === 'running')) since.delete(k);
    else if (list.every((r) => r.state === 'starting' || r.state === 'stopped' || r.state === 'stuck'))
      since.set(k, since.get(k) ?? now);
  }
  return rows.map((r) => {
    const first = r.expected && r.state === 'starting' ? since.get(linkKey(r)) : undefined;
    if (first === undefined || now - first <= STUCK_AFTER_MS) return r;
    const stuck = {
      ...r,
      state: 'stuck' as const,
      reason: `starting again at each try, not running since ${new Date(first).toISOString()}`,
    };
    return { ...stuck, next: nextStep(stuck) };
  });
}
