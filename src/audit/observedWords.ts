import type { ImpactTotals } from '../policy/impact/index.ts';
import { clock, durationWords, type NameWords, NODE_DOWN, totalsWords } from '../policy/impact/index.ts';
import { count } from '../text/index.ts';
import { agrees, differences, expectedAfter, type Observation, type ObservedQueue } from './observed.ts';

/**
 * Predicted and observed in words, one home for the terminal's `history`, Slack's `history` and
 * its "Applied" post. `name` renders a user- or broker-supplied string as the surface shows such.
 */

const messages = (n: number | null) => (n === null ? 'unknown' : count(n, 'message'));

/** One queue, predicted and observed, in one line (no bullet). */
export function observedQueueWords(q: ObservedQueue, o: Observation, name: NameWords): string {
  const e = expectedAfter(q, Date.parse(o.writtenAt), Date.parse(o.at));
  const after =
    q.messagesAfter === null
      ? 'deleted'
      : q.messagesAfter === undefined
        ? 'unknown'
        : messages(q.messagesAfter);
  const observed = `${name(q.name)}: ${messages(q.messagesBefore)} before, ${after} after`;
  const predicted =
    e === null
      ? q.predictedRemoved === undefined
        ? `nothing predicted (${q.nodeDown && q.messagesBefore === null ? NODE_DOWN : 'statistics unknown'})`
        : 'nothing predicted'
      : e.kind === 'deleted'
        ? `predicted deleted ${durationWords(q.predictedDeletedInMs ?? 0)} after the write`
        : e.kind === 'deletion-due'
          ? `predicted deleted at ${clock(new Date(e.atMs).toISOString())}, after the observation ended`
          : `predicted ${count(e.messages, 'message')}`;
  return `${observed} (${predicted})${agrees(q, o) ? '' : ' — DIFFERS from the prediction'}`;
}

/** The observation's header: how it was read, and whether it settled. */
export function observationWords(o: Observation): string {
  const diff = differences(o).length;
  const read = `read after the write until ${clock(o.at)} (the statistics lag the broker by a few seconds)`;
  const settled = o.unreadable
    ? `the statistics could not be read (${o.unreadable}): the numbers after are the last seen`
    : o.cutShort
      ? 'cut short at the deadline: some numbers may not have settled'
      : null;
  const verdict =
    o.queues.length === 0
      ? 'no touched queue held messages or was predicted to lose any'
      : diff === 0
        ? 'predicted and observed agree'
        : `predicted and observed DIFFER for ${count(diff, 'queue')}`;
  const rest = [
    o.unchanged ? `${count(o.unchanged, 'other queue')} unchanged` : '',
    o.unwatched ? `${count(o.unwatched, 'touched queue')} not watched` : '',
  ].filter(Boolean);
  return `Observed, ${read}${settled ? `, ${settled}` : ''}: ${verdict}${rest.length ? ` (${rest.join(', ')})` : ''}.`;
}

/** The prediction the approvers accepted, in one sentence. */
export function acceptedWords(t: ImpactTotals): string {
  return `Predicted, as the approvers accepted it: ${totalsWords(t) ?? 'no message removed, no queue deleted'}.`;
}
