// Over 400 lines: PCRE's syntax is that long; escapes, classes, group openers and verbs each have a reader.
/**
 * The PCRE syntax checker: would the broker (its Erlang's `re:compile`, without the unicode
 * option) refuse this pattern, and where. The broker refuses a policy whose pattern does not
 * compile; this says so before anything is filed.
 *
 * Two engines: Erlang/OTP up to 27 compiles with PCRE 8, from 28 with PCRE2, and they differ
 * (measured on 3.10.8 with OTP 25, 4.0.5 with OTP 27, 4.3.6 with OTP 29): PCRE 8 refuses a
 * recursion that could loop without consuming (`(?R)`, `a|(?R)`) and any lookbehind of variable
 * length; PCRE2 takes both, refusing only a lookbehind whose length has no bound (`(?<=a+)`),
 * and takes `(?^)`. Both refuse two groups of one name (`(?<n>a)(?<n>b)`) unless `(?J)` is in
 * force, and two names for one number of a branch reset. Without the engine, only what both
 * refuse is refused.
 */

import type { BrokerVersion } from '../types.ts';

export interface PatternError {
  readonly message: string;
  readonly offset: number;
}

/** `re`'s regular expression library: PCRE 8 up to Erlang/OTP 27, PCRE2 from 28. */
export type RegexEngine = 'pcre' | 'pcre2';

/** The engine of a broker whose Erlang release is known. */
export function regexEngine(version: BrokerVersion): RegexEngine | undefined {
  if (version.erlang === undefined) return undefined;
  return version.erlang >= 28 ? 'pcre2' : 'pcre';
}

const POSIX_CLASSES = new Set([
  'alpha',
  'digit',
  'alnum',
  'ascii',
  'blank',
  'cntrl',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'word',
  'xdigit',
]);

/** Property names PCRE 8.x knows after \\p / \\P: general categories, specials, scripts. */
const UNICODE_PROPERTIES = new Set(
  [
    'C Cc Cf Cn Co Cs L L& Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs',
    'Any Xan Xps Xsp Xwd Xuc',
    'Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Bhaiksuki',
    'Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee',
    'Common Coptic Cuneiform Cypriot Cyrillic Deseret Devanagari Dogra Duployan Egyptian_Hieroglyphs Elbasan',
    'Ethiopic Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Han Hangul Hanifi_Rohingya',
    'Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited Inscriptional_Pahlavi Inscriptional_Parthian',
    'Javanese Kaithi Kannada Katakana Kayah_Li Kharoshthi Khmer Khojki Khudawadi Lao Latin Lepcha Limbu Linear_A',
    'Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin',
    'Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar',
    'Nabataean New_Tai_Lue Newa Nko Nushu Ogham Ol_Chiki Old_Hungarian Old_Italic Old_North_Arabian Old_Permic',
    'Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau',
    'Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting',
    'Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet',
    'Takri Tamil Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta Ugaritic Vai Warang_Citi Yi Zanabazar_Square',
  ]
    .join(' ')
    .split(' '),
);

/**
 * Groups nested deeper than this are refused, as the broker refuses them ("regular expression is
 * too complicated"). Measured on 3.10.8 and 4.0.5 (both alike): 798 nested capturing groups pass
 * and 799 do not, but 798 with an alternation inside fail, as do 400 pairs of `(a(?:b|`; plain
 * non-capturing groups and lookaheads pass up to 1,330. PCRE's compile stack sets the limit, so
 * no simple count matches every shape: this one refuses everything seen refused, and only
 * non-capturing nests of 798–1,330 groups that the broker would take.
 */
export const MAX_GROUP_DEPTH = 797;

const START_VERBS =
  /^\(\*(?:UTF8|UTF|UCP|CR|LF|CRLF|ANYCRLF|ANY|BSR_ANYCRLF|BSR_UNICODE|NO_START_OPT|NO_AUTO_POSSESS|LIMIT_MATCH=\d+|LIMIT_RECURSION=\d+)\)/;
const VERB = /^\(\*(?:ACCEPT|FAIL|F|COMMIT|PRUNE|SKIP|THEN)(?::[^)]*)?\)|^\(\*(?:MARK)?:[^)]+\)/;

