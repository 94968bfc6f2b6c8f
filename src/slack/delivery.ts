import { webApi } from '@slack/bolt';
import { codeOf } from '../errors.ts';
import type { Logger } from '../log.ts';
import { type RetryPolicy, type RetryVerdict, retryDelay, sleep } from '../retry.ts';
import { SLACK_LIMITS } from './limits.ts';
import type { Metrics, Outcome, Via } from './metrics.ts';
import { answerNotDeliveredView, fileNotAttachedView } from './views/errors.ts';
import type { SlackMessage } from './views/message.ts';

/**
 * One way to answer in Slack. Every message the bot sends (answers, notices to the asker, files,
 * and next the approval messages and results of change requests) goes through a `Delivery`:
 *
 *   const delivery = createDelivery({ token, metrics, logger });
 *   const reply = delivery.toResponseUrl({ responseUrl, channel, user });   // or toChannel, toModal
 *   await delivery.deliver(reply, answer, { via: 'command', command, started, logger });
 *
 * A `Reply` is the surface a request came from (a slash command's response URL, a channel or a
 * thread, a modal) with the three things one can do there: `send` a message (for everyone there
 * or for the asker alone), `attach` a file beside it, `tellAsker` something ephemeral. Every call
 * is retried on Slack's 429 (after its `Retry-After`) and on 5xx, timeouts and network errors
 * (backoff with jitter), all inside one budget per message; what Slack refuses outright
 * (`channel_not_found`, an expired response URL, invalid blocks) is not retried. Nothing throws:
 * a call ends as `{ ok: true }` or `{ ok: false, error }` with Slack's error code.
 *
 * `deliver` is the whole flow for a request's answer: send it, attach its file, count the
 * request (`rmq_slack_requests_total`, outcome `lost` when the answer did not reach Slack) and,
 * when the answer or its file was lost, tell the asker ephemerally by another way than the one
 * that failed.
 */

export type Audience = 'channel' | 'asker';
export type Surface = 'response-url' | 'channel' | 'thread' | 'modal';

/** How a Slack call ended. `error` is Slack's code (`channel_not_found`, `ratelimited`, `http-503`, `timeout`…). */
export type Sent =
  | { readonly ok: true; readonly channel?: string; readonly ts?: string; readonly viewId?: string }
  | { readonly ok: false; readonly error: string };

export interface Reply {
  readonly surface: Surface;
  /**
   * The message where the request came from: for everyone there (`channel`), or for the asker
   * alone (`asker`, ephemeral). A modal shows it whatever the audience.
   */
  send(message: SlackMessage, audience: Audience): Promise<Sent>;
  /** A file uploaded where `send` posts for everyone (the channel, and the thread when there is one). */
  attach(file: AttachedFile): Promise<Sent>;
  /** An ephemeral message to the asker, by the surest way the surface has. */
  tellAsker(message: SlackMessage): Promise<Sent>;
}

/** What `deliver` needs to know of the request, for the count and the log. */
export interface RequestInfo {
  readonly via: Via;
  /** A name from the command table (never user text). */
  readonly command: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** The request's child logger. */
  readonly logger: Logger;
  /** Shown to the asker when their answer was lost, to quote to the bot's operators. */
  readonly requestId: string;
}

/** A file that goes with an answer (the full list of a long preview), uploaded beside it. */
export interface AttachedFile {
  /** With its extension (`preview-delete-x.csv`): Slack derives the file's type from it. */
  readonly filename: string;
  /** Shown by Slack as plain text. */
  readonly title: string;
  readonly content: string;
}

/** A request's answer, as the dispatcher returns it. */
export interface Deliverable {
  readonly message: SlackMessage;
  readonly audience: Audience;
  readonly outcome: Outcome;
  /** Goes with `channel` answers only, never beside an ephemeral one. */
  readonly file?: AttachedFile;
}

export interface DeliveryResult {
  /** The answer reached Slack. */
  readonly delivered: boolean;
  /** As counted: the answer's own outcome, or `lost`. */
  readonly outcome: Outcome;
  /** `undefined` when there was no file, or the answer did not go to the channel. */
  readonly fileAttached?: boolean;
}

