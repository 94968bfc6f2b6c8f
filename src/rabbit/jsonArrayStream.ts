/**
 * Incremental reader of one top-level JSON array: yields each element as soon as its last
 * byte arrives, holding only the element being read. The broker sends a listing of 100k
 * queues as one array of tens of MB; parsing it whole would hold it all, twice.
 *
 * Only the array's structure is tracked here (depth, strings, escapes); each element's text is
 * handed to JSON.parse, which does the real validation. Malformed input throws SyntaxError.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** An element longer than the splitter was told to hold (`maxElementChars`). */
export class ElementTooLarge extends Error {
  constructor(
    readonly index: number,
    readonly limit: number,
  ) {
    super(`element ${index} is over ${limit} characters`);
    this.name = 'ElementTooLarge';
  }
}

type Phase = 'before-array' | 'before-element' | 'in-element' | 'after-array';

export class JsonArraySplitter {
  private phase: Phase = 'before-array';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private parts: string[] = [];
  /** Characters of the element being read, held in `parts`. */
  private held = 0;
  private count = 0;

  /** @param maxElementChars one element may be at most this long; longer throws ElementTooLarge. */
  constructor(private readonly maxElementChars = Number.POSITIVE_INFINITY) {}

  /** Feeds decoded text; returns the elements completed by it. */
  push(text: string): unknown[] {
    const out: unknown[] = [];
    let start = this.phase === 'in-element' ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      switch (this.phase) {
        case 'in-element':
          if (this.inString) {
            if (this.escaped) this.escaped = false;
            else if (c === BACKSLASH) this.escaped = true;
            else if (c === QUOTE) this.inString = false;
          } else if (c === QUOTE) {
            this.inString = true;
          } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
            this.depth++;
          } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && this.depth > 0) {
            this.depth--;
          } else if (this.depth === 0 && (c === COMMA || c === CLOSE_BRACKET)) {
            this.hold(i - start);
            this.parts.push(text.slice(start, i));
            out.push(this.finishElement());
            this.phase = c === COMMA ? 'before-element' : 'after-array';
            start = -1;
          }
          break;
        case 'before-array':
          if (c === OPEN_BRACKET) this.phase = 'before-element';
          else if (!isWhitespace(c)) throw new SyntaxError('expected a JSON array');
          break;
        case 'before-element':
          if (isWhitespace(c)) break;
          if (c === CLOSE_BRACKET && this.count === 0) {
            this.phase = 'after-array';
            break;
          }
          if (c === COMMA || c === CLOSE_BRACKET) throw new SyntaxError(`missing element at ${this.count}`);
          this.phase = 'in-element';
          start = i;
          this.depth = 0;
          this.inString = c === QUOTE;
          this.escaped = false;
          if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth = 1;
          break;
        case 'after-array':
          if (!isWhitespace(c)) throw new SyntaxError('unexpected text after the JSON array');
          break;
      }
    }
    if (this.phase === 'in-element' && start >= 0) {
      this.hold(text.length - start);
      this.parts.push(text.slice(start));
    }
    return out;
  }

  private hold(chars: number): void {
    this.held += chars;
    if (this.held > this.maxElementChars) throw new ElementTooLarge(this.count, this.maxElementChars);
  }

  /** Call when the input ends; throws if the array was not closed. */
  end(): void {
    if (this.phase !== 'after-array') throw new SyntaxError('unexpected end of JSON array');
  }

  private finishElement(): unknown {
    const text = this.parts.join('');
    this.parts = [];
    this.held = 0;
    this.count++;
    return JSON.parse(text);
  }
}

/** Yields the elements of the JSON array carried by `chunks` (UTF-8 bytes or text). */
export async function* parseJsonArrayStream(
  chunks: AsyncIterable<Uint8Array | string>,
  options: { maxElementChars?: number } = {},
): AsyncGenerator<unknown, void, undefined> {
  const splitter = new JsonArraySplitter(options.maxElementChars);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (bytes?: Uint8Array): string => {
    try {
      return bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode();
    } catch {
      throw new SyntaxError('the JSON array is not valid UTF-8');
    }
  };
  for await (const chunk of chunks) {
    for (const element of splitter.push(typeof chunk === 'string' ? chunk : decode(chunk))) yield element;
  }
  for (const element of splitter.push(decode())) yield element;
  splitter.end();
}
