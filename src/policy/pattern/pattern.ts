// Over 400 lines: a pattern's reading, its cache and the answers read off it (prefix, catch-all) are one idea.
import { RE2JS } from 're2js';
import { toBacktracking } from './backtracking.ts';

/**
 * Reading a policy pattern the way the broker does.
 *
 * The broker runs `re:run(Name, Pattern)` without the unicode option: a PCRE *search* (not a
 * whole-name match) over the name's UTF-8 bytes, where `.` is one byte. We run RE2 (linear time,
 * so no pattern can hang the bot) over a Latin-1 view of the same bytes: one byte becomes one
 * character, in both the pattern and the name, so byte semantics carry over.
 *
 * Where PCRE and RE2 read the same text differently we do not guess:
 * - syntax RE2 refuses (lookaround, backreferences, possessive and atomic groups, `(*VERB)`,
 *   `(?x)`, `\Z`, `\h`, `\R`, ...) makes the pattern unreadable;
 * - `\v`, `\V` mean "vertical whitespace" in PCRE and one character in RE2: unreadable;
 * - PCRE's `\s` also takes the vertical tab (0x0B), RE2's does not;
 * - PCRE's `$` also matches before a final newline, RE2's only at the very end;
 * - with `(?i)`, RE2 folds Latin-1 letters (é/É), PCRE's default tables fold ASCII only. So bytes
 *   0x80–0xFF are handed to RE2 as characters that fold to nothing (U+2880–U+28FF), in the pattern
 *   and the name alike; only a pattern that names high bytes by escape (`\xE9`, `\x{e9}`) or by
 *   Unicode property (`\p{L}`) needs their Latin-1 identity, and then keeps the Latin-1 view.
 * The last three only matter for some names, so they make the *match* undecidable for those names.
 *
 * The PCRE syntax checker is pcreSyntax.ts, the backtracking engine backtracking.ts.
 */

/** Longest pattern we read. 4.2.8+ brokers refuse longer ones themselves. */
export const MAX_PATTERN_BYTES = 1024;

export type MatchResult = boolean | 'undecidable';

/** Bytes as one character each: how both pattern and name are handed to RE2. */
export function latin1View(text: string): string {
  if (ASCII.test(text)) return text;
  return Buffer.from(text, 'utf8').toString('latin1');
}

const HIGH_BASE = 0x2800;
// Pure ASCII reads the same in every view: no bytes to copy.
const ASCII = /^[\x00-\x7f]*$/;

/** Bytes as one character each, high bytes moved to code points without case or class. */
export function shiftedView(text: string): string {
  if (ASCII.test(text)) return text;
  const bytes = Buffer.from(text, 'utf8');
  let out = '';
  for (const b of bytes) out += String.fromCharCode(b < 0x80 ? b : HIGH_BASE + b);
  return out;
}

/** A name seen both ways, computed once per object. */
export interface NameView {
  readonly latin1: string;
  readonly shifted: string;
  /**
   * When present, collects the patterns that need the backtracking engine's verdict for this
   * name (they answered 'undecidable' meanwhile): see src/patterns/reader.ts.
   */
  readonly pending?: Set<CompiledPattern>;
}

/** `collectPending`: the view collects the patterns waiting for the backtracking engine. */
export function nameView(name: string, options: { collectPending?: boolean } = {}): NameView {
  const view: PassView = {
    latin1: '',
    shifted: '',
    pending: options.collectPending ? new Set<CompiledPattern>() : undefined,
  };
  return refillView(view, name);
}

/** A view a whole-vhost pass fills anew for each name (`refillView`), rather than make one per object. */
export interface PassView extends NameView {
  latin1: string;
  shifted: string;
}

/** `view` made the view of `name`, its `pending` emptied. */
export function refillView(view: PassView, name: string): PassView {
  // Most names are ASCII: both views are the name itself (made for every object a preview reads).
  const ascii = ASCII.test(name);
  view.latin1 = ascii ? name : latin1View(name);
  view.shifted = ascii ? name : shiftedView(name);
  if (view.pending !== undefined && view.pending.size > 0) view.pending.clear();
  return view;
}

