import { CodedError, codeOf } from '../core/index.ts';

/**
 * Everything that can go wrong talking to the management API, as one error class with a
 * stable `code`. Users see a sentence chosen by code; logs see `message`, `method` and `path`
 * (never credentials: those only travel in the Authorization header).
 */

export type RabbitErrorCode =
  | 'unreachable'
  | 'timeout'
  | 'unauthorized'
  | 'forbidden'
  | 'not-found'
  | 'refused-by-broker'
  | 'broker-error'
  | 'bad-response'
  /** The answer was larger than the client's limits (`BodyLimits`): not read, not retried. */
  | 'too-large';

export const RABBIT_ERROR_CODES: readonly RabbitErrorCode[] = [
  'unreachable',
  'timeout',
  'unauthorized',
  'forbidden',
  'not-found',
  'refused-by-broker',
  'broker-error',
  'bad-response',
  'too-large',
];

const RETRYABLE: ReadonlySet<RabbitErrorCode> = new Set(['unreachable', 'timeout', 'broker-error']);

/** The names of the variables a client's credentials came from (never the credentials). */
export interface CredentialsFrom {
  readonly user: string;
  readonly password: string;
}

export interface RabbitErrorInit {
  readonly code: RabbitErrorCode;
  readonly method: string;
  readonly path: string;
  readonly status?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly cause?: unknown;
  readonly credentialsFrom?: CredentialsFrom;
}

export class RabbitError extends CodedError<RabbitErrorCode> {
  override readonly name = 'RabbitError';
  readonly code: RabbitErrorCode;
  /** HTTP status, when the broker answered at all. */
  readonly status?: number;
  /** The broker's own explanation, cleaned (see cleanReason). */
  readonly reason?: string;
  readonly method: string;
  /** Request path and query, e.g. `/api/policies/%2F/ttl`. */
  readonly path: string;
  /** On `unauthorized`: the variables the refused user and password came from, when the client knew them. */
  readonly credentialsFrom?: CredentialsFrom;

  constructor(init: RabbitErrorInit) {
    const what = `${init.method} ${init.path}`;
    const detail = init.message ?? init.reason ?? (init.status === undefined ? '' : `HTTP ${init.status}`);
    super(detail ? `${init.code}: ${what}: ${detail}` : `${init.code}: ${what}`, { cause: init.cause });
    this.code = init.code;
    if (init.status !== undefined) this.status = init.status;
    if (init.reason !== undefined) this.reason = init.reason;
    this.method = init.method;
    this.path = init.path;
    if (init.credentialsFrom !== undefined) this.credentialsFrom = init.credentialsFrom;
  }

  /** Network trouble, timeouts and 5xx may succeed on a second try; a 4xx never will. */
  get isRetryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

export function isRabbitError(e: unknown, code?: RabbitErrorCode): e is RabbitError {
  return e instanceof RabbitError && (code === undefined || e.code === code);
}

/** The broker's own explanation of a failure, when the error is the client's and the broker gave one. */
export function brokerReason(e: unknown): string | undefined {
  if (!(e instanceof RabbitError)) return undefined;
  const from = e.code === 'unauthorized' ? e.credentialsFrom : undefined;
  if (from === undefined) return e.reason;
  return `${e.reason ?? `HTTP ${e.status ?? 401}`}: ${credentialsCheck(from)}`;
}

/** What to fix when the broker refuses the login: the variables the credentials came from, by name. */
export function credentialsCheck(from: CredentialsFrom): string {
  return `check ${from.password} and ${from.user}`;
}

export function isRetryable(e: unknown): boolean {
  return e instanceof RabbitError && e.isRetryable;
}

/** Why the broker could not be asked, when a failure means that (an answer's `why`, `not-asked`). */
export type NotAskedWhy =
  | 'unreachable'
  | 'timeout'
  | 'unauthorized'
  | 'forbidden'
  | 'broker-error'
  | 'refused-by-broker'
  | 'too-large';

/** By the client's codes; `not-found` is none: what a missing vhost or object means is the caller's. */
const NOT_ASKED: Readonly<Record<RabbitErrorCode, NotAskedWhy | undefined>> = {
  unreachable: 'unreachable',
  timeout: 'timeout',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  'not-found': undefined,
  'refused-by-broker': 'refused-by-broker',
  'broker-error': 'broker-error',
  'bad-response': 'broker-error',
  'too-large': 'too-large',
};

/**
 * The one rule for "the broker was not asked" (`which`, `policies`, `preview`): a failure of the
 * management API becomes the answer's `why` and, when the broker gave one, its reason.
 * `undefined` for anything else (a bug, a missing vhost), which the caller throws on.
 */
export function notAskedBecause(err: unknown): { why: NotAskedWhy; reason?: string } | undefined {
  const code = codeOf(err);
  const why =
    code !== undefined && Object.hasOwn(NOT_ASKED, code) ? NOT_ASKED[code as RabbitErrorCode] : undefined;
  if (why === undefined) return undefined;
  const reason = brokerReason(err);
  return reason === undefined ? { why } : { why, reason };
}

const ENTITIES: Readonly<Record<string, string>> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"' };

/**
 * The broker's validation text, readable: without the "Validation failed" preamble and without
 * the HTML escaping that 3.10–4.1 apply to user-policy errors (`&lt;&lt;"x"&gt;&gt;`).
 * One pass, so `&amp;lt;` becomes `&lt;`, not `<`.
 */
export function cleanReason(raw: string): string {
  return raw
    .replace(/^\s*Validation failed\s*/, '')
    .replace(/&(?:lt|gt|amp|quot);/g, (m) => ENTITIES[m] ?? m)
    .trim();
}

interface ErrorBody {
  error?: string;
  reason?: string;
}

function readErrorBody(text: string): ErrorBody {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const { error, reason } = parsed as Record<string, unknown>;
      const out: ErrorBody = {};
      if (typeof error === 'string') out.error = error;
      if (typeof reason === 'string') out.reason = reason;
      else if (reason !== undefined) out.reason = JSON.stringify(reason);
      return out;
    }
  } catch {
    // not JSON: a proxy's HTML page or an empty 500; keep a little of it
  }
  return { reason: text.slice(0, 200) };
}

