import { maskUri } from '../core/index.ts';
import { quoted } from '../text/index.ts';
import { linkKey } from './expected.ts';
import { nextStep } from './nextStep.ts';
import type {
  ExpectedLink,
  LinkCounts,
  LinkKind,
  LinkPlugins,
  LinkRow,
  LinkState,
  Reported,
  ReportedFederationLink,
  ReportedShovel,
} from './types.ts';

/**
 * What should run matched against what runs: every expected link with the state the broker
 * reports for it (or `missing`, with the reason the bot can name), then every reported link no
 * policy or parameter asks for (`unexpected`). Statuses as the brokers give them (4.0.5, 4.3.6):
 * a federation link is `starting`, `running` or, stopped, `error` (with `error`: `econnrefused`,
 * `not_allowed`) or `shutdown`; a shovel `starting`, `running` or `terminated` (with `reason`).
 */

/** A link `starting` for longer than this is stuck (the runbook: check reachability, credentials, TLS). */
export const STUCK_AFTER_MS = 60_000;

/** What the broker's statuses mean here. */
const STATES: Readonly<Record<string, LinkState>> = {
  running: 'running',
  starting: 'starting',
  shutdown: 'stopped',
  error: 'stopped',
  terminated: 'stopped',
};

/**
 * The broker's `timestamp` (`2026-12-05 0:20:26`, the node's clock, no zone: read as UTC, the
 * zone the brokers here run in) in ms; NaN when it cannot be read.
 */