/**
 * Where a recursion's path from the start of the group it calls stands (PCRE 8's
 * could_be_empty): `open` nothing that must consume yet; `must` something that must; `empty`
 * decided empty (a call to a group not seen yet); `{ call }` a call to a group open at the time
 * (empty while that group is open; what it consumes once closed is not worked out, and is
 * taken to consume, so that nothing the broker takes is refused).
 */
type BranchState = 'open' | 'must' | 'empty' | { readonly call: number };

/** One item of a branch, before a quantifier may follow it. */
type Item = 'must' | 'neutral' | 'empty' | { readonly call: number };

/** An open group (or the whole pattern, the first). */
interface Frame {
  readonly kind: 'top' | 'group' | 'lookahead' | 'lookbehind' | 'conditional';
  /** Its group number, when it captures. */
  readonly capture?: number;
  /** `(?J)` in force: groups may share a name. */
  dupnames: boolean;
  /** A branch reset `(?|`: the group count at its start, and the most any branch reached. */
  readonly resetFrom?: number;
  resetMax?: number;
  branches: number;
  /** Every finished branch must consume. */
  allMust: boolean;
  state: BranchState;
  pending: Item | undefined;
}

/**
 * The compile errors the broker's `re:compile` gives for a pattern, as far as a structural read
 * can tell: unbalanced parentheses and brackets, a quantifier with nothing to repeat, bad ranges
 * and counts, unknown group syntax, a backslash at the end, references to groups that do not
 * exist, two groups of one name, a recursion that could loop (PCRE 8), a lookbehind of variable
 * length (PCRE 8) or of no bound (PCRE2). Null when none of those is found, which is not a
 * promise: the broker may still refuse it. Patterns in extended mode (`(?x)`) are not read.
 * `engine` (regexEngine): without it, only what both engines refuse.
 */
