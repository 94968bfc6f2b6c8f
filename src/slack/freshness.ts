import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HTTPReceiver } from '@slack/bolt';
import type { Logger } from '../log/index.ts';

/**
 * Slack signs `v0:<timestamp>:<body>`, and a request is good for five minutes. Bolt refuses a
 * timestamp more than five minutes in the past but not one in the future, so a signed request
 * captured with a clock set ahead could be replayed for as long as it stays ahead. This refuses
 * it the same way (401, nothing read further), before Bolt sees the request.
 */

export const MAX_CLOCK_SKEW_SEC = 5 * 60;

/** True when the request's `x-slack-request-timestamp` is more than five minutes ahead of `nowSec`. */
export function fromTheFuture(req: IncomingMessage, nowSec = Math.floor(Date.now() / 1000)): boolean {
  const header = req.headers['x-slack-request-timestamp'];
  const ts = Number(Array.isArray(header) ? header[0] : header);
  return Number.isFinite(ts) && ts > nowSec + MAX_CLOCK_SKEW_SEC;
}

/** Wraps the receiver's request listener (the one its server calls for every request). */
export function refuseFutureTimestamps(receiver: HTTPReceiver, logger: Logger): void {
  const listener = receiver.requestListener;
  receiver.requestListener = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'POST' && fromTheFuture(req)) {
      logger.warn({ path: req.url }, 'request refused: its timestamp is more than five minutes ahead');
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end();
      req.resume();
      return;
    }
    listener(req, res);
  };
}
