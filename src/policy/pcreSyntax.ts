/**
 * The PCRE syntax checker: would the broker (PCRE, as `re:compile` without the unicode option)
 * refuse this pattern, and where. The broker refuses a policy whose pattern does not compile;
 * this says so before anything is filed. Long because PCRE's syntax is: escapes, classes,
 * group openers and verbs each have their own reader below.
 */

export interface PatternError {
  readonly message: string;
  readonly offset: number;
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
 * The compile errors PCRE (the broker's `re:compile`, PCRE 8.x) gives for a pattern, as far as a
 * structural read can tell: unbalanced parentheses and brackets, a quantifier with nothing to
 * repeat, bad ranges and counts, unknown group syntax, a backslash at the end, references to
 * groups that do not exist. Null when none of those is found, which is not a promise: the
 * broker may still refuse it (a variable-length lookbehind, say). Patterns in extended mode
 * (`(?x)`) are not read.
 */
export function pcreSyntaxError(pattern: string): PatternError | null {
  const err = (message: string, offset: number): PatternError => ({ message, offset });
  let i = 0;
  for (let m = START_VERBS.exec(pattern); m; m = START_VERBS.exec(pattern.slice(i))) i += m[0].length;
  const utf = /^(?:\(\*[A-Z_=0-9]+\))*\(\*UTF8?\)/.test(pattern);
  /** Open groups: where each starts, and whether it is a lookbehind (whose length must be fixed). */
  const stack: { at: number; lookbehind: boolean }[] = [];
  let lookbehinds = 0;
  let groups = 0;
  let maxRef = 0;
  let maxRefAt = 0;
  const groupNames = new Set<string>();
  const nameRefs: { name: string; at: number }[] = [];
  let canRepeat = false;
  /** After a quantifier: one `+` or `?` may follow, then nothing. */
  let afterQuantifier = false;
  const n = pattern.length;

  const quantifier = (at: number, fixed: boolean): PatternError | null => {
    if (!canRepeat) return err('nothing to repeat', at);
    if (lookbehinds > 0 && !fixed) return err('lookbehind assertion is not fixed length', at);
    canRepeat = false;
    afterQuantifier = true;
    return null;
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
        if (r.ref !== undefined && r.ref > maxRef) {
          maxRef = r.ref;
          maxRefAt = i;
        }
        if (r.name !== undefined) nameRefs.push({ name: r.name, at: i });
        if (lookbehinds > 0 && r.variable) return err('lookbehind assertion is not fixed length', i);
        canRepeat = r.atom;
        i = r.end;
        break;
      }
      case '[': {
        const r = readClass(pattern, i, utf);
        if ('message' in r) return r;
        canRepeat = true;
        i = r.end;
        break;
      }
      case '(': {
        if (pattern.startsWith('(*', i)) {
          const m = VERB.exec(pattern.slice(i));
          if (!m) return err('(*VERB) not recognized or malformed', i);
          i += m[0].length;
          canRepeat = false;
          break;
        }
        if (stack.length >= MAX_GROUP_DEPTH) return err('regular expression is too complicated', i);
        if (pattern[i + 1] !== '?') {
          groups++;
          stack.push({ at: i, lookbehind: false });
          canRepeat = false;
          i++;
          break;
        }
        const r = readGroupStart(pattern, i);
        if ('message' in r) return r;
        if (r.extended) return null;
        if (r.capturing) groups++;
        if (r.name !== undefined) groupNames.add(r.name);
        if (r.ref !== undefined && r.ref > maxRef) {
          maxRef = r.ref;
          maxRefAt = i;
        }
        if (r.refName !== undefined) nameRefs.push({ name: r.refName, at: i });
        if (r.opens) {
          stack.push({ at: i, lookbehind: r.lookbehind === true });
          if (r.lookbehind) lookbehinds++;
        }
        canRepeat = r.atom;
        i = r.end;
        break;
      }
      case ')':
        if (stack.length === 0) return err('unmatched parentheses', i);
        if (stack.pop()?.lookbehind) lookbehinds--;
        canRepeat = true;
        i++;
        break;
      case '|':
        canRepeat = false;
        i++;
        break;
      case '*':
      case '+':
      case '?': {
        const e = quantifier(i, false);
        if (e) return e;
        i++;
        break;
      }
      case '{': {
        const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(pattern.slice(i));
        if (!m) {
          canRepeat = true;
          i++;
          break;
        }
        const min = Number(m[1]);
        const max = m[3] ? Number(m[3]) : undefined;
        if (min > 65535 || (max !== undefined && max > 65535))
          return err('number too big in {} quantifier', i);
        if (max !== undefined && max < min) return err('numbers out of order in {} quantifier', i);
        const e = quantifier(i, m[2] === undefined || max === min);
        if (e) return e;
        i += m[0].length;
        break;
      }
      case '^':
      case '$':
        // Unlike an assertion group, a bare assertion cannot be repeated.
        canRepeat = false;
        i++;
        break;
      default:
        canRepeat = true;
        i++;
    }
  }
  if (stack.length > 0) return err('missing )', n);
  if (maxRef > groups) return err('reference to non-existent subpattern', maxRefAt);
  const unknown = nameRefs.find((r) => !groupNames.has(r.name));
  if (unknown) return err('reference to non-existent subpattern', unknown.at);
  return null;
}

