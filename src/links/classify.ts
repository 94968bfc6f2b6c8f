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

/** Why an expected link that nothing reports is missing: what the bot can name, else that nothing says. */
function missingReason(l: ExpectedLink, plugins: LinkPlugins): string {
  if (l.absent?.what === 'upstream-set') return `the upstream set ${quoted(l.absent.name)} does not exist`;
  if (l.absent)
    return `the upstream ${quoted(l.absent.name)} does not exist${l.absent.set ? ` (named by the upstream set ${quoted(l.absent.set)})` : ''}`;
  if (l.kind === 'shovel' && plugins.shovel === false) return 'the shovel plugin is not enabled';
  if (l.kind !== 'shovel' && plugins.federation === false) return 'the federation plugin is not enabled';
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

function row(l: Omit<LinkRow, 'next'>): LinkRow {
  return { ...l, next: nextStep(l) };
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
    seen.set(k, [...(seen.get(k) ?? []), s]);
  }
  const rows: LinkRow[] = [];
  const matched = new Set<string>();
  for (const l of expected) {
    const k = linkKey(l);
    if (matched.has(k)) continue;
    matched.add(k);
    const base = {
      kind: l.kind,
      vhost: l.vhost,
      object: l.object,
      upstream: l.upstream,
      policy: l.policy,
      expected: true,
    };
    const found = seen.get(k);
    const unread = notRead(l.kind, reported);
    if (found && found.length > 0) {
      for (const s of found)
        rows.push(row({ ...base, state: stateOf(s, now), node: s.node, reason: s.error, status: s.status }));
    } else if (unread !== undefined && !l.absent) {
      rows.push(row({ ...base, state: 'unknown', node: null, reason: unread, status: null }));
    } else {
      rows.push(
        row({ ...base, state: 'missing', node: null, reason: missingReason(l, plugins), status: null }),
      );
    }
  }
  for (const [k, list] of seen) {
    if (matched.has(k)) continue;
    for (const s of list) {
      rows.push(
        row({
          kind: s.kind,
          vhost: s.vhost,
          object: s.object,
          upstream: s.upstream,
          policy: null,
          expected: false,
          state: 'unexpected',
          node: s.node,
          reason: s.static ? "a static shovel, from the node's configuration" : s.error,
          status: s.status,
        }),
      );
    }
  }
  return rows;
}

/** The rows counted by state; `expected` counts the links that should exist. */
export function countLinks(rows: readonly LinkRow[]): LinkCounts {
  const n = (s: LinkState) => rows.filter((r) => r.state === s).length;
  const expected = new Set(rows.filter((r) => r.expected).map(linkKey)).size;
  return {
    expected,
    running: n('running'),
    starting: n('starting'),
    missing: n('missing'),
    stopped: n('stopped'),
    stuck: n('stuck'),
    unexpected: n('unexpected'),
    unknown: n('unknown'),
  };
}
