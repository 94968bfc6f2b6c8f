/**
 * What an answer depends on and could not be read (the queues' statistics, the federation
 * upstreams), from a live reading (inventory.ts): with why and the budget it ran out of, for the
 * answer to say first (src/commands/words.ts `incompleteWords`) and exit 3.
 */
import { codeOf } from '../core/index.ts';

/**
 * A reading an answer depends on that could not be read (`Unread`): the queues' statistics (the
 * live numbers that decide a loss), or the federation upstreams (lint's `missing-target`).
 */
export type UnreadWhat = 'queue-statistics' | 'federation-upstreams';

/** What could not be read, where, and why: the client's error code, its words, the budget it ran out of. */
export interface Unread {
  readonly what: UnreadWhat;
  readonly vhost: string;
  /** The client's error code (`timeout`, `forbidden`, `refused-by-broker`, …), `error` for anything else. */
  readonly why: string;
  readonly detail: string;
  /** With `timeout`: the question's budget (RMQ_TIMEOUT) it ran out of, when known. */
  readonly budgetMs?: number;
}

/** A reading that failed: the client's error code, and the question's budget when it timed out. */
export interface ReadingFailure {
  readonly code: string;
  readonly budgetMs?: number;
}

/** A reading's failure as an `Unread` of `vhost`. */
function unreadAs(what: UnreadWhat, vhost: string, why: string, f: ReadingFailure): Unread {
  const prefix = `${f.code}: `;
  return {
    what,
    vhost,
    why: f.code,
    detail: why.startsWith(prefix) ? why.slice(prefix.length) : why,
    ...(f.budgetMs !== undefined ? { budgetMs: f.budgetMs } : {}),
  };
}

/**
 * What of `reading` could not be read: the queues' statistics, and (with `federation`: the answer
 * reads it, a policy names an upstream) the federation upstreams. Empty when all was read.
 */
export function unreadOf(
  reading: {
    readonly queuesWhy?: string;
    readonly queuesFailure?: ReadingFailure;
    readonly federationWhy?: string;
    readonly federationFailure?: ReadingFailure;
  } | null,
  vhost: string,
  federation = false,
): Unread[] {
  const unread: Unread[] = [];
  if (reading?.queuesWhy && reading.queuesFailure)
    unread.push(unreadAs('queue-statistics', vhost, reading.queuesWhy, reading.queuesFailure));
  if (federation && reading?.federationWhy && reading.federationFailure)
    unread.push(unreadAs('federation-upstreams', vhost, reading.federationWhy, reading.federationFailure));
  return unread;
}

/** Why a reading failed, in a few words: the client's error code and message. */
export const whyFailed = (e: unknown) => {
  const code = codeOf(e) ?? 'error';
  const message = e instanceof Error ? e.message : String(e);
  // A RabbitError's message starts with its code already.
  return message.startsWith(`${code}: `) ? message : `${code}: ${message}`;
};

/** A failure's code, and the question's budget when it timed out. */
export function failureOf(e: unknown, budgetMs: number | undefined): ReadingFailure {
  const code = codeOf(e) ?? 'error';
  return code === 'timeout' && budgetMs !== undefined ? { code, budgetMs } : { code };
}

/** The federation of a live reading, when it could not be read. */
export const federationFailed = (e: unknown, budgetMs: number | undefined) => ({
  federation: null,
  federationWhy: whyFailed(e),
  federationFailure: failureOf(e, budgetMs),
});
