import {
  type AuditRecord,
  type ChangeRecord,
  type HistoryQuery,
  isChange,
  madeAt,
  type ReplaySource,
  type Span,
  type StateAt,
  stateAt,
} from '../../audit/index.ts';
import type { Instant } from '../../core/index.ts';
import type { BacktrackingReader } from '../../patterns/index.ts';
import { resolveRead } from '../../patterns/index.ts';
import {
  type BrokerVersion,
  buildPolicySet,
  explainLosers,
  formatVersion,
  type KindOrUnknown,
  type ObjectKind,
  type Policy,
  parseVersion,
} from '../../policy/index.ts';
import { PatternCache } from '../../policy/pattern/index.ts';
import type { WhichInput } from '../parse.ts';
import { alsoMatchedView, emptyAnswer, explainComputed, type WhichResult } from '../which/which.ts';
import { lookUp, type WhichBroker } from '../which/whichLookup.ts';

/**
 * `which NAME --at TIME`: what governed the object at a past instant. The broker cannot be asked
 * about the past, so the answer is recomputed: the vhost's policies then, replayed from the audit
 * trail (src/audit/replay.ts), resolved by the same engine `which` uses when the broker reports
 * nothing (`explainComputed`). The object's kind is the one it has now, or `--kind`; an object
 * that exists no more and is given no kind is read as `which` reads an object the broker does
 * not report: the matches by priority, the kind assumed. Where the trail cannot say (before the
 * first snapshot, inside a gap) the answer is "unknown", with what it was at the gap's edges.
 */

/** The span either side of the instant whose changes are shown with it. */
export const AROUND_MS = 60 * 60_000;

/** What `--at` reads of the trail. AuditTrail satisfies it. */
export interface AtTrail extends ReplaySource {
  scan(query: HistoryQuery): Promise<{ entries: AuditRecord[]; unreadable: number }>;
}

/** A change near the instant, as `around` lists it (nearest first). */
export interface AroundEntry {
  /** When it was made (for a change found by comparing: the end of its span). */
  at: string;
  action: ChangeRecord['action'];
  policy: string;
  vhost: string;
  operator: boolean;
  /** Who made it: the broker user outside the bot, the requester through it; null when not known. */
  who: string | null;
  outside: boolean;
  /** Made at some moment of this span, not known when (found by comparing). */
  between?: Span;
  before: ChangeRecord['before'];
  after: ChangeRecord['after'];
  id: string;
}

/** The keys every `--at` answer adds to its command's document. */
export interface AtKeys {
  /** The instant, ISO 8601 UTC. */
  at: string;
  /** As typed (`03:12` is today, UTC). */
  atWritten: string;
  atForm: Instant['form'];
  source: 'trail';
  known: boolean;
  /** Why not known: before the bot watched (or the vhost not watched), or inside a gap. */
  unknownBecause?: 'not-watching' | 'gap';
  gap: Span | null;
  /** Before the first snapshot: when the bot began to watch (absent: it never has). */
  watchedSince?: string;
  /** Known: the snapshot the state was replayed from. */
  replayedFrom?: string;
  around: AroundEntry[];
}

/** The answer at one edge of a gap: what governed then, in short. */
export interface EdgeAnswer {
  at: string;
  known: boolean;
  inForce: string | null;
  operatorPolicy: string | null;
  candidates?: string[];
  effective: Record<string, unknown>;
}

export interface WhichAtResult extends WhichResult, AtKeys {
  /**
   * Where the kind came from: the object as it is now, `--kind`, or assumed: it exists no more
   * (`assumed`), or the broker could not be asked what it is now (`not-asked`).
   */
  kindFrom: 'now' | 'flag' | 'assumed' | 'not-asked';
  /** Inside a gap: what it was at the gap's start and at its end. */
  edges?: { from: EdgeAnswer; to: EdgeAnswer };
}

export interface WhichAtOptions {
  readonly reader?: BacktrackingReader;
  readonly patterns?: PatternCache;
}

