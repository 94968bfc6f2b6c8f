import { InputError } from '../core/index.ts';

/**
 * Slack text -> words, split for how people type in Slack rather than in a shell
 * (docs/commands.md, How Slack reads the words):
 *
 * - spaces separate words; single and double quotes group (inside double quotes `\"` and `\\`
 *   escape, inside single quotes nothing does), as a shell does;
 * - outside quotes a backslash is kept as typed, except before a quote or a space, which it
 *   escapes: `^orders\.audit$` arrives as typed, `a\ b` is one word;
 * - a `{` or `[` that starts a word runs to its matching bracket, spaces and quotes inside it
 *   kept as typed: `{"max-length": 7}` is one word, quotes and all. Brackets inside JSON strings
 *   do not count, and phones' curly double quotes delimit those strings too;
 * - curly quotes outside a bracket run group like straight ones (phones send them).
 *
 * Where the text can be read two ways, it is refused with both readings rather than one picked:
 * a bracket run that is not JSON and would split differently as plain words (`--pattern [a b]`:
 * one word, or `[a` and `b]`?), and a backslash before a quote or space that follows another
 * backslash (`C:\\ x`: the words `C:\\` and `x`, or `C:\ x`?).
 */

const WHITESPACE = /\s/;
const OPEN_QUOTE: Readonly<Record<string, '"' | "'">> = {
  '"': '"',
  "'": "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u2018': "'",
  '\u2019': "'",
};
const JSON_STRING_QUOTE = new Set(['"', '\u201c', '\u201d']);

/** A point where the text reads two ways; `choice` picks one of them when re-reading. */
type Choice = 'first' | 'second';
type Chooser = (at: number) => Choice;

class Fork {
  constructor(
    readonly at: number,
    readonly what: string,
  ) {}
}

/** `{`/`[` at `start` -> the index of its matching bracket, or -1 when it does not close. */
export function matchingBracket(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      if (c === '\\') i++;
      else if (JSON_STRING_QUOTE.has(c)) inString = false;
      continue;
    }
    if (JSON_STRING_QUOTE.has(c)) inString = true;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/** Phones' typographic double quotes as JSON's. */
export function foldDoubleQuotes(s: string): string {
  return s.replace(/[\u201c\u201d]/g, '"');
}

function isJson(s: string): boolean {
  try {
    JSON.parse(foldDoubleQuotes(s));
    return true;
  } catch {
    return false;
  }
}

function read(text: string, choose: Chooser, brackets = true): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  let quoteAt = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      const closes = OPEN_QUOTE[c] === quote;
      if (closes) quote = null;
      else if (c === '\\' && quote === '"' && (text[i + 1] === '"' || text[i + 1] === '\\')) cur += text[++i];
      else cur += c;
      continue;
    }
    if (brackets && !inWord && (c === '{' || c === '[')) {
      const end = matchingBracket(text, i);
      if (end > 0) {
        const run = text.slice(i, end + 1);
        const plain = isJson(run) ? null : plainReading(run);
        const readsSame = plain === null || (plain.length === 1 && plain[0] === run);
        if (readsSame || choose(i) === 'first') {
          cur += run;
          inWord = true;
          i = end;
          continue;
        }
      }
    }
    const quoteOf = OPEN_QUOTE[c];
    if (quoteOf) {
      quote = quoteOf;
      quoteAt = i;
      inWord = true;
    } else if (c === '\\') {
      const next = text[i + 1];
      const escapes = next !== undefined && (OPEN_QUOTE[next] !== undefined || WHITESPACE.test(next));
      // `\\` before a quote or a space: is the second backslash an escape or kept as typed?
      if (escapes && text[i - 1] === '\\' && choose(i) === 'second') cur += c;
      else if (escapes) cur += text[++i];
      else cur += c;
      inWord = true;
    } else if (WHITESPACE.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote) {
    throw new InputError(`A ${quote} quote is not closed (at character ${quoteAt + 1}).`, {
      hint: 'Close the quote, or escape it with \\.',
    });
  }
  if (inWord) words.push(cur);
  return words;
}

/** The run read as plain words; null when that reading fails (an unclosed quote inside). */
function plainReading(run: string): string[] | null {
  try {
    return read(run, () => 'first', false);
  } catch {
    return null;
  }
}

function showWords(words: readonly string[]): string {
  return words.map((w) => `‹${w}›`).join(' ');
}

type Reading = { readonly words: string[] } | { readonly error: InputError };

function attempt(text: string, choose: Chooser): Reading {
  try {
    return { words: read(text, choose) };
  } catch (e) {
    if (e instanceof InputError) return { error: e };
    throw e;
  }
}

/**
 * Splits Slack text into words. A text that reads two ways is an InputError showing both; when
 * only one of the two readings holds together (the other leaves a quote open), that one is taken.
 */
export function splitSlackText(text: string): string[] {
  let fork: Fork | undefined;
  const one = attempt(text, (at) => {
    fork ??= new Fork(at, text[at] === '\\' ? 'backslash' : 'bracket');
    return 'first';
  });
  if (!fork) {
    if ('error' in one) throw one.error;
    return one.words;
  }
  const at = fork.at;
  const other = attempt(text, (i) => (i === at ? 'second' : 'first'));
  if ('error' in one && 'error' in other) throw one.error;
  if ('error' in one) return (other as { words: string[] }).words;
  if ('error' in other) return one.words;
  const first = one.words;
  const second = other.words;
  if (first.length === second.length && first.every((w, i) => w === second[i])) return first;
  // Only the words that differ between the two readings.
  let lead = 0;
  while (lead < first.length && lead < second.length && first[lead] === second[lead]) lead++;
  let tail = 0;
  while (
    tail < first.length - lead &&
    tail < second.length - lead &&
    first[first.length - 1 - tail] === second[second.length - 1 - tail]
  )
    tail++;
  const a = first.slice(lead, first.length - tail);
  const b = second.slice(lead, second.length - tail);
  const why =
    fork.what === 'bracket'
      ? `The ${text[at]} at character ${at + 1} starts a bracket run that is not JSON, and it splits differently as plain words.`
      : `The backslashes at character ${at} can be kept as typed or escape the ${WHITESPACE.test(text[at + 1] ?? '') ? 'space' : 'quote'} after them.`;
  throw new InputError(`These words can be read two ways, so nothing was done. ${why}`, {
    hint: `read as:  ${showWords(a)}\nor as:    ${showWords(b)}\nQuote the word you mean: '...' keeps everything inside as typed.`,
  });
}