/**
 * Maps a non-2xx answer to an error. Pure, so every branch is unit-tested.
 *
 * 401 carries two meanings, told apart only by spelling: `not_authorized` = login failed,
 * `not_authorised` = logged in but not allowed (the broker never uses 403, up to 4.3).
 */
export function errorFromResponse(
  method: string,
  path: string,
  status: number,
  bodyText: string,
  credentialsFrom?: CredentialsFrom,
): RabbitError {
  const body = readErrorBody(bodyText);
  const reason = body.reason === undefined ? undefined : cleanReason(body.reason);
  const base = { method, path, status, ...(reason ? { reason } : {}) };

  if (status === 401) {
    if (body.error === 'not_authorised') return new RabbitError({ ...base, code: 'forbidden' });
    return new RabbitError({
      ...base,
      code: 'unauthorized',
      ...(credentialsFrom ? { credentialsFrom } : {}),
    });
  }
  if (status === 403) return new RabbitError({ ...base, code: 'forbidden' });
  // 3.11.9+/3.12+ with management.restrictions.operator_policy_changes.disabled
  if (status === 405 && /disallow/i.test(reason ?? ''))
    return new RabbitError({ ...base, code: 'forbidden' });
  if (status === 404) return new RabbitError({ ...base, code: 'not-found' });
  if (status >= 500) return new RabbitError({ ...base, code: 'broker-error' });
  if (status >= 400) return new RabbitError({ ...base, code: 'refused-by-broker' });
  return new RabbitError({ ...base, code: 'bad-response', message: `unexpected HTTP ${status}` });
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  // the client's own total deadline (requestMs, the question's budget, close())
  'RMQ_DEADLINE',
]);

/** undici's and Node's error code, or the name of an abort (which has none). */
function errorCodeOf(e: unknown): string | undefined {
  const code = codeOf(e);
  if (code !== undefined) return code;
  const name = e instanceof Error ? e.name : undefined;
  return name === 'TimeoutError' || name === 'AbortError' ? name : undefined;
}

/** Maps what undici or the network threw. Errors that are already RabbitErrors pass through. */
export function errorFromFailure(method: string, path: string, e: unknown): RabbitError {
  if (e instanceof RabbitError) return e;
  if (e instanceof SyntaxError) {
    return new RabbitError({ code: 'bad-response', method, path, message: e.message, cause: e });
  }
  const codes = [errorCodeOf(e), errorCodeOf((e as { cause?: unknown } | null)?.cause)];
  const message = e instanceof Error ? e.message || codes.find(Boolean) : String(e);
  const timedOut = codes.some((c) => c !== undefined && (TIMEOUT_CODES.has(c) || c === 'TimeoutError'));
  return new RabbitError({
    code: timedOut ? 'timeout' : 'unreachable',
    method,
    path,
    ...(message ? { message } : {}),
    cause: e,
  });
}
