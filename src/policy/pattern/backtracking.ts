/**
 * The patterns RE2 cannot read (lookahead, lookbehind, backreferences), translated for a
 * backtracking engine: JavaScript's RegExp, run over the same shifted byte view as RE2 (one
 * character per byte; bytes 0x80–0xFF moved to U+2880–U+28FF, which have no case and belong to no
 * class, as PCRE's default tables see them). Only syntax whose meaning is the same in PCRE and in
 * JavaScript is translated; anything else (atomic groups, possessive quantifiers, `\Z`, `(*VERB)`,
 * POSIX classes, `\p{…}`, inline flags other than a leading `(?i)`, ...) stays unreadable, with
 * the reason. Pure: the engine runs elsewhere (src/patterns/), off the main thread, with a budget.
 *
 * Where the two differ and this translation bridges them:
 * - `.` is "not a newline" in PCRE; JavaScript's also refuses `\r`: written `[^\n]`.
 * - `$` also matches before a final newline in PCRE: written `(?=\n?$)`.
 * - a backreference to a group that did not take part fails in PCRE and matches empty in
 *   JavaScript: only backreferences to a group closed before them, outside any alternation,
 *   optional quantifier or lookaround, are translated; others stay unreadable.
 */

export type Backtracking = { readonly source: string; readonly flags: string } | { readonly why: string };

const HIGH_BASE = 0x2800;

/** A character of the shifted view, escaped. */
function charEscape(c: number): string {
  return `\\u${c.toString(16).padStart(4, '0')}`;
}

/** A byte named by `\xHH`, as its character in the shifted view. */
function byteEscape(b: number): string {
  return charEscape(b < 0x80 ? b : HIGH_BASE + b);
}

const SIMPLE_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S', 'b', 'B', 'n', 't', 'r', 'f']);

interface Group {
  readonly index: number | undefined;
  readonly lookaround: boolean;
  alternation: boolean;
}

/**
 * `pattern` as the shifted view has it (see pattern.ts `shiftedView`): every byte one character.
 * Returns the JavaScript source and flags, or why the pattern stays unreadable.
 */
