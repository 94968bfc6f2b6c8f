/**
 * Where a JSON text stops being JSON, as a line and a column a person finds in an editor: Node 20's
 * `JSON.parse` says a character offset, or only a snippet ("Unexpected token '}', …"). Pure; walks
 * the text once, without recursion (a file nested thousands deep is still located).
 */

const LITERALS = ['true', 'false', 'null'] as const;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The offset of the first character `JSON.parse` cannot take, or -1 when the text is JSON. */
export function jsonErrorOffset(text: string): number {
  const n = text.length;
  let i = 0;
  const open: string[] = [];
  const space = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const string = (): boolean => {
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return false;
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else {
          i++;
          return false;
        }
      } else i++;
    }
    return false;
  };
  const scalar = (): boolean => {
    const word = LITERALS.find((w) => w[0] === text[i]);
    if (word) {
      // As far as it matches: `tru}` is wrong at the `}`.
      let k = 0;
      while (k < word.length && text[i + k] === word[k]) k++;
      i += k;
      return k === word.length;
    }
    NUMBER.lastIndex = i;
    if (!NUMBER.test(text)) return false;
    i = NUMBER.lastIndex;
    return true;
  };
  // What comes next: a value, a key (after `{` or a comma in an object), or what follows a value.
  let want: 'value' | 'first-value' | 'key' | 'first-key' | 'after' = 'value';
  for (;;) {
    space();
    if (want === 'after') {
      const top = open.at(-1);
      if (top === undefined) return i < n ? i : -1;
      if (text[i] === ',') {
        i++;
        want = top === '{' ? 'key' : 'value';
      } else if (text[i] === (top === '{' ? '}' : ']')) {
        i++;
        open.pop();
      } else return i;
      continue;
    }
    if (i >= n) return n;
    const c = text[i];
    if (want === 'key' || want === 'first-key') {
      if (want === 'first-key' && c === '}') {
        i++;
        open.pop();
        want = 'after';
        continue;
      }
      if (c !== '"' || !string()) return i;
      space();
      if (text[i] !== ':') return i;
      i++;
      want = 'value';
      continue;
    }
    if (want === 'first-value' && c === ']') {
      i++;
      open.pop();
      want = 'after';
      continue;
    }
    if (c === '{' || c === '[') {
      open.push(c);
      i++;
      want = c === '{' ? 'first-key' : 'first-value';
      continue;
    }
    if (c === '"' ? !string() : !scalar()) return i;
    want = 'after';
  }
}

/** The 1-based line and column of an offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    start = at + 1;
  }
  return { line, column: offset - start + 1 };
}

/**
 * `JSON.parse`'s reason without its offset or snippet, and where it is: "Expected ',' or '}' after
 * property value, at line 3, column 9".
 */
export function jsonErrorWords(text: string, error: Error): string {
  const reason = error.message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ of JSON input$/, ' of the file');
  const offset = jsonErrorOffset(text);
  if (offset < 0) return reason;
  const { line, column } = lineAndColumn(text, offset);
  return `${reason}, at line ${line}, column ${column}`;
}
