import type { Logger } from '../log/index.ts';
import type { OutsideNotifier } from '../watch/index.ts';
import type { Delivery } from './delivery.ts';
import { outsideBurstFile, outsideBurstView } from './views/outside.ts';

/**
 * Posts a burst of changes made outside the bot (src/watch/outside.ts) to the environment's
 * approvals channel as one message, through the one delivery helper (its retries, Slack's
 * `Retry-After`, its budget); a burst of several also gets every change in an attached file.
 * Posts to one channel go one after another (a queue per channel: Slack takes about one message
 * a second per channel), so a flood of bursts waits its turn instead of being refused. No
 * approvals channel configured: logged, not posted.
 */
export function slackOutsideNotifier(delivery: Pick<Delivery, 'toChannel'>, log: Logger): OutsideNotifier {
  const queues = new Map<string, Promise<unknown>>();
  const inTurn = <T>(channel: string, work: () => Promise<T>): Promise<T> => {
    const run = (queues.get(channel) ?? Promise.resolve()).then(work, work);
    const settled = run.catch(() => undefined);
    queues.set(channel, settled);
    void settled.then(() => {
      if (queues.get(channel) === settled) queues.delete(channel);
    });
    return run;
  };
  return {
    async outside(records, channel) {
      const [first] = records;
      if (!first) return;
      if (!channel) {
        log.info(
          { records: records.map((r) => r.id), env: first.env },
          'changes outside the bot recorded; no approvals channel to post to',
        );
        return;
      }
      await inTurn(channel, async () => {
        const to = delivery.toChannel({ channel });
        const sent = await to.send(outsideBurstView(records), 'channel');
        if (!sent.ok) throw new Error(`Slack did not take the post to ${channel}: ${sent.error}`);
        if (records.length > 1) {
          const attached = await to.attach(outsideBurstFile(records));
          if (!attached.ok)
            log.error(
              { channel, records: records.length, error: attached.error },
              'posted the burst of outside changes, but Slack did not take its file',
            );
        }
      });
    },
  };
}