export function pcreSyntaxError(pattern: string, engine?: RegexEngine): PatternError | null {
  const err = (message: string, offset: number): PatternError => ({ message, offset });
  let i = 0;
  for (let m = START_VERBS.exec(pattern); m; m = START_VERBS.exec(pattern.slice(i))) i += m[0].length;
  const utf = /^(?:\(\*[A-Z_=0-9]+\))*\(\*UTF8?\)/.test(pattern);
  /** Open groups, the whole pattern first. */
  const stack: Frame[] = [frame('top', false, undefined)];
  let lookbehinds = 0;
  let conditionals = 0;
  let groups = 0;
  let maxRef = 0;
  let maxRefAt = 0;
  /** Each name's group numbers, and each named number's name. */
  const numbersOf = new Map<string, number[]>();
  const nameOf = new Map<number, string>();
  /** Closed groups, by number: whether they must consume. */
  const closedMust = new Map<number, boolean>();
  const nameRefs: { name: string; at: number }[] = [];
  let canRepeat = false;
  /** After a quantifier: one `+` or `?` may follow, then nothing. */
  let afterQuantifier = false;
  const n = pattern.length;
  const inner = () => stack[stack.length - 1] as Frame;
  const isOpen = (group: number) => group === 0 || stack.some((f) => f.capture === group);

  /** The last item of the innermost branch, settled: no quantifier follows it now. */
  const settle = (f: Frame = inner()) => {
    const item = f.pending;
    f.pending = undefined;
    if (item === undefined || item === 'neutral' || f.state !== 'open') return;
    f.state = item;
  };
  const add = (item: Item) => {
    const f = inner();
    settle(f);
    f.pending = item;
  };
  const consumes = (state: BranchState) => state === 'must' || typeof state === 'object';

  const quantifier = (
    at: number,
    fixed: boolean,
    bounded: boolean,
    mayBeNone: boolean,
  ): PatternError | null => {
    if (!canRepeat) return err('nothing to repeat', at);
    if (lookbehinds > 0 && !fixed) {
      if (!bounded)
        return err(
          engine === 'pcre2'
            ? 'length of lookbehind assertion is not limited'
            : 'lookbehind assertion is not fixed length',
          at,
        );
      if (engine === 'pcre') return err('lookbehind assertion is not fixed length', at);
    }
    canRepeat = false;
    afterQuantifier = true;
    const f = inner();
    const item = f.pending;
    // A repeated call is wrapped in a group of its own: it decides nothing (PCRE 8).
    if (item !== undefined && item !== 'neutral' && (mayBeNone || item !== 'must')) f.pending = 'neutral';
    return null;
  };

  /**
   * A call of group `group` (0: the whole pattern) at `at`. PCRE 8 refuses one inside the group it
   * calls when nothing on the way from that group's start must consume (could_be_empty), except
   * inside a conditional group; a call to a group not seen yet is checked by neither engine.
   */
  const call = (group: number, at: number): PatternError | null => {
    if (group > maxRef) {
      maxRef = group;
      maxRefAt = at;
    }
    if (!isOpen(group)) {
      const closed = closedMust.get(group);
      add(closed === undefined ? 'empty' : closed ? 'must' : 'neutral');
      return null;
    }
    settle();
    if (engine === 'pcre' && conditionals === 0) {
      const from = group === 0 ? 0 : stack.findIndex((f) => f.capture === group);
      const loops = stack
        .slice(from)
        .every(
          (f) =>
            f.state === 'open' ||
            f.state === 'empty' ||
            (typeof f.state === 'object' && isOpen(f.state.call)),
        );
      if (loops) return err('recursive call could loop indefinitely', at);
    }
    inner().pending = { call: group };
    return null;
  };

  /** A named group's name, checked against the others of its number and of its name. */
  const named = (name: string, number: number, at: number): PatternError | null => {
    const other = nameOf.get(number);
    if (other !== undefined && other !== name)
      return err('different names for subpatterns of the same number are not allowed', at);
    const numbers = numbersOf.get(name) ?? [];
    if (numbers.length > 0 && !numbers.includes(number) && !inner().dupnames)
      return err('two named subpatterns have the same name', at);
    nameOf.set(number, name);
    if (!numbers.includes(number)) numbersOf.set(name, [...numbers, number]);
    return null;
  };

  /** A call as written: its group, or a name not seen yet (a group further on, checked at the end). */
  const callOf = (target: CallTarget, at: number): PatternError | null => {
    if ('name' in target && !numbersOf.has(target.name)) {
      nameRefs.push({ name: target.name, at });
      add('empty');
      return null;
    }
    const group = callTarget(target, groups, numbersOf);
    if (group === null) return err('reference to non-existent subpattern', at);
    return call(group, at);
  };

  while (i < n) {
    const c = pattern[i] as string;
    if (afterQuantifier && (c === '+' || c === '?')) {
      afterQuantifier = false;
      i++;
      continue;
    }
    afterQuantifier = false;
    switch (c) {
      case '\\': {
        const r = readEscape(pattern, i, utf);
        if ('message' in r) return r;
        if (r.ref !== undefined && r.call === undefined && r.ref > maxRef) {
          maxRef = r.ref;
          maxRefAt = i;
        }
        if (r.name !== undefined) nameRefs.push({ name: r.name, at: i });
        if (lookbehinds > 0 && r.variable && engine === 'pcre')
          return err('lookbehind assertion is not fixed length', i);
        if (r.call !== undefined) {
          const e = callOf(r.call, i);
          if (e) return e;
        } else {
          add(r.backref || !r.atom ? 'neutral' : 'must');
        }
        canRepeat = r.atom;
        i = r.end;
        break;
      }
      case '[': {
        const r = readClass(pattern, i, utf);
        if ('message' in r) return r;
        add('must');
        canRepeat = true;
        i = r.end;
        break;
      }
      case '(': {
        if (pattern.startsWith('(*', i)) {
          const m = VERB.exec(pattern.slice(i));
          if (!m) return err('(*VERB) not recognized or malformed', i);
          add('neutral');
          i += m[0].length;
          canRepeat = false;
          break;
        }
        if (stack.length > MAX_GROUP_DEPTH) return err('regular expression is too complicated', i);
        const parent = inner();
        if (pattern[i + 1] !== '?') {
          groups++;
          settle(parent);
          stack.push(frame('group', parent.dupnames, groups));
          canRepeat = false;
          i++;
          break;
        }
        const r = readGroupStart(pattern, i, engine);
        if ('message' in r) return r;
        if (r.extended) return null;
        if (r.capturing) groups++;
        if (r.name !== undefined) {
          const e = named(r.name, groups, i);
          if (e) return e;
        }
        if (r.ref !== undefined && r.ref > maxRef) {
          maxRef = r.ref;
          maxRefAt = i;
        }
        if (r.refName !== undefined) nameRefs.push({ name: r.refName, at: i });
        if (r.dupnames !== undefined && !r.opens) parent.dupnames = r.dupnames;
        if (r.call !== undefined) {
          const e = callOf(r.call, i);
          if (e) return e;
        } else if (r.opens) {
          settle(parent);
          const f = frame(r.kind ?? 'group', r.dupnames ?? parent.dupnames, r.capturing ? groups : undefined);
          if (r.branchReset) stack.push({ ...f, resetFrom: groups, resetMax: groups });
          else stack.push(f);
          if (r.kind === 'lookbehind') lookbehinds++;
          if (r.kind === 'conditional') conditionals++;
        } else {
          // A comment, an option setting, a callout, a back reference by name: nothing consumed.
          add('neutral');
        }
        canRepeat = r.atom;
        i = r.end;
        break;
      }
      case ')': {
        if (stack.length === 1) return err('unmatched parentheses', i);
        const f = stack.pop() as Frame;
        settle(f);
        if (f.kind === 'lookbehind') lookbehinds--;
        if (f.kind === 'conditional') conditionals--;
        if (f.resetFrom !== undefined) groups = Math.max(groups, f.resetMax ?? groups);
        const must =
          f.allMust &&
          consumes(f.state) &&
          (f.kind === 'group' || (f.kind === 'conditional' && f.branches > 1));
        if (f.capture !== undefined) closedMust.set(f.capture, must);
        add(must ? 'must' : 'neutral');
        canRepeat = true;
        i++;
        break;
      }
      case '|': {
        const f = inner();
        settle(f);
        f.allMust &&= consumes(f.state);
        f.state = 'open';
        f.branches++;
        if (f.resetFrom !== undefined) {
          f.resetMax = Math.max(f.resetMax ?? groups, groups);
          groups = f.resetFrom;
        }
        canRepeat = false;
        i++;
        break;
      }
      case '*':
      case '+':
      case '?': {
        const e = quantifier(i, false, c === '?', c !== '+');
        if (e) return e;
        i++;
        break;
      }
      case '{': {
        const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(pattern.slice(i));
        if (!m) {
          add('must');
          canRepeat = true;
          i++;
          break;
        }
        const min = Number(m[1]);
        const max = m[3] ? Number(m[3]) : undefined;
        if (min > 65535 || (max !== undefined && max > 65535))
          return err('number too big in {} quantifier', i);
        if (max !== undefined && max < min) return err('numbers out of order in {} quantifier', i);
        const e = quantifier(
          i,
          m[2] === undefined || max === min,
          m[2] === undefined || max !== undefined,
          min === 0,
        );
        if (e) return e;
        i += m[0].length;
        break;
      }
      case '^':
      case '$':
        // Unlike an assertion group, a bare assertion cannot be repeated.
        add('neutral');
        canRepeat = false;
        i++;
        break;
      default:
        add('must');
        canRepeat = true;
        i++;
    }
  }
  if (stack.length > 1) return err('missing )', n);
  if (maxRef > groups) return err('reference to non-existent subpattern', maxRefAt);
  const unknown = nameRefs.find((r) => !numbersOf.has(r.name));
  if (unknown) return err('reference to non-existent subpattern', unknown.at);
  return null;
}