type Read = { end: number; atom: boolean; ref?: number; name?: string; variable?: boolean } | PatternError;

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
    if (/^\d+$/.test(target)) return { end, atom: true, ref: Number(target), variable: true };
    if (/^[+-]\d+$/.test(target)) return { end, atom: true, variable: true };
    return { end, atom: true, name: target, variable: true };
  }
  if (next >= '1' && next <= '9') {
    const m = /^\d+/.exec(p.slice(at + 1)) as RegExpExecArray;
    const value = Number(m[0]);
    // \1–\7 always refer to a group (\8 and \9 are the digits when no such group exists);
    // longer numbers are octal unless that many groups could exist.
    if (value < 8) return { end: at + 1 + m[0].length, atom: true, ref: value, variable: true };
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
  lookbehind?: boolean;
  extended?: boolean;
  /** The group's own name. */
  name?: string;
  /** A group referred to by number or name. */
  ref?: number;
  refName?: string;
}

function readGroupStart(p: string, at: number): GroupStart | PatternError {
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
  if (/^[:|>=!]/.test(rest)) return open(1);
  if (/^<[=!]/.test(rest)) return open(2, { lookbehind: true });
  const named = /^(?:P?<|')([A-Za-z_][A-Za-z0-9_]*)([>'])/.exec(rest);
  if (named) return open(named[0].length, { capturing: true, name: named[1] as string });
  if (/^P?<|^'/.test(rest))
    return { message: 'syntax error in subpattern name (missing terminator)', offset: at };
  const byName = /^(?:P=|P>|&)([A-Za-z_][A-Za-z0-9_]*)\)/.exec(rest);
  if (byName) return call(byName[0].length, { refName: byName[1] as string });
  const ref = /^(?:R|[+-]?\d+)\)/.exec(rest);
  if (ref) return call(ref[0].length);
  // A condition: (?(1)…), (?(<name>)…), (?('name')…), (?(R)…), or an assertion.
  const condition = /^\((?:(\d+)|<([A-Za-z_]\w*)>|'([A-Za-z_]\w*)'|R\d*|R&\w+|DEFINE|([A-Za-z_]\w*))\)/.exec(
    rest,
  );
  if (condition) {
    const extra: Partial<GroupStart> = {};
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
  if (rest.startsWith('(')) return open(0);
  const callout = /^C\d*\)/.exec(rest);
  if (callout) return { end: at + 2 + callout[0].length, atom: false, opens: false, capturing: false };
  const flags = /^([imsxXUJ]*)(?:-([imsxXUJ]*))?([:)])/.exec(rest);
  if (flags) {
    if (flags[1]?.includes('x'))
      return { end: at, atom: false, opens: false, capturing: false, extended: true };
    return flags[3] === ':'
      ? open(flags[0].length)
      : { end: at + 2 + flags[0].length, atom: false, opens: false, capturing: false };
  }
  return { message: 'unrecognized character after (? or (?-', offset: at + 2 };
}