export function timestampMs(timestamp: string | null): number {
  const m = timestamp && /^(\d{4})-(\d{2})-(\d{2}) (\d{1,2}):(\d{2}):(\d{2})$/.exec(timestamp);
  if (!m) return Number.NaN;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

/**
 * A broker's error or reason as it may be shown: any URI in it masked, and a password written
 * into an Erlang term (`password = <<"…">>`, `{password, …}`) hidden, as maskUri hides a URI's.
 */
export function maskReason(text: string | null): string | null {
  if (text === null) return null;
  return text
    .replace(/\bamqps?:\/\/[^\s"',}\]]*/gi, (uri) => maskUri(uri))
    .replace(/(password\s*(?:=|,)\s*)(<<"[^"]*">>|"[^"]*"|[^,}\s]+)/gi, '$1***');
}

/** One reported link, whatever its kind. */
interface Seen {
  readonly kind: LinkKind;
  readonly vhost: string;
  readonly object: string;
  readonly upstream: string | null;
  readonly node: string | null;
  readonly status: string;
  readonly error: string | null;
  readonly timestamp: string | null;
  readonly static: boolean;
}

function seenOf(reported: Reported): Seen[] {
  const federation = (reported.federation ?? []).map(
    (l: ReportedFederationLink): Seen => ({
      kind: l.kind,
      vhost: l.vhost,
      object: l.object,
      upstream: l.upstream,
      node: l.node,
      status: l.status,
      error: maskReason(l.error),
      timestamp: l.timestamp,
      static: false,
    }),
  );
  const shovels = (reported.shovels ?? []).map(
    (s: ReportedShovel): Seen => ({
      kind: 'shovel',
      vhost: s.vhost,
      object: s.name,
      upstream: null,
      node: s.node,
      status: s.state,
      error: maskReason(s.reason),
      timestamp: s.timestamp,
      static: s.type === 'static',
    }),
  );
  return [...federation, ...shovels];
}

function stateOf(seen: Seen, now: number): LinkState {
  const state = STATES[seen.status] ?? 'unknown';
  if (state !== 'starting') return state;
  const since = timestampMs(seen.timestamp);
  return Number.isFinite(since) && now - since > STUCK_AFTER_MS ? 'stuck' : 'starting';
}

/** Whether the plugin that would run this link is known not to be enabled. */
const pluginOff = (l: ExpectedLink, plugins: LinkPlugins) =>
  (l.kind === 'shovel' ? plugins.shovel : plugins.federation) === false;

/**
 * Why an expected link that nothing reports is missing: what the bot can name (the plugin first:
 * without it no upstream created helps), else that nothing says.
 */
function missingReason(l: ExpectedLink, plugins: LinkPlugins): string {
  if (pluginOff(l, plugins))
    return `the ${l.kind === 'shovel' ? 'shovel' : 'federation'} plugin is not enabled`;
  if (l.absent?.what === 'upstream-set') return `the upstream set ${quoted(l.absent.name)} does not exist`;
  if (l.absent)
    return `the upstream ${quoted(l.absent.name)} does not exist${l.absent.set ? ` (named by the upstream set ${quoted(l.absent.set)})` : ''}`;
  return 'missing, no reason reported';
}

/** Why the running links of this kind could not be read, or undefined when they were. */
function notRead(kind: LinkKind, reported: Reported): string | undefined {
  if (kind === 'shovel')
    return reported.shovels === null ? (reported.shovelsWhy ?? 'the shovels could not be read') : undefined;
  return reported.federation === null
    ? (reported.federationWhy ?? 'the federation links could not be read')
    : undefined;
}

/** One row, its fields in one order (one shape for every row: 10,000 of them are made at once). */
function row(
  l: Pick<LinkRow, 'kind' | 'vhost' | 'object' | 'upstream' | 'policy' | 'expected'>,
  state: LinkState,
  node: string | null,
  reason: string | null,
  status: string | null,
): LinkRow {
  const r = {
    kind: l.kind,
    vhost: l.vhost,
    object: l.object,
    upstream: l.upstream,
    policy: l.policy,
    expected: l.expected,
    state,
    node,
    reason,
    status,
    next: null as string | null,
  };
  r.next = state === 'running' || state === 'starting' ? null : nextStep(r);
  return r;
}

/** Every expected link with its state, then the unexpected ones; a link reported twice shows twice. */
export function classify(
  expected: readonly ExpectedLink[],
  reported: Reported,
  plugins: LinkPlugins,
  now: number,
): LinkRow[] {
  const seen = new Map<string, Seen[]>();
  for (const s of seenOf(reported)) {
    const k = linkKey(s);
    const list = seen.get(k);
    if (list) list.push(s);
    else seen.set(k, [s]);
  }
  const rows: LinkRow[] = [];
  const matched = new Set<string>();
  const unread = { federation: notRead('exchange', reported), shovel: notRead('shovel', reported) };
  for (const l of expected) {
    const k = linkKey(l);
    if (matched.has(k)) continue;
    matched.add(k);
    const found = seen.get(k);
    const why = l.kind === 'shovel' ? unread.shovel : unread.federation;
    const base = { ...l, expected: true };
    if (found && found.length > 0) {
      for (const s of found) rows.push(row(base, stateOf(s, now), s.node, s.error, s.status));
    } else if (why !== undefined && !l.absent && !pluginOff(l, plugins)) {
      // Not listed, and nothing says it cannot run: not known. (Without the plugin the listing is
      // not served either, and the link is missing for that reason.)
      rows.push(row(base, 'unknown', null, why, null));
    } else {
      rows.push(row(base, 'missing', null, missingReason(l, plugins), null));
    }
  }
  for (const [k, list] of seen) {
    if (matched.has(k)) continue;
    for (const s of list) {
      const reason = s.static ? "a static shovel, from the node's configuration" : s.error;
      rows.push(row({ ...s, policy: null, expected: false }, 'unexpected', s.node, reason, s.status));
    }
  }
  return rows;
}

/**
 * Whether a row's reason is the broker's (the error or reason of a link it reports), not the bot's
 * own words (why a link is missing, why the links could not be read, why a link the broker reports
 * `starting` is stuck across readings: src/links/watched.ts, src/watch/linksBurst.ts).
 */
export const reasonFromBroker = (l: Pick<LinkRow, 'status' | 'state'>): boolean =>
  l.status !== null && !(l.state === 'stuck' && l.status === 'starting');

/** No links at all. */
export const NO_LINKS: LinkCounts = {
  expected: 0,
  running: 0,
  starting: 0,
  missing: 0,
  stopped: 0,
  stuck: 0,
  unexpected: 0,
  unknown: 0,
};

/** The rows counted by state; `expected` counts the links that should exist. */
export function countLinks(rows: readonly LinkRow[]): LinkCounts {
  const { expected: _, ...zero } = NO_LINKS;
  const n: Record<LinkState, number> = { ...zero };
  const expected = new Set<string>();
  for (const r of rows) {
    n[r.state]++;
    if (r.expected) expected.add(linkKey(r));
  }
  return { expected: expected.size, ...n };
}