function frame(kind: Frame['kind'], dupnames: boolean, capture: number | undefined): Frame {
  return {
    kind,
    ...(capture === undefined ? {} : { capture }),
    dupnames,
    branches: 1,
    allMust: true,
    state: 'open',
    pending: undefined,
  };
}

/** An error as a refusal says it: the message and where, in the pattern's own words. */
export function patternErrorWords(pattern: string, error: PatternError): string {
  return `${error.message} (near ${JSON.stringify(pattern.slice(error.offset, error.offset + 12) || 'the end')})`;
}

/** A call's target: `(?2)`, `(?-1)` (the last group opened), `(?+1)` (the next), `(?&name)`. */
type CallTarget = { readonly number: number } | { readonly relative: number } | { readonly name: string };

/** The group number a call names; null when there is none (`(?-1)` before any group). */
function callTarget(
  target: CallTarget,
  groups: number,
  numbersOf: ReadonlyMap<string, readonly number[]>,
): number | null {
  if ('number' in target) return target.number;
  if ('relative' in target) {
    const number = target.relative < 0 ? groups + target.relative + 1 : groups + target.relative;
    return number > 0 ? number : null;
  }
  return numbersOf.get(target.name)?.[0] ?? null;
}

type Read =
  | {
      end: number;
      /** It can be repeated. */
      atom: boolean;
      ref?: number;
      name?: string;
      variable?: boolean;
      /** A back reference: it may match nothing. */
      backref?: boolean;
      /** A call of a group (`\\g<1>`, `\\g'name'`). */
      call?: CallTarget;
    }
  | PatternError;

