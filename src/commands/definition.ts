import { InputError } from '../core/index.ts';
import { foldDoubleQuotes } from './split.ts';

/**
 * `--definition` text (or the form's definition field) -> the JSON object to be written.
 * Phones turn `"` into `“ ”`: when the text is not JSON as typed but is once those are read as
 * straight quotes, it is taken, and `foldedQuotes` says so, for the answer to tell.
 */

export interface ReadDefinition {
  readonly definition: Record<string, unknown>;
  /** Typographic double quotes were read as straight ones. */
  readonly foldedQuotes: boolean;
}

/** Said beside the definition when its quotes were folded. */
export const FOLDED_QUOTES_NOTE = 'typographic quotes (“ ”) in --definition were read as straight quotes (")';

export const DEFINITION_EXAMPLE = `Example: --definition {"message-ttl": 60000}`;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, why: e instanceof Error ? e.message : String(e) };
  }
}

/** The definition's text read, or why not: for callers that show errors their own way (the form). */
export function parseDefinitionText(
  text: string,
): ({ ok: true } & ReadDefinition) | { ok: false; why: 'not-json' | 'not-object'; detail: string } {
  let parsed = parseJson(text);
  let foldedQuotes = false;
  if (!parsed.ok) {
    const folded = foldDoubleQuotes(text);
    const again = folded === text ? parsed : parseJson(folded);
    if (again.ok) {
      parsed = again;
      foldedQuotes = true;
    }
  }
  if (!parsed.ok) return { ok: false, why: 'not-json', detail: parsed.why };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, why: 'not-object', detail: Array.isArray(value) ? 'a list' : JSON.stringify(value) };
  return { ok: true, definition: value as Record<string, unknown>, foldedQuotes };
}

export function readDefinition(text: string): ReadDefinition {
  const read = parseDefinitionText(text);
  if (read.ok) return { definition: read.definition, foldedQuotes: read.foldedQuotes };
  if (read.why === 'not-json')
    throw new InputError(`--definition is not valid JSON (${read.detail}).`, { hint: DEFINITION_EXAMPLE });
  throw new InputError(`--definition must be a JSON object of keys and values, got ${read.detail}.`, {
    hint: DEFINITION_EXAMPLE,
  });
}

export const SETTING_EXAMPLE = `Example: --set max-length=1000 --set 'dead-letter-exchange="dlx"' --unset message-ttl`;

/**
 * `--set KEY=JSON` -> the key and its value. The value is JSON (a number, `true`, a quoted
 * string, an object); phones' typographic quotes are read as straight ones, as for --definition.
 */
export function readSetting(text: string): { readonly key: string; readonly value: unknown } {
  const eq = text.indexOf('=');
  const key = eq < 0 ? '' : text.slice(0, eq).trim();
  if (eq < 0 || key === '')
    throw new InputError(`--set takes KEY=JSON, got ${JSON.stringify(text)}.`, { hint: SETTING_EXAMPLE });
  const raw = text.slice(eq + 1);
  let parsed = parseJson(raw);
  if (!parsed.ok) {
    const folded = foldDoubleQuotes(raw);
    if (folded !== raw) parsed = parseJson(folded);
  }
  if (!parsed.ok) {
    throw new InputError(
      `--set ${key}: ${JSON.stringify(raw)} is not JSON (a string needs its double quotes: ${key}=${JSON.stringify(raw)}).`,
      { hint: SETTING_EXAMPLE },
    );
  }
  return { key, value: parsed.value };
}
