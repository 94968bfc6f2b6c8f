import { webApi } from '@slack/bolt';
import type { Metrics } from '../bot/metrics/index.ts';
import { codeOf, type RetryPolicy, type RetryVerdict, retryDelay, sleep } from '../core/index.ts';
import type { Logger } from '../log/index.ts';

/**
 * The Slack calls a Delivery (`delivery.ts`) is made of, each retried on Slack's 429 (after its
 * `Retry-After`) and on 5xx, timeouts and network errors (backoff with jitter, `../retry.ts`), all
 * inside one budget per message; what Slack refuses outright (`channel_not_found`, an expired
 * response URL, invalid blocks) is not retried. Nothing throws: a call ends as `{ ok: true }` or
 * `{ ok: false, error }` with Slack's error code (`shutting_down` once the signal aborts).
 */

/** How a Slack call ended. `error` is Slack's code (`channel_not_found`, `ratelimited`, `http-503`, `timeout`…). */
export type Sent =
  | { readonly ok: true; readonly channel?: string; readonly ts?: string; readonly viewId?: string }
  | { readonly ok: false; readonly error: string };

/** A file that goes with an answer (the full list of a long preview), uploaded beside it. */
export interface AttachedFile {
  /** With its extension (`preview-delete-x.csv`): Slack derives the file's type from it. */
  readonly filename: string;
  /** Shown by Slack as plain text. */
  readonly title: string;
  readonly content: string;
}

export interface SlackCallOptions {
  /** The bot token (`xoxb-…`). */
  readonly token: string;
  /** Slack's Web API base (tests point it at a local fake). Default Slack's. */
  readonly slackApiUrl?: string;
  readonly metrics: Metrics;
  /** For what happens outside a request (a `deliver` logs to the request's own logger). */
  readonly logger: Logger;
  /**
   * The whole time one message may take, retries and Slack's `Retry-After` included. Default
   * 60 s: an answer late by a minute still helps (response URLs stay valid 30 minutes), an answer
   * held longer only keeps a shutdown waiting.
   */
  readonly budgetMs?: number;
  /** One HTTP attempt, Web API call or response URL POST. Default 10 s. */
  readonly attemptMs?: number;
  /** First backoff step after a 5xx or a network error; doubles per retry, with jitter. Default 500 ms. */
  readonly retryBaseMs?: number;
  /** When aborted (shutdown), every call under way gives up and no retry starts. */
  readonly signal?: AbortSignal;
}

/** One failed Slack call, classified: Slack's error code, and whether (and when) to try again. */
interface SlackFailure extends RetryVerdict {
  readonly error: string;
}

/** Platform errors Slack documents as worth another try. */
const RETRYABLE_PLATFORM_ERRORS = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
]);

/** A Web API failure (as @slack/web-api throws it with its own retries off), classified. */
export function classifyWebApiError(err: unknown): SlackFailure {
  const code = codeOf(err);
  // The fields @slack/web-api's coded errors carry beside their code.
  const e = (err ?? {}) as {
    data?: { error?: unknown };
    statusCode?: unknown;
    retryAfter?: unknown;
    original?: { name?: unknown };
  };
  switch (code) {
    case 'slack_webapi_rate_limited_error':
      return {
        error: 'ratelimited',
        retryable: true,
        retryAfterMs: typeof e.retryAfter === 'number' ? e.retryAfter * 1000 : 1000,
      };
    case 'slack_webapi_http_error': {
      const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
      return { error: `http-${status}`, retryable: status >= 500 || status === 408 };
    }
    case 'slack_webapi_request_error': {
      const name = e.original?.name;
      const timeout = name === 'TimeoutError' || name === 'AbortError';
      return { error: timeout ? 'timeout' : 'unreachable', retryable: true };
    }
    case 'slack_webapi_platform_error': {
      const error = typeof e.data?.error === 'string' ? e.data.error : 'unknown';
      return { error, retryable: RETRYABLE_PLATFORM_ERRORS.has(error) };
    }
    default:
      return { error: code ?? 'unknown', retryable: false };
  }
}

/** `Retry-After` in seconds or as an HTTP date; `undefined` when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A response URL's answer is a word or two (`ok`, `used_url`); more is not read. */
const RESPONSE_BODY_LIMIT = 1024;

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_BODY_LIMIT) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_LIMIT);
}

/** Slack's word from a refused response URL POST (`used_url`), or the status when it sent none. */
function responseUrlError(status: number, body: string): string {
  const word = body.trim();
  return /^[a-z_]{1,60}$/.test(word) ? word : `http-${status}`;
}

class Aborted extends Error {}

