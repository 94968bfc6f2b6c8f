import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { Metrics } from '../bot/metrics/index.ts';
import type { Logger } from '../log/index.ts';
import { MAX_CLOCK_SKEW_SEC } from './freshness.ts';
import type { SlackRedis } from './redis.ts';

/**
 * A signed Slack request is good for its whole lifetime: anyone who captures one (a proxy log, a
 * shared HAR file) can post it again, and Slack's signature still holds. Events carry an id and
 * are answered once by it (`redis.ts`); slash commands and form submissions carry none, so they
 * are remembered by what was signed, `v0:<timestamp>:<body>`, for as long as the signature is
 * accepted (five minutes behind, and as far ahead, `freshness.ts`), in Redis so that every
 * replica knows. The second delivery is acknowledged and nothing else happens: no second answer,
 * no second change request. Socket Mode carries no signature and is not replayable from outside.
 */

/** The context key under which the receiver hands over the signed request's digest. */
export const SIGNED_REQUEST = 'signedRequest';

/** Long enough for the signature's whole lifetime, both ways, with a minute to spare. */
export const SIGNED_REQUEST_MEMORY_SECONDS = 2 * MAX_CLOCK_SKEW_SEC + 60;

/** For HTTPReceiver's `customPropertiesExtractor`: runs after Bolt verified the signature. */
export function signedRequestOf(req: IncomingMessage & { rawBody?: Buffer }): Record<string, string> {
  const ts = req.headers['x-slack-request-timestamp'];
  if (typeof ts !== 'string' || !Buffer.isBuffer(req.rawBody)) return {};
  const digest = createHash('sha256').update(`v0:${ts}:`).update(req.rawBody).digest('hex');
  return { [SIGNED_REQUEST]: digest };
}

export interface ReplayDeps {
  readonly redis: Pick<SlackRedis, 'set'>;
  readonly keyPrefix: string;
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, 'replayedRequests'>;
}

/** What a payload is, for the replay rule: only commands and form submissions are remembered. */
function kindOf(body: unknown): 'command' | 'view_submission' | undefined {
  const b = body as { command?: unknown; type?: unknown } | null;
  if (typeof b?.command === 'string') return 'command';
  if (b?.type === 'view_submission') return 'view_submission';
  return undefined;
}

/** Global middleware: a slash command or a form submission seen before is acknowledged, and dropped. */
export function refuseReplays(deps: ReplayDeps): Middleware<AnyMiddlewareArgs> {
  return async (args) => {
    const kind = kindOf(args.body);
    const digest = (args.context as Record<string, unknown>)[SIGNED_REQUEST];
    if (kind === undefined || typeof digest !== 'string') return args.next();
    let first = true;
    try {
      const set = await deps.redis.set(
        `${deps.keyPrefix}:signed:${digest}`,
        '1',
        'EX',
        SIGNED_REQUEST_MEMORY_SECONDS,
        'NX',
      );
      first = set === 'OK';
    } catch (err) {
      // Without Redis nothing can be filed anyway, and a read-only answer twice harms nobody.
      deps.logger.warn({ err, kind }, 'replay memory unavailable; handling the request anyway');
    }
    if (first) return args.next();
    deps.metrics.replayedRequests.inc({ kind });
    deps.logger.warn({ kind }, 'a signed request seen before was posted again: acknowledged, not handled');
    const ack = (args as { ack?: () => Promise<void> }).ack;
    await ack?.();
  };
}
