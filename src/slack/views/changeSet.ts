import { actionOf } from '../../policy/compare.ts';
import { showInvisible } from '../../text/asWritten.ts';
import { type ChangeSet, stepStates } from '../../workflow/changeSet.ts';
import type { ChangeRequest } from '../../workflow/types.ts';
import { code, prose, truncate } from '../escape.ts';
import type { AttachedFile } from '../slackCalls.ts';
import { type Block, context, listSection, section } from './message.ts';

/**
 * A change set's request message, pure: after the loss (the end state's, `requestMessage` puts it
 * first), the way's, then the changes in the order they are written, at most SHOWN of them and as
 * many as fit one section (a set of 100 at the name limit stays within Slack's limits:
 * test/unit/slack-views-set.test.ts); the whole list is the attached file.
 */

export const SHOWN = 15;

function stepLine(s: ChangeSet['steps'][number], i: number, state?: string): string {
  const layer = s.layer === 'operator' ? 'operator policy' : 'policy';
  return `${i + 1}. ${prose(actionOf(s))} ${layer} ${code(truncate(s.name, 100))} in ${code(truncate(s.vhost, 60))}${state ? ` · _${state}_` : ''}`;
}

export function setBlocks(r: ChangeRequest & { set: ChangeSet }): Block[] {
  const steps = r.set.steps;
  const states = r.setProgress ? stepStates(r.setProgress) : undefined;
  const way = r.set.transitional;
  const wayLine =
    way && (way.messagesLost || way.messagesDeadLettered || way.queuesDeleted)
      ? `*On the way* (no order avoids it): ${way.messagesLost} messages lost, ${way.messagesDeadLettered} dead-lettered, ${way.queuesDeleted} queues deleted: counted in the loss above.`
      : '*On the way*: the order of writing removes nothing the end state does not.';
  return [
    section(wayLine),
    listSection(
      `*${steps.length} change${steps.length === 1 ? '' : 's'} from* ${code(truncate(r.set.source, 200))}, *in the order of writing* (each re-checked before it is written; one that fails rolls back those written):`,
      steps.map((s, i) => stepLine(s, i, states?.[i])),
      { maxItems: SHOWN },
    ),
    context(
      [
        steps.length > 1 ? 'Every change, in order, is in the attached file.' : '',
        r.set.unchanged
          ? `${r.set.unchanged} polic${r.set.unchanged === 1 ? 'y' : 'ies'} of the file unchanged.`
          : '',
      ]
        .filter(Boolean)
        .join(' ') || 'The only change of the file.',
    ),
  ];
}

/** Every change of the set, in order, as a text file: the whole plan, reachable from the message. */
export function setFile(r: ChangeRequest & { set: ChangeSet }): AttachedFile {
  const lines = r.set.steps.map(
    (s, i) =>
      `${i + 1}. ${actionOf(s)} ${s.layer === 'operator' ? 'operator policy' : 'policy'} ${showInvisible(s.name)} in ${showInvisible(s.vhost)}\n` +
      `   before: ${s.before ? JSON.stringify(s.before) : '(none)'}\n   after:  ${s.after ? JSON.stringify(s.after) : '(none)'}`,
  );
  return {
    filename: `set-${r.id}.txt`,
    title: `Change set ${r.id}: every change, in the order of writing`,
    content: `${lines.join('\n')}\n`,
  };
}
