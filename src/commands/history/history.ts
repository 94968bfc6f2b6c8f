import * as z from 'zod';
import type { LoggedRecords } from '../../audit/index.ts';
import {
  type AgainstLog,
  type AuditRecord,
  type ChangeRecord,
  type HistoryQuery,
  isChange,
  type VerifyResult,
} from '../../audit/index.ts';
import { InputError, type Instant, parseInstant } from '../../core/index.ts';
import { count } from '../../text/index.ts';
import { type FlagDefaults, parseArgs, parseWith } from '../parse.ts';
import { usageOf } from '../registry.ts';

const HISTORY_USAGE = usageOf('history');

/**
 * `history [POLICY or NAME] [--vhost V] [--env E] [--verify [--against FILE]]`: the audit trail,
 * newest first: the changes of a policy, or of every policy that governed an object of that
 * name, and how many records could not be read. `--verify` walks the whole hash chain and names
 * the first broken record; a break-glass change shows its review (or that it has none); `--against FILE` (terminal only) also compares the trail with the
 * bot's log and names every record missing, altered or extra. `--since`/`--until` (TIME, src/core/instant.ts):
 * the records in that window, since inclusive, until exclusive; in a Slack thread, the thread's span by
 * default. `--verify` still verifies the whole chain. Read-only.
 */

export interface HistoryInput extends HistoryQuery {
  readonly verify: boolean;
  /** `--since` / `--until` as typed and read; `since`/`until` of the query are their instants. */
  readonly window?: HistoryWindow;
  /** A log of the bot's (JSON lines) to check the trail against; implies `verify`. */
  readonly against?: string;
}

const Words = z.object({
  name: z.string().min(1).optional(),
  vhost: z.string().min(1, 'the vhost cannot be empty').optional(),
  env: z.string().min(1).optional(),
  against: z.string().min(1, '--against names a log file').optional(),
});

/**
 * The window asked for: from `since` (inclusive) to `until` (exclusive, absent: now), each instant
 * as typed and read. `thread`: the since is a Slack thread's start, not typed.
 */
export interface HistoryWindow {
  readonly since?: Instant;
  readonly until?: Instant;
  readonly thread?: boolean;
}

/** The window's `--json` form: ISO instants (UTC), `null` for an open end. */
export interface HistoryWindowJson {
  readonly since: string | null;
  readonly until: string | null;
  /** The since is the Slack thread's first message. */
  readonly fromThread?: true;
  /** The window in one sentence, as the terminal and Slack say it. */
  readonly words: string;
}

/** `now` and a Slack thread's start (`thread_ts`), for the window's defaults. */
export interface HistoryContext {
  readonly now?: Date;
  /** The thread asked in (Slack's `thread_ts`, seconds): without `--since`, the window starts there. */
  readonly threadTs?: string | undefined;
}

/** `defaults`: a Slack channel's `--vhost`/`--env` (`use`), taken where the words give none. */
export function parseHistory(
  words: readonly string[],
  defaults: FlagDefaults = {},
  context: HistoryContext = {},
): HistoryInput {
  const { positionals, flags } = parseArgs(
    words,
    {
      vhost: 'string',
      env: 'string',
      verify: 'boolean',
      against: 'string',
      since: 'string',
      until: 'string',
    },
    HISTORY_USAGE,
  );
  const now = context.now ?? new Date();
  const window = windowOf(flags.since, flags.until, now, context.threadTs);
  if (positionals.length > 1)
    throw new InputError(`history takes one policy or object name, got ${positionals.length}.`, {
      usage: HISTORY_USAGE,
    });
  const q = parseWith(
    Words,
    {
      name: positionals[0],
      vhost: flags.vhost ?? defaults.vhost,
      env: flags.env ?? defaults.env,
      against: flags.against,
    },
    HISTORY_USAGE,
  );
  return {
    ...(q.name === undefined ? {} : { name: q.name }),
    ...(q.vhost === undefined ? {} : { vhost: q.vhost }),
    ...(q.env === undefined ? {} : { env: q.env }),
    verify: flags.verify === true || q.against !== undefined,
    ...(q.against === undefined ? {} : { against: q.against }),
    ...(window === undefined
      ? {}
      : {
          window,
          ...(window.since ? { since: window.since.ms } : {}),
          ...(window.until ? { until: window.until.ms } : {}),
        }),
  };
}

