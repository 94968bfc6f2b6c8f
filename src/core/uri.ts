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
