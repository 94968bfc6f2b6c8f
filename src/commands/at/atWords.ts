import type { ThreadChange } from './thread.ts';
import type { AroundEntry, AtKeys, WhichAtResult } from './whichAt.ts';

/**
 * What `--at` says, on both surfaces: the one home of its sentences. Instants are given already
 * written (the terminal writes UTC ISO, Slack its date token, so each reader sees their own zone).
 */

/**
 * Whether a replayed answer names a winner, shown as `which` shows a policy in force: not for an
 * object whose kind is assumed, nor for a tie (the broker's pick is not defined); those are shown
 * as `which` shows an object the broker does not report, the matches by priority.
 */
export function claimsWinner(r: WhichAtResult): boolean {
  return (r.kindFrom === 'now' || r.kindFrom === 'flag') && !r.ambiguous;
}

/**
 * The broker could not be asked what the object is now: said so, and the answer given as for a
 * classic queue, the matches by priority (never "no such object", which nobody read).
 */
export const KIND_NOT_ASKED =
  'The broker could not be asked what it is now, so its kind is not known: answering as for a classic queue, the matches by priority (add --kind to ask as another kind).';

/** The answer as `which` words it, with a kind the broker could not be asked about not read as a missing object. */
export function asWhichSays(r: WhichAtResult): WhichAtResult {
  const answer = claimsWinner(r) ? 'reported' : 'not-reported';
  return r.kindFrom === 'not-asked'
    ? { ...r, answer, object: { ...r.object, kindAssumed: false } }
    : { ...r, answer };
}

export const RECOMPUTED = 'recomputed from the trail; the broker cannot be asked about the past';

/** The gap's causes, as the answer names them. */
const GAP_CAUSES = 'every replica down, the broker unreachable, or the event feed lost and not yet compared';

/** The first line: the instant and what the answer is. */
export function atHead(r: AtKeys, when: (iso: string) => string): string {
  const today = r.atForm === 'today' ? ` (${r.atWritten} is today, UTC)` : '';
  return r.known ? `At ${when(r.at)}${today}, ${RECOMPUTED}.` : `At ${when(r.at)}${today}: unknown.`;
}

/** Why the answer is unknown, in one sentence. */
export function unknownWords(r: AtKeys, when: (iso: string) => string, what: string): string {
  if (r.unknownBecause === 'gap' && r.gap)
    return `Unknown between ${when(r.gap.from)} and ${when(r.gap.to)}: the bot was not watching (${GAP_CAUSES}), so what governed ${what} then cannot be said.`;
  return `The bot was not watching: unknown. ${r.watchedSince ? `It has watched this environment since ${when(r.watchedSince)}.` : 'It has sealed no snapshot of this environment and vhost yet.'}`;
}

/** What `around` lists: the changes to the policies that reach the object, or to the vhost's. */
export type AroundOf = 'object' | 'vhost';
const AROUND_SUBJECT: Readonly<Record<AroundOf, string>> = {
  object: 'the policies that reach it',
  vhost: "the vhost's policies",
};
export const aroundHeading = (of: AroundOf) =>
  `Changes to ${AROUND_SUBJECT[of]}, an hour either side, nearest first`;
export const aroundNone = (of: AroundOf) => `No change to ${AROUND_SUBJECT[of]} in the hour either side.`;

/** One change near the instant, without its instant (each surface writes that). */
export function aroundWords(e: AroundEntry, name: (s: string) => string): string {
  const what = `${e.action === 'outside' ? (e.before === null ? 'created' : e.after === null ? 'deleted' : 'edited') : e.action} ${e.operator ? 'operator policy' : 'policy'} ${name(e.policy)}`;
  const who = e.outside
    ? `outside the bot${e.who ? ` by ${name(e.who)}` : ' (by whom: not known)'}`
    : `through the bot${e.who ? `, requested by ${name(e.who)}` : ''}`;
  return `${what}, ${who}`;
}

/**
 * What one change near the instant did to its policy: for an edit, each field and key that
 * differs (`max-length 5 -> 7`); for a create, what the policy set; for a delete, what it had set.
 * `text` writes a pattern as written, `key` an apply-to or a definition's key, `value` a value.
 */
export function aroundDiff(
  e: AroundEntry,
  text: (s: string) => string,
  value: (v: unknown) => string,
  key: (s: string) => string = text,
): string {
  const all = (p: NonNullable<AroundEntry['before']>) =>
    [
      `pattern ${text(p.pattern)}`,
      `apply-to ${key(p.applyTo)}`,
      `priority ${p.priority}`,
      ...Object.entries(p.definition).map(([k, v]) => `${key(k)}=${value(v)}`),
    ].join(', ');
  if (e.before === null) return e.after ? `set ${all(e.after)}` : '';
  if (e.after === null) return `had set ${all(e.before)}`;
  const { before, after } = e;
  const shown = (v: unknown) => (v === undefined ? '(none)' : value(v));
  const fields = (['pattern', 'applyTo', 'priority'] as const)
    .filter((k) => before[k] !== after[k])
    .map((k) =>
      k === 'priority'
        ? `priority ${before.priority} -> ${after.priority}`
        : k === 'applyTo'
          ? `apply-to ${key(before.applyTo)} -> ${key(after.applyTo)}`
          : `pattern ${text(before.pattern)} -> ${text(after.pattern)}`,
    );
  const keys = [...new Set([...Object.keys(before.definition), ...Object.keys(after.definition)])]
    .sort()
    .filter((k) => JSON.stringify(before.definition[k]) !== JSON.stringify(after.definition[k]))
    .map((k) => `${key(k)} ${shown(before.definition[k])} -> ${shown(after.definition[k])}`);
  const changed = [...fields, ...keys];
  return changed.length ? changed.join(', ') : 'written again unchanged';
}

/** A change found by comparing: made at some moment of its span. */
export function betweenWords(e: AroundEntry, when: (iso: string) => string): string {
  return e.between ? ` (made between ${when(e.between.from)} and ${when(e.between.to)})` : '';
}

/** The thread's line: what governed at its start and what governs since, offering `--at`. */
export function threadWords(
  c: ThreadChange,
  when: (iso: string) => string,
  name: (s: string) => string,
  value: (v: unknown) => string,
): string {
  const side = (
    s: { inForce: string | null; effective: Record<string, unknown> },
    other: Record<string, unknown>,
  ) => {
    const differing = Object.entries(s.effective).filter(
      ([k, v]) => JSON.stringify(other[k]) !== JSON.stringify(v),
    );
    const gone = Object.keys(other).filter((k) => !(k in s.effective));
    const keys = [...differing.map(([k, v]) => `${k}=${value(v)}`), ...gone.map((k) => `no ${k}`)];
    return `${s.inForce ? name(s.inForce) : 'no policy'}${keys.length ? ` (${keys.join(', ')})` : ''}`;
  };
  return `At the start of this thread, ${when(c.startedAt)}: ${side(c.atStart, c.now.effective)}; ${c.since ? `since ${when(c.since)}` : 'now'}: ${side(c.now, c.atStart.effective)}. Ask with --at TIME for any moment between.`;
}