function windowOf(
  sinceText: string | boolean | undefined,
  untilText: string | boolean | undefined,
  now: Date,
  threadTs: string | undefined,
): HistoryWindow | undefined {
  const read = (text: string | boolean | undefined, flag: string) =>
    typeof text === 'string' ? parseInstant(text, now, flag, HISTORY_USAGE) : undefined;
  const typed = read(sinceText, '--since');
  const until = read(untilText, '--until');
  if (typed && typed.ms > now.getTime())
    throw new InputError(
      `--since ${JSON.stringify(typed.written)} is ${typed.iso}, in the future: nothing is recorded after now${typed.form === 'today' ? ' (HH:MM is today, UTC)' : ''}.`,
      { usage: HISTORY_USAGE },
    );
  const thread = typed === undefined ? threadStart(threadTs) : undefined;
  const since = typed ?? thread;
  if (since && until && since.ms >= until.ms)
    throw new InputError(
      `${thread ? `This thread started at ${since.iso}, which` : `--since (${since.iso})`} is not before --until (${until.iso}): the window is empty. Since is inclusive, until exclusive.`,
      { usage: HISTORY_USAGE },
    );
  if (!since && !until) return undefined;
  return { ...(since ? { since } : {}), ...(until ? { until } : {}), ...(thread ? { thread: true } : {}) };
}

/** A Slack thread's start (`thread_ts`, seconds with microseconds) as an instant. */
function threadStart(threadTs: string | undefined): Instant | undefined {
  if (threadTs === undefined || !/^\d+(\.\d+)?$/.test(threadTs)) return undefined;
  const ms = Math.floor(Number(threadTs) * 1000);
  return { ms, iso: new Date(ms).toISOString(), form: 'iso', written: threadTs };
}

/** The window as `--json` carries it. */
export function windowJson(w: HistoryWindow, verify: boolean): HistoryWindowJson {
  return {
    since: w.since?.iso ?? null,
    until: w.until?.iso ?? null,
    ...(w.thread ? { fromThread: true as const } : {}),
    words: windowSentence(w, verify),
  };
}

/** The window in one line, for the terminal and Slack: since inclusive, until exclusive. */
export function windowSentence(w: HistoryWindow, verify = false): string {
  const at = (i: Instant) => (i.form === 'today' ? `${i.written} today, UTC (${i.iso})` : i.iso);
  const from = w.since
    ? w.thread
      ? `since this thread started (${w.since.iso})`
      : `from ${at(w.since)} (inclusive)`
    : 'from the first record';
  const to = w.until ? `until ${at(w.until)} (exclusive)` : 'until now';
  const thread = w.thread ? ' Give --since to ask for another window.' : '';
  const chain = verify ? ' --verify checks the whole chain, not only the window.' : '';
  return `The records ${from} ${to}.${thread}${chain}`;
}

/** What `history` reads. AuditTrail satisfies it. */
export interface HistorySource {
  scan(query: HistoryQuery): Promise<{ entries: AuditRecord[]; unreadable: number }>;
  verify(against?: LoggedRecords): Promise<VerifyResult>;
  /** The review record of a break-glass change's record (undefined: not reviewed). */
  reviewOf(record: ChangeRecord): Promise<AuditRecord | undefined>;
}

/** Reads the log named by `--against` (the terminal's `readAuditLog`). */
export type ReadLog = (file: string) => Promise<LoggedRecords>;

export interface HistoryResult {
  /** With `--since` / `--until` (or a Slack thread's span): the window read. */
  window?: HistoryWindowJson;
  /** Newest first. */
  entries: AuditRecord[];
  /** Records of the trail that could not be read: not shown, and not matched against the query. */
  unreadable: number;
  /** With `--verify`: the whole chain's state (not only the entries shown). */
  verify?: VerifyResult;
}

export async function history(
  input: HistoryInput,
  source: HistorySource,
  readLog?: ReadLog,
): Promise<HistoryResult> {
  const { verify, against, window, ...query } = input;
  if (against !== undefined && !readLog)
    throw new InputError(
      '--against reads a log file where the command runs: use it in the terminal (npx rmq history --verify --against FILE).',
      { usage: HISTORY_USAGE },
    );
  const logged = against !== undefined && readLog ? await readLog(against) : undefined;
  const [{ entries, unreadable }, chain] = await Promise.all([
    source.scan(query),
    verify ? source.verify(logged) : undefined,
  ]);
  const reviewed = await Promise.all(
    entries.map(async (e) => (isChange(e) && e.breakGlass ? withReview(e, await source.reviewOf(e)) : e)),
  );
  return {
    ...(window ? { window: windowJson(window, verify) } : {}),
    entries: reviewed,
    unreadable,
    ...(chain ? { verify: chain } : {}),
  };
}