function readEscape(p: string, at: number, utf: boolean): Read {
  const next = p[at + 1];
  if (next === undefined) return { message: '\\ at end of pattern', offset: at };
  if (next === 'Q') {
    const close = p.indexOf('\\E', at + 2);
    return { end: close < 0 ? p.length : close + 2, atom: close !== at + 2 };
  }
  if (next === 'E') return { end: at + 2, atom: false };
  if ('LlNUu'.includes(next) && !(next === 'N' && p[at + 2] !== '{')) {
    return { message: 'PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u', offset: at };
  }
  if (next === 'c') {
    if (at + 2 >= p.length) return { message: '\\c at end of pattern', offset: at };
    return { end: at + 3, atom: true };
  }
  if (next === 'x' && p[at + 2] === '{') {
    const m = /^\{([0-9a-fA-F]*)\}/.exec(p.slice(at + 2));
    if (!m) return { end: at + 2, atom: true };
    const code = Number.parseInt(m[1] || '0', 16);
    if (code > (utf ? 0x10ffff : 0xff))
      return { message: 'character value in \\x{} or \\o{} is too large', offset: at };
    return { end: at + 2 + m[0].length, atom: true };
  }
  if (next === 'g' || next === 'k') {
    const m = /^\\[gk](?:\{([^}]+)\}|<([^>]+)>|'([^']+)'|([+-]?\d+))/.exec(p.slice(at));
    if (!m)
      return {
        message: `\\${next} is not followed by a braced, angle-bracketed, or quoted name/number`,
        offset: at,
      };
    const target = m[1] ?? m[2] ?? m[3] ?? m[4] ?? '';
    const end = at + m[0].length;
    // \g<…> and \g'…' call a group (Oniguruma's form, which PCRE takes); the others refer back.
    if (next === 'g' && (m[2] !== undefined || m[3] !== undefined)) {
      const call: CallTarget = /^\d+$/.test(target)
        ? { number: Number(target) }
        : /^[+-]\d+$/.test(target)
          ? { relative: Number(target) }
          : { name: target };
      // In a lookbehind PCRE 8 measures the group called: taken to be fixed, never refused here.
      return { end, atom: true, call };
    }
    if (/^\d+$/.test(target)) return { end, atom: true, ref: Number(target), variable: true, backref: true };
    if (/^[+-]\d+$/.test(target)) return { end, atom: true, variable: true, backref: true };
    return { end, atom: true, name: target, variable: true, backref: true };
  }
  if (next >= '1' && next <= '9') {
    const m = /^\d+/.exec(p.slice(at + 1)) as RegExpExecArray;
    const value = Number(m[0]);
    // \1–\7 always refer to a group (\8 and \9 are the digits when no such group exists);
    // longer numbers are octal unless that many groups could exist.
    if (value < 8)
      return { end: at + 1 + m[0].length, atom: true, ref: value, variable: true, backref: true };
    return { end: at + 1 + m[0].length, atom: true };
  }
  if ('bBAZzGK'.includes(next)) return { end: at + 2, atom: false };
  if (next === 'R' || next === 'X') return { end: at + 2, atom: true, variable: true };
  if (next === 'p' || next === 'P') {
    const m = /^\\[pP](?:\{\^?([^}]*)\}|([A-Za-z]))/.exec(p.slice(at));
    if (!m) return { message: 'malformed \\P or \\p sequence', offset: at };
    if (!UNICODE_PROPERTIES.has(m[1] ?? m[2] ?? '')) {
      return { message: 'unknown property name after \\P or \\p', offset: at };
    }
    return { end: at + m[0].length, atom: true };
  }
  return { end: at + 2, atom: true };
}