export function toBacktracking(pattern: string): Backtracking {
  let p = pattern;
  let flags = '';
  if (p.startsWith('(?i)')) {
    flags = 'i';
    p = p.slice(4);
  }
  const refuse = (what: string): Backtracking => ({
    why: `${what}: neither engine this bot has reads it the way the broker's PCRE does`,
  });
  let out = '';
  const stack: Group[] = [];
  let topAlternation = false;
  let groups = 0;
  /** Per capture group: the output position it closes at, and whether it may be left unset. */
  const closedAt = new Map<number, number>();
  const optional = new Set<number>();
  const backrefs: { group: number; where: number }[] = [];
  /** The group just closed, for the quantifier that may follow it. */
  let lastGroup: { index: number | undefined; inner: number[] } | undefined;
  const innerOf = new Map<Group, number[]>();
  const inGroupStack = () => stack.some((g) => g.lookaround);

  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    const justClosed = lastGroup;
    lastGroup = undefined;
    if (c === '\\') {
      const n = p[i + 1];
      if (n === undefined) return refuse('a trailing backslash');
      i++;
      if (/[1-9]/.test(n)) {
        if (/[0-9]/.test(p[i + 1] ?? '')) return refuse('a backreference above \\9');
        if (inGroupStack()) return refuse('a backreference inside a lookaround');
        backrefs.push({ group: Number(n), where: out.length });
        out += `\\${n}`;
      } else if (n === 'x') {
        const m = /^\{([0-9a-fA-F]{1,2})\}|^([0-9a-fA-F]{2})/.exec(p.slice(i + 1));
        if (!m) return refuse('a \\x escape that is not one byte');
        out += byteEscape(Number.parseInt(m[1] ?? m[2] ?? '', 16));
        i += m[0].length;
      } else if (SIMPLE_ESCAPES.has(n)) {
        out += `\\${n}`;
      } else if (/[A-Za-z0-9]/.test(n)) {
        return refuse(`the escape \\${n}`);
      } else {
        out += charEscape(n.charCodeAt(0));
      }
      continue;
    }
    if (c === '[') {
      const end = readClass(p, i);
      if (typeof end === 'string') return refuse(end);
      out += end.source;
      i = end.end;
      continue;
    }
    if (c === '(') {
      const rest = p.slice(i + 1);
      let group: Group;
      if (rest.startsWith('?:')) {
        group = { index: undefined, lookaround: false, alternation: false };
        out += '(?:';
        i += 2;
      } else if (/^\?<?[=!]/.test(rest)) {
        const opener = rest.startsWith('?<') ? rest.slice(0, 3) : rest.slice(0, 2);
        group = { index: undefined, lookaround: true, alternation: false };
        out += `(${opener}`;
        i += opener.length;
      } else if (rest.startsWith('?')) {
        return refuse(`the group opener (${rest.slice(0, 3)}`);
      } else if (rest.startsWith('*')) {
        return refuse('a (*VERB)');
      } else {
        groups++;
        group = { index: groups, lookaround: false, alternation: false };
        out += '(';
      }
      stack.push(group);
      innerOf.set(group, []);
      continue;
    }
    if (c === ')') {
      const g = stack.pop();
      if (!g) return refuse('an unbalanced parenthesis');
      out += ')';
      const inner = innerOf.get(g) ?? [];
      // Groups inside an alternative or a lookaround may not take part; the group itself does.
      if (g.alternation || g.lookaround) for (const k of inner) optional.add(k);
      if (g.index !== undefined) {
        closedAt.set(g.index, out.length);
        inner.push(g.index);
        if (g.lookaround || inGroupStack()) optional.add(g.index);
      }
      const parent = stack[stack.length - 1];
      if (parent) innerOf.get(parent)?.push(...inner);
      lastGroup = { index: g.index, inner };
      continue;
    }
    if (c === '|') {
      const g = stack[stack.length - 1];
      if (g) g.alternation = true;
      else topAlternation = true;
      out += '|';
      continue;
    }
    if (c === '*' || c === '+' || c === '?' || c === '{') {
      let q = c;
      if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
        if (!m) return refuse('a brace that is not a quantifier');
        q = m[0];
        i += m[0].length - 1;
        if (justClosed && m[1] === '0') for (const k of justClosed.inner) optional.add(k);
      } else if (justClosed && c !== '+') {
        for (const k of justClosed.inner) optional.add(k);
      }
      const next = p[i + 1];
      if (next === '+') return refuse('a possessive quantifier');
      if (next === '?') {
        q += '?';
        i++;
      }
      out += q;
      continue;
    }
    if (c === '.') {
      out += '[^\\n]';
      continue;
    }
    if (c === '$') {
      out += '(?=\\n?$)';
      continue;
    }
    if (c === '^') {
      out += '^';
      continue;
    }
    out += charEscape(c.charCodeAt(0));
  }
  if (stack.length > 0) return refuse('an unclosed group');
  for (const ref of backrefs) {
    const at = closedAt.get(ref.group);
    if (at === undefined || at > ref.where) return refuse('a backreference to a group not closed before it');
    if (topAlternation || optional.has(ref.group))
      return refuse('a backreference to a group that may not take part in the match');
  }
  return { source: out, flags };
}

const POSIX = /^\[:\^?[a-z]+:\]/;

/** A character class, `[` at `at`: its JavaScript source and where it ends, or what is refused. */
function readClass(p: string, at: number): { source: string; end: number } | string {
  let i = at + 1;
  let out = '[';
  if (p[i] === '^') {
    out += '^';
    i++;
  }
  // A `]` first is a literal in PCRE; JavaScript's `[]` matches nothing.
  if (p[i] === ']') {
    out += '\\]';
    i++;
  }
  for (; i < p.length; i++) {
    const c = p[i] as string;
    if (c === ']') return { source: `${out}]`, end: i };
    if (c === '[' && POSIX.test(p.slice(i))) return 'a POSIX class';
    if (c === '\\') {
      const n = p[i + 1];
      if (n === undefined) return 'a trailing backslash';
      i++;
      if (n === 'x') {
        const m = /^\{([0-9a-fA-F]{1,2})\}|^([0-9a-fA-F]{2})/.exec(p.slice(i + 1));
        if (!m) return 'a \\x escape that is not one byte';
        out += byteEscape(Number.parseInt(m[1] ?? m[2] ?? '', 16));
        i += m[0].length;
      } else if (SIMPLE_ESCAPES.has(n) && n !== 'b' && n !== 'B') {
        out += `\\${n}`;
      } else if (/[A-Za-z0-9]/.test(n)) {
        return `the escape \\${n} in a class`;
      } else {
        out += charEscape(n.charCodeAt(0));
      }
      continue;
    }
    out += c === '-' ? '-' : charEscape(c.charCodeAt(0));
  }
  return 'an unclosed class';
}