/**
 * A break-glass change's entry with its review folded in (`breakGlass.reviewedBy`, …), from the
 * review's own record: the change's record is sealed, so the review is a record of its own.
 */
export function withReview(entry: ChangeRecord, review: AuditRecord | undefined): ChangeRecord {
  if (!entry.breakGlass || review?.action !== 'review' || review.reviewOf !== entry.id) return entry;
  return {
    ...entry,
    breakGlass: {
      ...entry.breakGlass,
      reviewedBy: review.actor,
      reviewReason: review.review.reason,
      reviewOutcome: review.review.outcome,
    },
  };
}

/** 0; 1 when `--verify` found the chain broken or unlike the log, or records could not be read (docs/commands.md, Exit codes). */
export function historyExitCode(r: HistoryResult): number {
  return (r.verify && !r.verify.ok) || r.unreadable > 0 ? 1 : 0;
}

/** How many records could not be read, when any: said with every answer, never hidden. */
export function unreadableSentence(r: HistoryResult): string | undefined {
  if (r.unreadable === 0) return undefined;
  return `${count(r.unreadable, 'record')} of the trail could not be read as audit records: not shown, and not matched against the question.`;
}

const SHOWN_IDS = 10;
const ids = (list: readonly string[]) =>
  list.length > SHOWN_IDS
    ? `${list.slice(0, SHOWN_IDS).join(', ')} and ${list.length - SHOWN_IDS} more (--json lists them all)`
    : list.join(', ');

/** The trail against the log, in words. */
function againstSentence(a: AgainstLog): string {
  const found = [
    a.missing.length ? `missing from Redis (${a.missing.length}): ${ids(a.missing)}` : '',
    a.altered.length ? `altered in Redis (${a.altered.length}): ${ids(a.altered)}` : '',
    a.extra.length ? `in Redis but never logged (${a.extra.length}): ${ids(a.extra)}` : '',
  ].filter(Boolean);
  const lines = a.unreadableLines
    ? ` ${count(a.unreadableLines, 'line')} of the log had an audit object that is not an audit record.`
    : '';
  return found.length
    ? `Against ${a.file} (${count(a.logged, 'record')} logged): ${found.join('; ')}.${lines}`
    : `Against ${a.file}: each of the ${count(a.logged, 'record')} logged is in Redis as logged, and Redis holds no other.${lines}`;
}

const WHY: Readonly<Record<Extract<VerifyResult, { ok: false }>['why'], string>> = {
  'hash-mismatch': 'its content does not match its seal (edited, or re-sealed without the key)',
  'chain-broken': 'it does not follow the record before it (a record before it was removed or rewritten)',
  unreadable: 'it cannot be read as an audit record',
  'head-mismatch': 'the trail ends before its recorded head (the last record was removed or rewritten)',
  unkeyed: 'it is not sealed with RMQ_AUDIT_KEY (written, or rewritten, by someone without the key)',
  'log-mismatch': "the trail is not what the bot's log says it wrote",
  'needs-key': 'sealed with RMQ_AUDIT_KEY, which this reader does not have',
};

/** The chain's state in words (and the log's, with `--against`), for the terminal and Slack. */
export function verifySentence(v: VerifyResult): string {
  const how = v.keyed
    ? ' Each seal was checked with RMQ_AUDIT_KEY.'
    : ' Checked against accidents only: without RMQ_AUDIT_KEY, anyone who can write to Redis could rewrite records and their hashes.';
  if (!v.ok && v.why === 'needs-key') {
    const n = v.unproven ?? 0;
    const proven = n < v.records ? ', each of the others matches its own hash' : '';
    return `The audit chain is NOT PROVEN: ${count(n, 'record')} of ${v.records} (the first: ${v.broken}) ${n === 1 ? 'is' : 'are'} ${WHY[v.why]}. The links between the records hold${proven}, but whether a keyed record was edited can only be checked with the key: set RMQ_AUDIT_KEY and verify again.${v.against ? ` ${againstSentence(v.against)}` : ''}`;
  }
  const chain = v.ok
    ? `The audit chain is intact (${count(v.records, 'record')}).`
    : v.why === 'log-mismatch'
      ? `The audit chain holds together (${count(v.records, 'record')}), but ${WHY[v.why]}.`
      : `The audit chain is BROKEN at ${v.broken}: ${WHY[v.why]}.`;
  return `${chain}${how}${v.against ? ` ${againstSentence(v.against)}` : ''}`;
}