/** `work` raced against `signal`: an abort ends the wait (the work itself is abandoned). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(new Aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** The Web API and response URL calls, with their retries, for one bot token. */
export function createSlackCalls(options: SlackCallOptions) {
  const budgetMs = options.budgetMs ?? 60_000;
  const attemptMs = options.attemptMs ?? 10_000;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const { signal, metrics } = options;
  // Its own retries off: `retrying` below decides, within the budget, and reads Retry-After.
  const client = new webApi.WebClient(options.token, {
    ...(options.slackApiUrl ? { slackApiUrl: options.slackApiUrl } : {}),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: attemptMs,
  });

  /** Attempts until success, a failure not worth retrying, the budget spent, or shutdown. */
  async function retrying<T>(
    what: string,
    attempt: (attemptSignal: AbortSignal) => Promise<T>,
    classify: (err: unknown) => SlackFailure,
  ): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
    const deadline = performance.now() + budgetMs;
    const retry: RetryPolicy = { baseMs: retryBaseMs, left: () => deadline - performance.now() };
    for (let n = 0; ; n++) {
      const left = deadline - performance.now();
      const attemptSignal = AbortSignal.any([
        AbortSignal.timeout(Math.max(1, Math.ceil(Math.min(attemptMs, left)))),
        ...(signal ? [signal] : []),
      ]);
      let failure: SlackFailure;
      try {
        return { ok: true, value: await untilAborted(attempt(attemptSignal), signal) };
      } catch (err) {
        if (err instanceof Aborted || signal?.aborted) return { ok: false, error: 'shutting_down' };
        failure = classify(err);
      }
      const wait = retryDelay(retry, n, failure);
      if (wait === undefined) return { ok: false, error: failure.error };
      metrics.deliveryRetries.inc({ error: failure.error.startsWith('http-') ? failure.error : 'other' });
      options.logger.debug({ what, error: failure.error, waitMs: Math.round(wait) }, 'Slack call retried');
      try {
        await sleep(wait, signal);
      } catch {
        return { ok: false, error: 'shutting_down' };
      }
    }
  }

  async function call(
    method: string,
    args: Record<string, unknown>,
  ): Promise<Sent & { response?: Record<string, unknown> }> {
    const r = await retrying(method, () => client.apiCall(method, args), classifyWebApiError);
    if (!r.ok) return r;
    const response = r.value as unknown as Record<string, unknown>;
    const ts = typeof response.ts === 'string' ? response.ts : undefined;
    const channel = typeof response.channel === 'string' ? response.channel : undefined;
    return { ok: true, response, ...(ts ? { ts } : {}), ...(channel ? { channel } : {}) };
  }

  async function postToResponseUrl(responseUrl: string, body: Record<string, unknown>): Promise<Sent> {
    const r = await retrying(
      'response_url',
      async (attemptSignal) => {
        const res = await fetch(responseUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          redirect: 'error',
          signal: attemptSignal,
        });
        const text = await readCapped(res);
        if (res.status === 200) return;
        throw Object.assign(new Error(`response URL answered ${res.status}`), {
          status: res.status,
          text,
          retryAfter: res.headers.get('retry-after'),
        });
      },
      (err): SlackFailure => {
        const e = err as { status?: number; text?: string; retryAfter?: string | null; name?: string };
        if (typeof e.status === 'number') {
          const after = e.status === 429 ? retryAfterMs(e.retryAfter ?? null) : undefined;
          return {
            error: e.status === 429 ? 'ratelimited' : responseUrlError(e.status, e.text ?? ''),
            retryable: e.status === 429 || e.status >= 500 || e.status === 408,
            ...(after === undefined
              ? e.status === 429
                ? { retryAfterMs: 1000 }
                : {}
              : { retryAfterMs: after }),
          };
        }
        const timeout = e.name === 'TimeoutError' || e.name === 'AbortError';
        return { error: timeout ? 'timeout' : 'unreachable', retryable: true };
      },
    );
    return r.ok ? { ok: true } : r;
  }

  const upload = (file: AttachedFile, channel: string, threadTs: string | undefined): Promise<Sent> =>
    // No `filetype`: files.uploadV2 ignores it (and warns); Slack reads the type off the filename.
    retrying(
      'files.uploadV2',
      () => {
        const { content, filename, title } = file;
        return client.files.uploadV2(
          threadTs
            ? { channel_id: channel, thread_ts: threadTs, content, filename, title }
            : { channel_id: channel, content, filename, title },
        );
      },
      classifyWebApiError,
    ).then((r) => (r.ok ? { ok: true, channel } : r));

  return { call, postToResponseUrl, upload };
}
