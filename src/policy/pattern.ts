import { RE2JS } from 're2js';

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
 */

/** Longest pattern we read. 4.2.8+ brokers refuse longer ones themselves. */
export const MAX_PATTERN_BYTES = 1024;

export type CompiledPattern =
  | {
      readonly readable: true;
      readonly source: string;
      readonly anchored: boolean;
      /** @internal */ readonly re: RE2JS;
      /** @internal */ readonly view: keyof NameView;
      /** @internal */ readonly caseless: boolean;
      /** @internal */ readonly usesSpace: boolean;
      /** @internal */ readonly usesDollar: boolean;
      /** @internal */ readonly literal: Literal | undefined;
    }
  | { readonly readable: false; readonly source: string; readonly anchored: boolean; readonly why: string };

interface Literal {
  readonly start: boolean;
  readonly end: boolean;
  readonly text: string;
}

export type MatchResult = boolean | 'undecidable';

/** Bytes as one character each: how both pattern and name are handed to RE2. */
export function latin1View(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

const HIGH_BASE = 0x2800;

/** Bytes as one character each, high bytes moved to code points without case or class. */
export function shiftedView(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  let out = '';
  for (const b of bytes) out += String.fromCharCode(b < 0x80 ? b : HIGH_BASE + b);
  return out;
}

/** A name seen both ways, computed once per object. */
export interface NameView {
  readonly latin1: string;
  readonly shifted: string;
}

export function nameView(name: string): NameView {
  return { latin1: latin1View(name), shifted: shiftedView(name) };
}

/**
 * A pattern is anchored when every name it matches must start with a fixed prefix, which is what
 * people mean by "anchored": it begins with `^` or `\A`. Anything else searches inside names.
 */
export function isAnchored(pattern: string): boolean {
  const p = pattern.replace(/^\(\?[a-zA-Z]+\)/, '');
  return p.startsWith('^') || p.startsWith('\\A');
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

export function compilePattern(pattern: string): CompiledPattern {
  const anchored = isAnchored(pattern);
  const unreadable = (why: string): CompiledPattern => ({ readable: false, source: pattern, anchored, why });
  if (Buffer.byteLength(pattern, 'utf8') > MAX_PATTERN_BYTES) {
    return unreadable(`longer than ${MAX_PATTERN_BYTES} bytes`);
  }
  const esc = escapes(pattern);
  if (esc.has('v') || esc.has('V')) {
    return unreadable('\\v means vertical whitespace to the broker and a single character to this bot');
  }
  // Escapes that name a byte above 0x7F, or Unicode properties, need the bytes' Latin-1 identity.
  const needsLatin1 = /\\[pP]|\\x\{0*[89a-fA-F][0-9a-fA-F]\}|\\x[89a-fA-F][0-9a-fA-F]|\\x\{0*[1-9a-fA-F][0-9a-fA-F]{2,}\}/.test(pattern);
  const view: keyof NameView = needsLatin1 ? 'latin1' : 'shifted';
  let re: RE2JS;
  try {
    re = RE2JS.compile(needsLatin1 ? latin1View(pattern) : shiftedView(pattern));
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return unreadable(`not readable by a linear-time engine (${detail})`);
  }
  let caseless = false;
  for (const m of pattern.matchAll(FLAG_GROUP)) if (m[1]?.includes('i')) caseless = true;
  return {
    readable: true,
    source: pattern,
    anchored,
    re,
    view,
    caseless,
    usesSpace: esc.has('s') || esc.has('S') || pattern.includes('[:space:]'),
    usesDollar: pattern.includes('$'),
    literal: caseless ? undefined : literalForm(pattern, view),
  };
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
  return matchView(pattern, nameView(name));
}

/** The same, for a name already viewed as bytes (done once per object, not once per policy). */
export function matchView(pattern: CompiledPattern, name: NameView): MatchResult {
  if (!pattern.readable) return 'undecidable';
  const bytes = name[pattern.view];
  if (pattern.usesSpace && bytes.includes('\v')) return 'undecidable';
  if (pattern.usesDollar && bytes.includes('\n')) return 'undecidable';
  if (pattern.caseless && pattern.view === 'latin1' && hasFoldableLatin1(bytes)) return 'undecidable';
  const lit = pattern.literal;
  if (lit) {
    if (lit.start && lit.end) return bytes === lit.text;
    if (lit.start) return bytes.startsWith(lit.text);
    if (lit.end) return bytes.endsWith(lit.text);
    return bytes.includes(lit.text);
  }
  return pattern.re.test(bytes);
}

/**
 * Most real patterns are a literal, maybe between `^` and `$` (`^orders\.audit$`). Those are
 * answered with string comparisons, which keeps one object among 10,000 policies fast.
 */
function literalForm(pattern: string, view: keyof NameView): Literal | undefined {
  const m = /^(\^?)((?:[A-Za-z0-9_\-/:@#%&=,;'"!~ <>]|\\[^A-Za-z0-9])*)(\$?)$/.exec(pattern);
  if (!m) return undefined;
  const text = (m[2] ?? '').replace(/\\(.)/g, '$1');
  return { start: m[1] === '^', end: m[3] === '$', text: view === 'latin1' ? latin1View(text) : shiftedView(text) };
}

/**
 * Compiles each distinct pattern once. Policies share patterns often, and explaining one object
 * among 10,000 policies must not recompile them.
 */
export class PatternCache {
  readonly #cache = new Map<string, CompiledPattern>();
  constructor(private readonly limit = 50_000) {}

  get(pattern: string): CompiledPattern {
    let compiled = this.#cache.get(pattern);
    if (!compiled) {
      compiled = compilePattern(pattern);
      if (this.#cache.size >= this.limit) this.#cache.clear();
      this.#cache.set(pattern, compiled);
    }
    return compiled;
  }
}
