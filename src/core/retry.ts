/**
 * Retrying a call out of the process: exponential backoff with jitter, inside a budget. One home
 * for the rule, used by the management client (GETs, listings) and Slack's delivery. Each caller
 * keeps its own loop (a listing may only retry before its first element, a Slack call reads
 * `Retry-After`); what they share is when to try again and how long to wait first.
 */

/** How a failed attempt is retried. */
export interface RetryPolicy {
  /** Extra attempts after the first. Default: no limit but the budget. */
  readonly retries?: number;
  /** First backoff step; doubles per retry. */
  readonly baseMs: number;
  /** What is left of the budget, in ms (`Infinity` without one). */
  readonly left: () => number;
}

/** What the loop needs to know of one failed attempt. */
export interface RetryVerdict {
  readonly retryable: boolean;
  /** The other side's own wait (Slack's `Retry-After`), used instead of the backoff. */
  readonly retryAfterMs?: number;
}

/**
 * The wait before retry `attempt` (0 for the first retry): `baseMs * 2^attempt`, half of it
 * fixed and half random, so callers that failed together do not come back together.
 */
export function backoffMs(baseMs: number, attempt: number, random: () => number = Math.random): number {
  const step = baseMs * 2 ** attempt;
  return step / 2 + random() * (step / 2);
}

/**
 * How long to wait before trying again after attempt `attempt` (0 = the first) failed, or
 * `undefined` when there is no retry to make: the failure is final, the retries are used up, or
 * the retry could not start inside the budget (it would only hold the caller longer).
 */
export function retryDelay(policy: RetryPolicy, attempt: number, verdict: RetryVerdict): number | undefined {
  if (!verdict.retryable || attempt >= (policy.retries ?? Number.POSITIVE_INFINITY)) return undefined;
  const wait = verdict.retryAfterMs ?? backoffMs(policy.baseMs, attempt);
  return policy.left() - wait > 0 ? wait : undefined;
}

/** Thrown by `sleep` when its signal aborts the wait. */
export class SleepAborted extends Error {
  override readonly name = 'SleepAborted';
}

/** Waits `ms`; with a signal, an abort ends the wait early with `SleepAborted`. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new SleepAborted());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new SleepAborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
