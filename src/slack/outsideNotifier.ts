import type { Logger } from '../log.ts';
import type { OutsideNotifier } from '../watch/outside.ts';
import type { Delivery } from './delivery.ts';
import { outsideView } from './views/outside.ts';

/**
 * Posts a change made outside the bot to the environment's approvals channel, through the one
 * delivery helper (its retries and budget). No approvals channel configured: logged, not posted.
 */
export function slackOutsideNotifier(delivery: Pick<Delivery, 'toChannel'>, log: Logger): OutsideNotifier {
  return {
    async outside(record, channel) {
      if (!channel) {
        log.info(
          { record: record.id, env: record.env },
          'change outside the bot recorded; no approvals channel to post to',
        );
        return;
      }
      const sent = await delivery.toChannel({ channel }).send(outsideView(record), 'channel');
      if (!sent.ok) throw new Error(`Slack did not take the post to ${channel}: ${sent.error}`);
    },
  };
}