export interface DeliveryOptions {
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

export interface Delivery {
  /** A slash command's surface: its response URL, and the channel it was typed in. */
  toResponseUrl(where: { responseUrl: string; channel: string; user: string }): Reply;
  /** A channel, or a thread of it (`threadTs`); `user` is who ephemeral messages go to. */
  toChannel(where: { channel: string; threadTs?: string | undefined; user?: string | undefined }): Reply;
  /**
   * A modal: opened with `triggerId` (valid 3 s after the click), or, with `viewId`, the one
   * already open updated. `tellAsker` goes to `channel` when given, else to the user's DM.
   */
  toModal(where: {
    triggerId?: string;
    viewId?: string;
    title: string;
    user: string;
    channel?: string;
  }): Reply;
  /** The answer of a request sent, its file attached, the asker told what was lost, the request counted. */
  deliver(reply: Reply, answer: Deliverable, request: RequestInfo): Promise<DeliveryResult>;
  /**
   * Any Web API method with the same retries and budget (`chat.update` of an approval message,
   * `chat.postMessage` to the approvals channel). The answer's fields are in `response`.
   */
  call(method: string, args: Record<string, unknown>): Promise<Sent & { response?: Record<string, unknown> }>;
}

// ---- retries -----------------------------------------------------------------------------------

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

// ---- the helper ---------------------------------------------------------------------------------

export function createDelivery(options: DeliveryOptions): Delivery {
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

  const ephemeral = (channel: string, user: string, message: SlackMessage, threadTs?: string) =>
    call('chat.postEphemeral', {
      channel,
      user,
      text: message.text,
      blocks: message.blocks,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });

  const toResponseUrl: Delivery['toResponseUrl'] = ({ responseUrl, channel, user }) => {
    // Once the response URL has failed for good, the asker is reached through the Web API.
    let failed = false;
    const post = async (body: Record<string, unknown>): Promise<Sent> => {
      const sent = await postToResponseUrl(responseUrl, body);
      if (!sent.ok) failed = true;
      return sent;
    };
    return {
      surface: 'response-url',
      send: (message, audience) =>
        post({
          response_type: audience === 'channel' ? 'in_channel' : 'ephemeral',
          text: message.text,
          blocks: message.blocks,
          unfurl_links: false,
          unfurl_media: false,
        }),
      attach: (file) => upload(file, channel, undefined),
      async tellAsker(message) {
        const body = {
          response_type: 'ephemeral',
          replace_original: false,
          text: message.text,
          blocks: message.blocks,
        };
        const sent = failed ? undefined : await post(body);
        return sent?.ok ? sent : ephemeral(channel, user, message);
      },
    };
  };

  const toChannel: Delivery['toChannel'] = ({ channel, threadTs, user }) => ({
    surface: threadTs ? 'thread' : 'channel',
    send: (message, audience) =>
      audience === 'asker' && user
        ? ephemeral(channel, user, message, threadTs)
        : call('chat.postMessage', {
            channel,
            text: message.text,
            blocks: message.blocks,
            unfurl_links: false,
            unfurl_media: false,
            ...(threadTs ? { thread_ts: threadTs } : {}),
          }),
    attach: (file) => upload(file, channel, threadTs),
    tellAsker: (message) =>
      user ? ephemeral(channel, user, message, threadTs) : Promise.resolve({ ok: false, error: 'no_user' }),
  });

  const toModal: Delivery['toModal'] = ({ triggerId, viewId, title, user, channel }) => ({
    surface: 'modal',
    async send(message) {
      const view = {
        type: 'modal',
        title: { type: 'plain_text', text: title.slice(0, SLACK_LIMITS.modalTitle) },
        close: { type: 'plain_text', text: 'Close' },
        blocks: message.blocks,
      };
      const sent = viewId
        ? await call('views.update', { view_id: viewId, view })
        : await call('views.open', { trigger_id: triggerId, view });
      if (!sent.ok) return sent;
      const id = (sent.response?.view as { id?: unknown } | undefined)?.id;
      return typeof id === 'string' ? { ok: true, viewId: id } : { ok: true };
    },
    attach: () => Promise.resolve({ ok: false, error: 'no_channel' }),
    tellAsker: (message) =>
      channel
        ? ephemeral(channel, user, message)
        : call('chat.postMessage', { channel: user, text: message.text, blocks: message.blocks }),
  });

  async function deliver(reply: Reply, answer: Deliverable, request: RequestInfo): Promise<DeliveryResult> {
    const { via, logger } = request;
    const sent = await reply.send(answer.message, answer.audience);
    let outcome: Outcome = answer.outcome;
    let fileAttached: boolean | undefined;
    if (!sent.ok) {
      outcome = 'lost';
      metrics.deliveryErrors.inc({ via });
      logger.warn({ error: sent.error, surface: reply.surface }, 'Slack did not take the answer');
      // Never after shutdown began: the process is going away, and the asker is better asking again.
      if (sent.error !== 'shutting_down') {
        const told = await reply.tellAsker(answerNotDeliveredView(sent.error, request.requestId));
        if (!told.ok)
          logger.warn({ error: told.error }, 'the asker could not be told that the answer was lost');
      }
    } else if (answer.file && answer.audience === 'channel') {
      const bytes = Buffer.byteLength(answer.file.content);
      const attached = await reply.attach(answer.file);
      fileAttached = attached.ok;
      if (attached.ok) {
        logger.info({ filename: answer.file.filename, bytes }, 'file attached');
      } else {
        metrics.deliveryErrors.inc({ via });
        logger.warn(
          { error: attached.error, filename: answer.file.filename, bytes },
          'Slack did not take the file',
        );
        const told = await reply.tellAsker(fileNotAttachedView(attached.error, answer.file));
        if (!told.ok) logger.warn({ error: told.error }, 'Slack did not take the notice of the missing file');
      }
    }
    const seconds = (performance.now() - request.started) / 1000;
    metrics.requests.inc({ command: request.command, outcome, via });
    metrics.requestSeconds.observe({ command: request.command, via }, seconds);
    logger.info({ command: request.command, outcome, ms: Math.round(seconds * 1000) }, 'request done');
    return { delivered: sent.ok, outcome, ...(fileAttached === undefined ? {} : { fileAttached }) };
  }

  return { toResponseUrl, toChannel, toModal, deliver, call };
}
