import type { Impact } from './impactTypes.ts';

/** What an approver accepts: the totals of a change's impact, and whether a fresh preview's loss grew beyond them. */

export interface ImpactTotals {
  readonly messagesDeadLettered: number;
  readonly messagesLost: number;
  readonly queuesDeleted: number;
  readonly queuesRefusingPublishes: number;
}

export const NO_IMPACT: ImpactTotals = {
  messagesDeadLettered: 0,
  messagesLost: 0,
  queuesDeleted: 0,
  queuesRefusingPublishes: 0,
};

/** The totals: `messagesLost` counts messages removed with nowhere to go and those of deleted queues. */
export function impactTotals(lists: Iterable<readonly Impact[]>): ImpactTotals {
  let messagesDeadLettered = 0;
  let messagesLost = 0;
  let queuesDeleted = 0;
  let queuesRefusingPublishes = 0;
  for (const list of lists) {
    for (const x of list) {
      if (x.effect === 'drop') {
        if (x.fate === 'dead-lettered') messagesDeadLettered += x.messages;
        else messagesLost += x.messages;
      } else if (x.effect === 'delete') {
        queuesDeleted++;
        messagesLost += x.messages;
      } else if (x.effect === 'reject-publish') {
        queuesRefusingPublishes++;
      }
    }
  }
  return { messagesDeadLettered, messagesLost, queuesDeleted, queuesRefusingPublishes };
}

/** Whether approving the change means accepting a loss (messages removed or queues deleted). */
export const removesData = (t: ImpactTotals): boolean =>
  t.messagesDeadLettered + t.messagesLost + t.queuesDeleted > 0;

/** The loss an approver accepts: the totals, and the queues that lose messages or are deleted. */
export interface Loss {
  readonly totals: ImpactTotals;
  readonly queues: readonly string[];
}

/** The queues whose messages a change removes or which it deletes. */
export function losingQueues(objects: Iterable<{ name: string; impact: readonly Impact[] }>): string[] {
  const out: string[] = [];
  for (const o of objects) {
    if (o.impact.some((x) => (x.effect === 'drop' && x.messages > 0) || x.effect === 'delete'))
      out.push(o.name);
  }
  return out;
}

/**
 * Whether `fresh` removes more than `accepted`: more messages dead-lettered or lost, more queues
 * deleted, or a queue that was not losing anything. The apply job's check that an approval still
 * covers the change.
 */
export function lossGrew(accepted: Loss, fresh: Loss): boolean {
  const a = accepted.totals;
  const f = fresh.totals;
  if (f.messagesLost > a.messagesLost || f.messagesDeadLettered > a.messagesDeadLettered) return true;
  if (f.queuesDeleted > a.queuesDeleted) return true;
  const known = new Set(accepted.queues);
  return fresh.queues.some((q) => !known.has(q));
}