/** What the backtracking engine is asked for one pattern, and what it answered so far. */
export interface BacktrackingPattern {
  /** JavaScript RegExp source and flags, over the shifted view (see backtracking.ts). */
  readonly source: string;
  readonly flags: string;
}

/** Patterns and the names (by shifted view) each still needs the backtracking engine's verdict for. */
export type PendingVerdicts = Map<CompiledPattern, Set<string>>;

/** Gathers what the views collected (`nameView(name, { collectPending: true })`). */
export function pendingVerdicts(
  views: Iterable<NameView>,
  into: PendingVerdicts = new Map(),
): PendingVerdicts {
  for (const view of views) {
    for (const pattern of view.pending ?? []) {
      const names = into.get(pattern) ?? new Set<string>();
      into.set(pattern, names);
      names.add(view.shifted);
    }
  }
  return into;
}

/** Verdicts kept per pattern; beyond this many names they are dropped and asked again when needed. */
const MAX_VERDICTS = 200_000;

/**
 * A pattern is anchored when every name it matches must start with a fixed prefix, which is what
 * people mean by "anchored": it begins with `^` or `\A`. Anything else searches inside names.
 */
export function isAnchored(pattern: string): boolean {
  const p = pattern.replace(/^\(\?[a-zA-Z]+\)/, '');
  return p.startsWith('^') || p.startsWith('\\A');
}

/**
 * The pattern read from the start of the name only. An unanchored pattern that matches a name
 * this does not has caught a name that merely contains it (the preview's and `lint`'s catch).
 */
export function anchoredForm(pattern: string): string {
  return `^(?:${pattern})`;
}

/** Finds escape sequences outside the pattern's `\Q…\E` quotes. */
function escapes(pattern: string): Set<string> {
  const found = new Set<string>();
  let quoted = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c !== '\\') continue;
    const next = pattern[i + 1] ?? '';
    if (quoted) {
      if (next === 'E') quoted = false;
    } else if (next === 'Q') {
      quoted = true;
    } else {
      found.add(next);
    }
    i++;
  }
  return found;
}

const FLAG_GROUP = /\(\?([a-zA-Z]*)(?:-[a-zA-Z]*)?[:)]/g;
// Escapes that name a byte above 0x7F, or Unicode properties: these need the bytes' Latin-1 identity.
const HIGH_ESCAPE =
  /\\[pP]|\\x\{0*[89a-fA-F][0-9a-fA-F]\}|\\x[89a-fA-F][0-9a-fA-F]|\\x\{0*[1-9a-fA-F][0-9a-fA-F]{2,}\}/;
const LITERAL_CHAR = '[A-Za-z0-9_\\-/:@#%&=,;\'"!~ <>]|\\\\[^A-Za-z0-9]';
const LITERAL_FORM = new RegExp(`^(\\^?)((?:${LITERAL_CHAR})*)(\\$?)$`);

const unescapePattern = (text: string) => text.replace(/\\(.)/g, '$1');

/**
 * The catch-alls: a search for them succeeds at the name's start, whatever the name (`.*` may
 * match nothing), so they read like the empty literal, without the regex engine. The usual
 * operator and fallback pattern, read for most objects a broad change moves.
 */
const MATCHES_EVERY_NAME = new Set(['.*', '^.*']);

/**
 * A search for the pattern succeeds at the start of every name (a catch-all, or the empty
 * pattern): its anchored form finds every name it finds, so it catches nothing (`lint`'s
 * `unanchored` need not read it per object).
 */
export function matchesEveryName(pattern: string): boolean {
  return pattern === '' || MATCHES_EVERY_NAME.has(pattern);
}

interface Literal {
  readonly start: boolean;
  readonly end: boolean;
  readonly text: string;
}

type State =
  | { readonly readable: true; readonly re: RE2JS | null }
  | {
      readonly readable: true;
      readonly re: null;
      readonly backtracking: BacktrackingPattern;
      /** By the name's shifted view: does the pattern find it. */
      readonly verdicts: Map<string, boolean>;
    }
  | { readonly readable: false; readonly why: string };