/** The object's kind and arguments: now (the broker), from `--kind`, or assumed. */
interface AtObject {
  kind: ObjectKind | null;
  type: string;
  exists: boolean;
  kindFrom: WhichAtResult['kindFrom'];
  arguments: Readonly<Record<string, unknown>>;
}

async function objectOf(input: WhichInput, broker: WhichBroker | undefined): Promise<AtObject> {
  if (input.kind)
    return { kind: input.kind, type: input.kind, exists: false, kindFrom: 'flag', arguments: {} };
  let kindFrom: AtObject['kindFrom'] = 'assumed';
  try {
    const now = broker ? await lookUp(broker, input) : undefined;
    if (now?.exists)
      return { kind: now.kind, type: now.type, exists: true, kindFrom: 'now', arguments: now.arguments };
  } catch {
    // The broker could not say what the object is now (not that it is gone): its kind is assumed, and said so.
    kindFrom = 'not-asked';
  }
  return { kind: 'classic', type: 'classic', exists: false, kindFrom, arguments: {} };
}

export function atKeys(at: Instant, s: StateAt, around: AroundEntry[]): AtKeys {
  return {
    at: at.iso,
    atWritten: at.written,
    atForm: at.form,
    source: 'trail',
    known: s.known,
    ...(s.known
      ? { gap: null, replayedFrom: s.snapshotAt }
      : {
          unknownBecause: s.why,
          gap: s.gap,
          ...(s.watchedSince ? { watchedSince: s.watchedSince } : {}),
        }),
    around,
  };
}

function versionOf(s: Extract<StateAt, { known: true }>, fallback: BrokerVersion): BrokerVersion {
  return (s.state.version && parseVersion(s.state.version)) || fallback;
}

/** A broker version for a snapshot that did not read one: the oldest the bot supports. */
const OLDEST: BrokerVersion = { major: 3, minor: 10, patch: 0 };

export async function whichAt(
  input: WhichInput & { at: Instant },
  env: string,
  broker: WhichBroker | undefined,
  trail: AtTrail,
  options: WhichAtOptions = {},
): Promise<WhichAtResult> {
  const patterns = options.patterns ?? new PatternCache();
  const ms = input.at.ms;
  const [object, state, aroundRecords] = await Promise.all([
    objectOf(input, broker),
    stateAt(trail, env, input.vhost, ms),
    changesAround(trail, env, input.vhost, ms),
  ]);
  const kind: KindOrUnknown = object.kind;
  const around = await reaching(aroundRecords, input.name, kind, ms, patterns, options.reader);
  const r: WhichAtResult = {
    ...emptyAnswer(
      {
        vhost: input.vhost,
        name: input.name,
        kind: object.kind ?? object.type,
        exists: object.exists,
        kindAssumed: object.kindFrom === 'assumed' || object.kindFrom === 'not-asked',
        ...(object.kind === null ? { keyRulesKnown: false as const } : {}),
        ...(object.exists ? { arguments: { ...object.arguments } } : {}),
      },
      'not-reported',
    ),
    why: 'past',
    kindFrom: object.kindFrom,
    ...atKeys(input.at, state, around),
  };
  if (!state.known) {
    if (state.why === 'gap' && state.gap) {
      // `ms`: the instant asked; the gap holds its own start (from inclusive), so its start is
      // asked a millisecond before, the last instant the watch knew.
      const edge = async (iso: string, ms: number): Promise<EdgeAnswer> => {
        const s = await stateAt(trail, env, input.vhost, ms);
        if (!s.known) return { at: iso, known: false, inForce: null, operatorPolicy: null, effective: {} };
        const e = await computed(s, input.name, object, patterns, options.reader);
        return {
          at: iso,
          known: true,
          inForce: e.inForce?.name ?? null,
          operatorPolicy: e.operatorPolicy?.name ?? null,
          ...(e.candidates ? { candidates: e.candidates } : {}),
          effective: Object.fromEntries(Object.entries(e.effective).map(([k, v]) => [k, v.value])),
        };
      };
      // Just before the gap the state was known; at its end it was read again.
      const [from, to] = await Promise.all([
        edge(state.gap.from, Date.parse(state.gap.from) - 1),
        edge(state.gap.to, Date.parse(state.gap.to)),
      ]);
      r.edges = { from, to };
    }
    return r;
  }
  const done = await computed(state, input.name, object, patterns, options.reader);
  return { ...r, ...done, object: r.object };
}