function readClass(p: string, at: number, utf: boolean): Read {
  let i = at + 1;
  if (p[i] === '^') i++;
  let first = true;
  let prev: number | undefined;
  let rangeFrom: number | undefined;
  let rangeAt = 0;
  while (i < p.length) {
    const c = p[i] as string;
    if (c === ']' && !first) return { end: i + 1, atom: true };
    first = false;
    let code: number | undefined;
    if (c === '[' && p[i + 1] === ':') {
      const m = /^\[:(\^?)([a-z]*):\]/.exec(p.slice(i));
      if (m) {
        if (!POSIX_CLASSES.has(m[2] ?? '')) return { message: 'unknown POSIX class name', offset: i };
        i += m[0].length;
        prev = undefined;
        rangeFrom = undefined;
        continue;
      }
    }
    if (c === '\\') {
      const next = p[i + 1];
      if (next === undefined) return { message: '\\ at end of pattern', offset: i };
      if (next === 'x' && p[i + 2] === '{') {
        const m = /^\{([0-9a-fA-F]*)\}/.exec(p.slice(i + 2));
        if (m) {
          code = Number.parseInt(m[1] || '0', 16);
          if (code > (utf ? 0x10ffff : 0xff))
            return { message: 'character value in \\x{} or \\o{} is too large', offset: i };
          i += 2 + m[0].length;
        } else {
          i += 2;
        }
      } else if (next === 'Q') {
        const close = p.indexOf('\\E', i + 2);
        i = close < 0 ? p.length : close + 2;
      } else if (/[dDsSwWhHvVpPbB]/.test(next) || /[A-Za-z0-9]/.test(next)) {
        // classes and named escapes: not a single character a range can use
        i += next === 'p' || next === 'P' ? (/^\\[pP](?:\{[^}]*\}|.)/.exec(p.slice(i))?.[0].length ?? 2) : 2;
        if (/[dDsSwWhHvVpP]/.test(next) && rangeFrom !== undefined) {
          return { message: 'invalid range in character class', offset: i };
        }
        prev = undefined;
        continue;
      } else {
        code = next.charCodeAt(0);
        i += 2;
      }
    } else {
      code = c.charCodeAt(0);
      i++;
    }
    if (rangeFrom !== undefined) {
      if (code !== undefined && code < rangeFrom)
        return { message: 'range out of order in character class', offset: rangeAt };
      rangeFrom = undefined;
      prev = undefined;
      continue;
    }
    if (code === 0x2d && prev !== undefined && p[i] !== ']') {
      rangeFrom = prev;
      rangeAt = i - 1;
      prev = undefined;
      continue;
    }
    prev = code;
  }
  return { message: 'missing terminating ] for character class', offset: p.length };
}

interface GroupStart {
  end: number;
  atom: boolean;
  opens: boolean;
  capturing: boolean;
  /** What kind of group it opens. */
  kind?: Exclude<Frame['kind'], 'top'>;
  /** A branch reset `(?|`: each branch numbers its groups from the same start. */
  branchReset?: boolean;
  extended?: boolean;
  /** `(?J)` set (true) or unset (false), for the rest of the group, or inside `(?J:…)`. */
  dupnames?: boolean;
  /** The group's own name. */
  name?: string;
  /** A group referred to by number or name. */
  ref?: number;
  refName?: string;
  /** A call of a group: `(?R)`, `(?2)`, `(?-1)`, `(?&name)`. */
  call?: CallTarget;
}