/**
 * A pattern read once. The regex engine compiles it lazily, the first time a name gets past the
 * cheap checks: most real patterns are literals or start with one (`^orders\.audit$`,
 * `^orders\.`), and those are answered by string comparison, so 10,000 policies cost little.
 */
export class CompiledPattern {
  readonly source: string;
  readonly anchored: boolean;
  /** `literalPrefix(source)`, read once: the policy index files the pattern by it, per kind and layer. */
  readonly literalPrefix: LiteralPrefix | undefined;
  readonly #view: 'latin1' | 'shifted';
  readonly #caseless: boolean;
  readonly #usesSpace: boolean;
  readonly #usesDollar: boolean;
  readonly #literal: Literal | undefined;
  /** A literal every match starts with (lower-cased when the pattern is caseless). */
  readonly #prefix: string | undefined;
  /** An ASCII text, with case, every name the pattern can match (or be undecided for) starts with. */
  readonly #asciiStart: string | undefined;
  /** `requiredLiterals(source)`: texts every name the regex engine finds contains. */
  readonly #required: readonly string[] | undefined;
  /**
   * An ASCII text such that the pattern finds exactly the names that start with it (`^orders\.`):
   * `match` is then `name.startsWith(startsWithOnly)`, read from the name itself (the views of a
   * name start with an ASCII text exactly when the name does).
   */
  readonly startsWithOnly: string | undefined;
  #state: State | undefined;

  constructor(pattern: string) {
    this.source = pattern;
    this.anchored = isAnchored(pattern);
    this.literalPrefix = literalPrefix(pattern);
    const esc = escapes(pattern);
    this.#view = HIGH_ESCAPE.test(pattern) ? 'latin1' : 'shifted';
    let caseless = false;
    for (const m of pattern.matchAll(FLAG_GROUP)) if (m[1]?.includes('i')) caseless = true;
    this.#caseless = caseless;
    this.#usesSpace = esc.has('s') || esc.has('S') || pattern.includes('[:space:]');
    this.#usesDollar = pattern.includes('$');
    const toView = (text: string) => (this.#view === 'latin1' ? latin1View(text) : shiftedView(text));
    if (Buffer.byteLength(pattern, 'utf8') > MAX_PATTERN_BYTES) {
      this.#state = { readable: false, why: `longer than ${MAX_PATTERN_BYTES} bytes` };
    } else if (esc.has('v') || esc.has('V')) {
      this.#state = {
        readable: false,
        why: '\\v means vertical whitespace to the broker and a single character to this bot',
      };
    }
    const lit = MATCHES_EVERY_NAME.has(pattern) ? ['', '', '', ''] : LITERAL_FORM.exec(pattern);
    if (lit && !this.#state) {
      this.#literal = {
        start: lit[1] === '^',
        end: lit[3] === '$',
        text: toView(unescapePattern(lit[2] ?? '')),
      };
      this.#state = { readable: true, re: null };
    }
    this.#prefix = this.#literal ? undefined : this.#prefixOf(toView);
    // A literal read with `$` or a space class may be undecidable for a name it does not start:
    // only the plain ones are told by their start.
    const plain =
      this.#literal?.start && !this.#usesDollar && !this.#usesSpace ? this.#literal.text : undefined;
    const start = plain ?? (this.#caseless ? undefined : this.#prefix);
    this.#asciiStart = start !== undefined && ASCII.test(start) ? start : undefined;
    this.startsWithOnly = plain !== undefined && ASCII.test(plain) ? plain : undefined;
    this.#required = requiredLiterals(pattern);
  }

  /**
   * False when `match` would answer false for this name, read from the name itself, without its
   * views: the name does not start with the pattern's ASCII literal start (the views of a name
   * start with an ASCII text exactly when the name does). True: ask `match`. For a change's
   * pattern, which most of a vhost's names do not start with (bench/preview: a create).
   */
  mayMatch(name: string): boolean {
    return this.#asciiStart === undefined || name.startsWith(this.#asciiStart);
  }

