/**
 * A broker URI as it may be shown anywhere — terminal, Slack, `--json`, logs, the audit trail:
 * `amqp://user:***@host:port/vhost`. Federation upstreams and shovels carry their credentials
 * in their URIs; the password never leaves the process, and neither does a URI that cannot be
 * read (shown as `<unreadable URI>`): showing a little less is the price of never showing it.
 */

const MASK = '***';
const SCHEME = /^([a-z][a-z0-9+.-]*:\/\/)(.*)$/is;

/**
 * The URI with its password (if any) replaced by `***`; everything else as written.
 *
 * RFC 3986 ends the userinfo at the first `@` and the authority at the first `/`, but a password
 * written without percent-encoding may hold `/`, `?`, `#` or `@`: so whenever a `:` follows the
 * user and an `@` follows that, everything between the first `:` and the last `@` is hidden. A
 * port followed by a path holding an `@` (`h:5672/v@x`) is then hidden too; the rarer form
 * loses a little of what it shows so that no password is ever shown.
 */
export function maskUri(uri: string): string {
  const scheme = SCHEME.exec(uri);
  if (!scheme) return uri.includes('@') ? '<unreadable URI>' : uri;
  const [, prefix = '', rest = ''] = scheme;
  const colon = rest.indexOf(':');
  const at = rest.lastIndexOf('@');
  const user = colon === -1 ? '' : rest.slice(0, colon);
  if (colon === -1 || at < colon || /[@/?#]/.test(user)) return prefix + maskQuery(rest);
  return `${prefix}${user}:${MASK}${maskQuery(rest.slice(at))}`;
}

/** Query parameters that carry a secret (`password=`, `*_password=`, `secret=`) are masked too. */
function maskQuery(text: string): string {
  return text.replace(/([?&;](?:[^=&;#]*password|[^=&;#]*secret)=)([^&;#]*)/gi, `$1${MASK}`);
}

/** Keys whose values are URIs in the broker's federation and shovel parameters (`uri`, `src-uri`, `dest-uri`). */
const URI_KEY = /(^|-)uris?$/i;

/**
 * A parameter's value (a federation upstream's, a shovel's) with every URI in it masked:
 * strings or lists of strings under a key ending in `uri`, at any depth. Anything else as it is.
 */
export function maskUris<T>(value: T): T {
  return maskValue(value, false) as T;
}

function maskValue(value: unknown, underUriKey: boolean): unknown {
  if (typeof value === 'string') return underUriKey ? maskUri(value) : value;
  if (Array.isArray(value)) return value.map((v) => maskValue(v, underUriKey));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = maskValue(v, URI_KEY.test(k));
    return out;
  }
  return value;
}

/** Strings under a URI key of `value`, at any depth (as `maskUris` finds them). */
function urisOf(value: unknown, underUriKey: boolean, out: string[]): string[] {
  if (typeof value === 'string') {
    if (underUriKey) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) urisOf(v, underUriKey, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) urisOf(v, URI_KEY.test(k), out);
  }
  return out;
}

/** What `maskUri` hides of a URI (its password, a secret query value), as written. */
function secretsOf(uri: string): string[] {
  const masked = maskUri(uri);
  if (masked === uri) return [];
  if (masked === '<unreadable URI>') return [uri];
  // The URI with its hidden parts cut out: what is hidden is what lies between the shown pieces.
  const pieces = masked.split(MASK);
  const secrets: string[] = [];
  let at = 0;
  for (const [i, piece] of pieces.entries()) {
    const found = uri.indexOf(piece, at);
    if (found < 0) return [uri];
    if (i > 0 && found > at) secrets.push(uri.slice(at, found));
    at = found + piece.length;
  }
  return secrets;
}

const URI_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*/gi;

/**
 * Free text that may quote URIs (a broker's refusal of a parameter quotes the value it refused):
 * every URI in it masked, and every password of `value`'s URIs (the value written) hidden
 * wherever the text has it, however the broker quoted it.
 */
export function maskUrisIn(text: string, value?: unknown): string {
  let out = text.replace(URI_IN_TEXT, (uri) => maskUri(uri));
  const secrets = urisOf(value, false, [])
    .flatMap(secretsOf)
    .filter((s) => s.length > 0);
  for (const s of secrets.sort((a, b) => b.length - a.length)) out = out.split(s).join(MASK);
  return out;
}
