/**
 * The one "as written" rendering of what users and the broker supply (names, patterns, values,
 * reasons), for Slack and the terminal alike: the characters as the broker holds them, one
 * backslash where it holds one (never JSON-quoted), and what does not show as an escape, never
 * interpreted: a line break cannot start a forged line, a bidi override cannot reorder what
 * follows, a zero-width character cannot hide. Slack's mrkdwn escaping is applied on top of this
 * by `src/slack/escape.ts`; the terminal prints it as it is. Pure, imports nothing.
 */

/**
 * What does not show besides C0 controls (which JSON.stringify escapes itself): DEL and C1
 * controls, zero-width characters, line and paragraph separators, bidi controls.
 */
const INVISIBLE_BEYOND_C0 =
  '\\u007f-\\u009f\\u00ad\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff';
/** Control characters, zero-width characters, line and paragraph separators, bidi controls. */
const INVISIBLE = new RegExp(`[\\u0000-\\u001f${INVISIBLE_BEYOND_C0}]`, 'g');
const INVISIBLE_IN_JSON = new RegExp(`[${INVISIBLE_BEYOND_C0}]`, 'g');

const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Every character that does not show as an escape: `\n`, `\r`, `\t`, else `\uXXXX`. */
export function showInvisible(s: string): string {
  return s.replace(INVISIBLE, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return unicodeEscape(c);
  });
}

/**
 * A JSON document for anything a person may read: every `--json` answer, every JSON the bot
 * answers or attaches. JSON.stringify's text with each character that does not show written as
 * its `\uXXXX` escape: a parser reads the same strings, a screen shows the escape, and a bidi
 * override cannot reorder what follows it. Outside strings JSON has only ASCII, so every such
 * character is inside one, where the escape means the same character.
 */
export function jsonText(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? 'null').replace(INVISIBLE_IN_JSON, unicodeEscape);
}

/** True when `showInvisible` would change the string. */
export function hasInvisible(s: string): boolean {
  INVISIBLE.lastIndex = 0;
  const found = INVISIBLE.test(s);
  INVISIBLE.lastIndex = 0;
  return found;
}

/** A name or text in double quotes, as written: `"^orders\.audit$"`, never `"^orders\\.audit$"`. */
export function quoted(s: string): string {
  return `"${showInvisible(s)}"`;
}

/** A value as its JSON (a string keeps its quotes: `"dlx"`), what does not show escaped. */
export function jsonWritten(v: unknown): string {
  return v === undefined ? 'undefined' : jsonText(v);
}

/** A value as written: a string as its characters (`dlx`), anything else as its JSON. */
export function valueWritten(v: unknown): string {
  return typeof v === 'string' ? showInvisible(v) : jsonWritten(v);
}

/** A definition as `key=value, …` (each value as JSON, as written); `none` when it sets nothing. */
export function definitionWritten(def: Readonly<Record<string, unknown>>, none = '(nothing)'): string {
  const entries = Object.entries(def);
  if (entries.length === 0) return none;
  return entries.map(([k, v]) => `${showInvisible(k)}=${jsonWritten(v)}`).join(', ');
}

/** The fields of a policy, as `asWritten` reads them (the preview's `PolicyFields` fits). */
export interface WrittenFields {
  readonly pattern: string;
  readonly applyTo: string;
  readonly priority: number;
  readonly definition: Readonly<Record<string, unknown>>;
}

export interface AsWritten {
  /** `field  value` lines, values verbatim (invisible characters escaped). */
  readonly lines: string[];
  /** What a reader could not see in the lines (and what was read differently from as typed). */
  readonly notes: string[];
}

/**
 * A policy's fields exactly as they will be written to the broker, for every preview and every
 * change request: the pattern as the regex the broker gets, the definition as the JSON sent.
 * What the bot understood is then visible before anyone approves it. Characters that do not
 * show, and spaces at either end, are said.
 */
export function asWritten(p: WrittenFields, readNotes: readonly string[] = []): AsWritten {
  const notes: string[] = [];
  if (hasInvisible(p.pattern))
    notes.push(
      'the pattern has characters that do not show: they are written as escapes (\\n, \\uXXXX) above',
    );
  if (p.pattern !== p.pattern.trim())
    notes.push('the pattern starts or ends with a space, which it must match');
  if (p.pattern === '') notes.push('the pattern is empty: it matches every name');
  return {
    lines: [
      `pattern     ${showInvisible(p.pattern)}`,
      `apply-to    ${showInvisible(p.applyTo)}`,
      `priority    ${p.priority}`,
      `definition  ${showInvisible(JSON.stringify(p.definition))}`,
    ],
    notes: [...notes, ...readNotes],
  };
}

/**
 * Terminal text from its lines: each line as written, so nothing a user or the broker supplied
 * can break a line or reorder one, whichever field it reached; then one line break after each.
 */
export function terminalText(lines: readonly string[]): string {
  return `${lines.map(showInvisible).join('\n')}\n`;
}
