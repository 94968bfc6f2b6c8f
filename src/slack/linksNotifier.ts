import type { Logger } from '../log/index.ts';
import type { LinksNotifier } from '../watch/index.ts';
import type { Delivery } from './delivery.ts';
import { linksWatchView } from './views/linksWatch.ts';

/**
 * Posts a burst of links gone down or come back (src/watch/links.ts) to the environment's
 * approvals channel as one message, through the one delivery helper (its retries, Slack's
 * `Retry-After`, its budget). No approvals channel configured: logged, not posted.
 */
export function slackLinksNotifier(delivery: Pick<Delivery, 'toChannel'>, log: Logger): LinksNotifier {
  return {
    async links(entries, channel) {
      const [first] = entries;
      if (!first) return;
      if (!channel) {
        log.info(
          { records: entries.map((e) => e.id), env: first.env, went: first.went },
          'links that went down or came back recorded; no approvals channel to post to',
        );
        return;
      }
      const sent = await delivery.toChannel({ channel }).send(linksWatchView(entries), 'channel');
      if (!sent.ok) throw new Error(`Slack did not take the post to ${channel}: ${sent.error}`);
    },
  };
}