/** The engine's answer on the replayed state: the same resolution `which` gives an unreported object. */
async function computed(
  s: Extract<StateAt, { known: true }>,
  name: string,
  object: AtObject,
  patterns: PatternCache,
  reader: BacktrackingReader | undefined,
): Promise<WhichResult> {
  const version = versionOf(s, OLDEST);
  const set = buildPolicySet(s.state.user, s.state.operator, version, patterns);
  const resolution = await resolveRead(set, name, object.kind, reader);
  const r: WhichResult = {
    ...emptyAnswer(
      { vhost: '', name, kind: object.kind ?? object.type, exists: object.exists, kindAssumed: false },
      'not-reported',
    ),
    brokerVersion: formatVersion(version),
    unreadable: [...resolution.user.unreadable, ...resolution.operator.unreadable].map((u) => ({
      name: u.policy.name,
      pattern: u.policy.pattern,
      why: u.why,
    })),
  };
  explainComputed(r, resolution, object, version);
  r.nothingGoverns = r.inForce === null && r.operatorPolicy === null && !r.ambiguous;
  const operatorInForce = resolution.operator.candidates[0] ?? null;
  const operatorLosers = explainLosers(resolution.operator, operatorInForce).alsoMatched;
  if (operatorLosers.length > 0) r.operatorAlsoMatched = alsoMatchedView(operatorLosers);
  return r;
}

/** The change records of the vhost an hour either side of `ms`. */
export async function changesAround(
  trail: AtTrail,
  env: string,
  vhost: string,
  ms: number,
): Promise<ChangeRecord[]> {
  const { entries } = await trail.scan({ env, vhost, since: ms - AROUND_MS, until: ms + AROUND_MS });
  return (
    entries
      .filter(isChange)
      // A federation upstream's, set's or shovel's change (`component`) is no policy's.
      .filter((r) => r.component === undefined && Math.abs(madeAt(r) - ms) <= AROUND_MS)
  );
}

/** A change as `around` lists it. */
export function aroundEntry(r: ChangeRecord): AroundEntry {
  return {
    at: new Date(madeAt(r)).toISOString(),
    action: r.action,
    policy: r.policy,
    vhost: r.vhost,
    operator: r.operator,
    who: r.action === 'outside' ? (r.actor ?? null) : (r.requester?.user ?? r.actor ?? null),
    outside: r.action === 'outside',
    ...(r.between ? { between: r.between } : {}),
    before: r.before,
    after: r.after,
    id: r.id,
  };
}

/** Nearest the instant first. */
export function nearestFirst(list: readonly ChangeRecord[], ms: number): AroundEntry[] {
  return [...list].sort((a, b) => Math.abs(madeAt(a) - ms) - Math.abs(madeAt(b) - ms)).map(aroundEntry);
}

/**
 * The changes whose policy reaches the object, before or after the change: its pattern matches
 * the name for the object's kind, read by the same engine (a policy of keys the kind refuses still
 * reaches it: it is among what matched).
 */
export async function reaching(
  list: readonly ChangeRecord[],
  name: string,
  kind: KindOrUnknown,
  ms: number,
  patterns: PatternCache,
  reader: BacktrackingReader | undefined,
): Promise<AroundEntry[]> {
  const out: ChangeRecord[] = [];
  for (const r of list) {
    const sides = [r.before, r.after].filter((p) => p !== null);
    const policies: Policy[] = sides.map((p, i) => ({ vhost: r.vhost, name: `${r.policy}#${i}`, ...p }));
    const set = buildPolicySet(r.operator ? [] : policies, r.operator ? policies : [], OLDEST, patterns);
    const resolution = await resolveRead(set, name, kind, reader);
    const layer = r.operator ? resolution.operator : resolution.user;
    if (layer.matches.length > 0 || layer.unreadable.length > 0) out.push(r);
  }
  return nearestFirst(out, ms);
}
