import { showInvisible } from '../../text/asWritten.ts';
import { actionOfStep, type ChangeSet, stepStates } from '../../workflow/changeSet.ts';
import type { ChangeRequest } from '../../workflow/types.ts';
import { code, prose, truncate } from '../escape.ts';
import type { AttachedFile } from '../slackCalls.ts';
import { type Block, section } from './message.ts';

/**
 * A change set's request message, pure: the loss first (the end state's and the way's), then the
 * changes in the order they are written, at most SHOWN of them (a set of 100 stays far within
 * Slack's 50 blocks and 3,000 characters a section); the whole list is the attached file.
 */

export const SHOWN = 15;

function stepLine(s: ChangeSet['steps'][number], i: number, state?: string): string {
  const layer = s.layer === 'operator' ? 'operator policy' : 'policy';
  return `${i + 1}. ${prose(actionOfStep(s))} ${layer} ${code(truncate(s.name, 100))} in ${code(truncate(s.vhost, 60))}${state ? ` · _${state}_` : ''}`;
}

export function setBlocks(r: ChangeRequest & { set: ChangeSet }): Block[] {
  const steps = r.set.steps;
  const states = r.setProgress ? stepStates(r.setProgress) : undefined;
  const way = r.set.transitional;
  const wayLine =
    way && (way.messagesLost || way.messagesDeadLettered || way.queuesDeleted)
      ? `*On the way* (no order avoids it): ${way.messagesLost} messages lost, ${way.messagesDeadLettered} dead-lettered, ${way.queuesDeleted} queues deleted: counted in the loss below.`
      : '*On the way*: the order of writing removes nothing the end state does not.';
  const shown = steps.slice(0, SHOWN).map((s, i) => stepLine(s, i, states?.[i]));
  const more = steps.length - shown.length;
  return [
    section(wayLine),
    section(
      [
        `*${steps.length} change${steps.length === 1 ? '' : 's'} from* ${code(truncate(r.set.source, 200))}, *in the order of writing* (each re-checked before it is written; one that fails rolls back those written):`,
        ...shown,
        ...(more > 0 ? [`… and ${more} more: every change is in the attached file.`] : []),
        ...(r.set.unchanged
          ? [`${r.set.unchanged} polic${r.set.unchanged === 1 ? 'y' : 'ies'} of the file unchanged.`]
          : []),
      ].join('\n'),
    ),
  ];
}

/** Every change of the set, in order, as a text file: the whole plan, reachable from the message. */
export function setFile(r: ChangeRequest & { set: ChangeSet }): AttachedFile {
  const lines = r.set.steps.map(
    (s, i) =>
      `${i + 1}. ${actionOfStep(s)} ${s.layer === 'operator' ? 'operator policy' : 'policy'} ${showInvisible(s.name)} in ${showInvisible(s.vhost)}\n` +
      `   before: ${s.before ? JSON.stringify(s.before) : '(none)'}\n   after:  ${s.after ? JSON.stringify(s.after) : '(none)'}`,
  );
  return {
    filename: `set-${r.id}.txt`,
    title: `Change set ${r.id}: every change, in the order of writing`,
    content: `${lines.join('\n')}\n`,
  };
}