  /** The literal every match starts with, in the view (lower-cased when the pattern is caseless). */
  #prefixOf(toView: (s: string) => string): string | undefined {
    const prefix = this.literalPrefix;
    // A caseless flag further on would need its own reading of where it starts to apply.
    if (!prefix || prefix.caseless !== this.#caseless) return undefined;
    const view = toView(prefix.text);
    return this.#caseless ? view.toLowerCase() : view;
  }

  #compile(): State {
    if (!this.#state) {
      try {
        const text = this.#view === 'latin1' ? latin1View(this.source) : shiftedView(this.source);
        this.#state = { readable: true, re: RE2JS.compile(text) };
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        // Lookaround and backreferences: a backtracking engine reads them, off the main thread.
        const bt = toBacktracking(shiftedView(this.source));
        this.#state =
          'source' in bt
            ? { readable: true, re: null, backtracking: bt, verdicts: new Map() }
            : { readable: false, why: `not readable by a linear-time engine (${detail}); ${bt.why}` };
      }
    }
    return this.#state;
  }

  get readable(): boolean {
    return this.#compile().readable;
  }

  /** What the backtracking engine is to run, when the pattern needs it (and has not given up). */
  get backtracking(): BacktrackingPattern | undefined {
    const s = this.#compile();
    return 'backtracking' in s ? s.backtracking : undefined;
  }

  /** The backtracking engine's verdict for a name (by its shifted view). */
  record(shifted: string, found: boolean): void {
    const s = this.#compile();
    if (!('backtracking' in s)) return;
    if (s.verdicts.size >= MAX_VERDICTS) s.verdicts.clear();
    s.verdicts.set(shifted, found);
  }

  /**
   * The backtracking engine ran out of its budget on this pattern: from now on it is unreadable,
   * for every name, so a catastrophic pattern costs one budget and not one per object.
   */
  giveUp(why: string): void {
    this.#state = { readable: false, why };
  }

  /** Why this bot cannot read the pattern; undefined when it can. */
  get why(): string | undefined {
    const s = this.#compile();
    return s.readable ? undefined : s.why;
  }

  /** Does the broker's pattern find this name? A search, over bytes. */
  match(name: NameView): MatchResult {
    const bytes = name[this.#view];
    const prefix = this.#prefix;
    if (prefix !== undefined) {
      const ok = this.#caseless
        ? bytes.slice(0, prefix.length).toLowerCase() === prefix
        : bytes.startsWith(prefix);
      if (!ok) return false;
    }
    const state = this.#compile();
    if (!state.readable) return 'undecidable';
    if (this.#usesSpace && bytes.includes('\v')) return 'undecidable';
    // The translation reads `$` as PCRE does (before a final newline too): no doubt left there.
    if ('backtracking' in state) {
      const found = state.verdicts.get(name.shifted);
      if (found !== undefined) return found;
      name.pending?.add(this);
      return 'undecidable';
    }
    if (this.#usesDollar && bytes.includes('\n')) return 'undecidable';
    if (this.#caseless && this.#view === 'latin1' && hasFoldableLatin1(bytes)) return 'undecidable';
    const lit = this.#literal;
    if (lit) {
      if (lit.start && lit.end) return bytes === lit.text;
      if (lit.start) return bytes.startsWith(lit.text);
      if (lit.end) return bytes.endsWith(lit.text);
      return bytes.includes(lit.text);
    }
    // A name without one of the texts every match holds is not found: the engine is not asked
    // (a whole-vhost pass reads `^svc\d+\.events\.` against every name starting `svc`).
    const required = this.#required;
    if (required !== undefined) for (const text of required) if (!bytes.includes(text)) return false;
    return state.re ? state.re.test(bytes) : false;
  }
}

/** The ASCII literal every name a pattern matches must start with (see `literalPrefix`). */
export interface LiteralPrefix {
  readonly text: string;
  /** The pattern starts with `(?i)`: the prefix is compared without case (ASCII folding, as PCRE's tables). */
  readonly caseless: boolean;
}

const PREFIX_CHAR = /[A-Za-z0-9_\-/:@#%&=,;'"!~ <>]/;
const ESCAPED_PUNCTUATION = /[!-/:-@[-`{-~]/;

/**
 * The ASCII literal every name a pattern matches must start with, when that is plain to see:
 * `^` (after a leading `(?i)`) then literal characters, no alternation outside a group. A name
 * that does not start with it cannot match, whatever the rest of the pattern says, so this both
 * decides names before any engine runs and files policies for the index (`policyIndex.ts`).
 * ASCII only, so a name's own string can be compared (a multi-byte character never equals an
 * ASCII one). Undefined when there is no such prefix.
 */
export function literalPrefix(pattern: string): LiteralPrefix | undefined {
  const caseless = pattern.startsWith('(?i)^');
  const start = caseless ? 5 : 1;
  if ((!caseless && !pattern.startsWith('^')) || hasTopLevelAlternation(pattern)) return undefined;
  const units: string[] = [];
  let i = start;
  for (; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (PREFIX_CHAR.test(c)) units.push(c);
    else if (c === '\\' && ESCAPED_PUNCTUATION.test(pattern[i + 1] ?? 'a'))
      units.push(pattern[++i] as string);
    else break;
  }
  // A quantifier after the prefix makes its last character optional.
  if (i < pattern.length && '*?{+'.includes(pattern[i] as string)) units.pop();
  const text = units.join('');
  return text === '' ? undefined : { text, caseless };
}

/**
 * Texts (ASCII, two characters or more) every string the pattern finds contains, when that is
 * plain to see: a pattern of literal characters, `\d`, `\w` and `.`, each optionally quantified
 * (`*`, `+`, `?`), an optional leading `^` and trailing `$`, and nothing else (no group, class,
 * alternation, brace or flag). A run of unquantified literal characters must appear as it is in
 * whatever the pattern finds. Undefined when there is none, or the pattern is anything more.
 */
export function requiredLiterals(pattern: string): string[] | undefined {
  const runs: string[] = [];
  let run = '';
  const flush = () => {
    if (run.length >= 2) runs.push(run);
    run = '';
  };
  let i = pattern.startsWith('^') ? 1 : 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    let literal: string | undefined;
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === undefined) return undefined;
      if (ESCAPED_PUNCTUATION.test(n)) literal = n;
      else if (n !== 'd' && n !== 'w') return undefined;
      i += 2;
    } else if (c === '.') {
      i += 1;
    } else if (c === '$' && i === pattern.length - 1) {
      i += 1;
    } else if (PREFIX_CHAR.test(c)) {
      literal = c;
      i += 1;
    } else return undefined;
    const q = pattern[i];
    if (q === '*' || q === '+' || q === '?') {
      i += 1;
      // Lazy or possessive: the same texts.
      if (pattern[i] === '?' || pattern[i] === '+') i += 1;
      flush();
    } else if (literal === undefined) flush();
    else run += literal;
  }
  flush();
  return runs.length > 0 ? runs : undefined;
}

/** `a|b` outside any group or class: the prefix of one branch says nothing about the other. */
export function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

export function compilePattern(pattern: string): CompiledPattern {
  return new CompiledPattern(pattern);
}

function hasFoldableLatin1(bytes: string): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes.charCodeAt(i);
    if (c >= 0xc0 && c !== 0xd7 && c !== 0xf7) return true;
    if (c === 0xb5) return true;
  }
  return false;
}

/** Does the broker's pattern match this name? A search, over bytes. */
export function matchName(pattern: CompiledPattern, name: string): MatchResult {
  return pattern.match(nameView(name));
}

/**
 * Reads each distinct pattern once. Policies share patterns often, and a long-running bot asks
 * about the same vhost again and again.
 */
export class PatternCache {
  readonly #cache = new Map<string, CompiledPattern>();
  constructor(private readonly limit = 50_000) {}

  get(pattern: string): CompiledPattern {
    let compiled = this.#cache.get(pattern);
    if (!compiled) {
      compiled = new CompiledPattern(pattern);
      if (this.#cache.size >= this.limit) this.#cache.clear();
      this.#cache.set(pattern, compiled);
    }
    return compiled;
  }
}
