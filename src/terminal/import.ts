import type { ImportAnswer } from '../commands/import/index.ts';
import { componentWords } from '../plan/index.ts';
import { count, quoted } from '../text/index.ts';

/** The filed set in words: the request, where it waits, and what it was filed with. Pure. */
export function importedText(a: ImportAnswer, file: string): string {
  const lines = [
    `Filed ${a.request.id} in ${a.env} (${a.request.state}): ${a.plan.changes.length} change${a.plan.changes.length === 1 ? '' : 's'} from ${file}, applied in this order once approved in Slack:`,
    ...a.plan.changes.map(
      (c, i) =>
        `  ${i + 1}. ${c.action} ${componentWords(c.component ?? 'policy')} ${quoted(c.name ?? c.policy ?? '')} in ${quoted(c.vhost)}`,
    ),
  ];
  const i = a.plan.impact;
  if (i.messagesLost || i.messagesDeadLettered || i.queuesDeleted)
    lines.push(
      `Loss the approval acknowledges: ${i.messagesLost} messages lost, ${i.messagesDeadLettered} dead-lettered, ${i.queuesDeleted} queues deleted.`,
    );
  if (a.plan.transitional.length)
    lines.push(`On the way: ${count(a.plan.transitional.length, 'object')} at risk (see --json).`);
  return `${lines.join('\n')}\n`;
}