function readGroupStart(p: string, at: number, engine: RegexEngine | undefined): GroupStart | PatternError {
  const rest = p.slice(at + 2);
  // A group that opens (and is no atom), or a call that opens none (and is one).
  const start =
    (opens: boolean) =>
    (len: number, extra: Partial<GroupStart> = {}): GroupStart => ({
      end: at + 2 + len,
      atom: !opens,
      opens,
      capturing: false,
      ...extra,
    });
  const open = start(true);
  const call = start(false);
  if (/^[=!]/.test(rest)) return open(1, { kind: 'lookahead' });
  if (rest.startsWith('|')) return open(1, { branchReset: true });
  if (/^[:>]/.test(rest)) return open(1);
  if (/^<[=!]/.test(rest)) return open(2, { kind: 'lookbehind' });
  const named = /^(?:P?<|')([A-Za-z_][A-Za-z0-9_]*)([>'])/.exec(rest);
  if (named) return open(named[0].length, { capturing: true, name: named[1] as string });
  if (/^P?<|^'/.test(rest))
    return { message: 'syntax error in subpattern name (missing terminator)', offset: at };
  const backByName = /^P=([A-Za-z_][A-Za-z0-9_]*)\)/.exec(rest);
  if (backByName) return call(backByName[0].length, { refName: backByName[1] as string });
  const callByName = /^(?:P>|&)([A-Za-z_][A-Za-z0-9_]*)\)/.exec(rest);
  if (callByName) return call(callByName[0].length, { call: { name: callByName[1] as string } });
  const byNumber = /^(?:(R)|([+-])?(\d+))\)/.exec(rest);
  if (byNumber) {
    const [text, whole, sign, digits] = byNumber;
    const number = whole ? 0 : Number(digits);
    return call(text.length, {
      call: sign ? { relative: sign === '-' ? -number : number } : { number },
    });
  }
  // A condition: (?(1)…), (?(<name>)…), (?('name')…), (?(R)…), or an assertion.
  const condition = /^\((?:(\d+)|<([A-Za-z_]\w*)>|'([A-Za-z_]\w*)'|R\d*|R&\w+|DEFINE|([A-Za-z_]\w*))\)/.exec(
    rest,
  );
  if (condition) {
    const extra: Partial<GroupStart> = { kind: 'conditional' };
    if (condition[1] !== undefined) extra.ref = Number(condition[1]);
    const refName = condition[2] ?? condition[3];
    if (refName !== undefined) extra.refName = refName;
    return open(condition[0].length, extra);
  }
  if (rest.startsWith('#')) {
    const close = p.indexOf(')', at);
    if (close < 0) return { message: 'missing ) after comment', offset: at };
    return { end: close + 1, atom: false, opens: false, capturing: false };
  }
  // The condition is an assertion, read as the group it is.
  if (rest.startsWith('(')) return open(0, { kind: 'conditional' });
  const callout = /^C\d*\)/.exec(rest);
  if (callout) return { end: at + 2 + callout[0].length, atom: false, opens: false, capturing: false };
  // PCRE2 also takes `^` (every option unset) and `n` (no automatic capture).
  const flags =
    engine === 'pcre'
      ? /^()([imsxXUJ]*)(?:-([imsxXUJ]*))?([:)])/.exec(rest)
      : /^(\^?)([imnsxXUJ]*)(?:-([imnsxXUJ]*))?([:)])/.exec(rest);
  if (flags) {
    const [text, , set = '', unset = '', end] = flags;
    if (set.includes('x')) return { end: at, atom: false, opens: false, capturing: false, extended: true };
    const dupnames = set.includes('J') ? { dupnames: true } : unset.includes('J') ? { dupnames: false } : {};
    return end === ':'
      ? open(text.length, dupnames)
      : { end: at + 2 + text.length, atom: false, opens: false, capturing: false, ...dupnames };
  }
  return { message: 'unrecognized character after (? or (?-', offset: at + 2 };
}
