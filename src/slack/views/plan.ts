import { whyOf } from '../../commands/lint/index.ts';
import { planIncompleteWords } from '../../commands/plan/index.ts';
import {
  componentOf,
  componentWords,
  type PlanResult,
  type PlanStep,
  stepLinksWords,
} from '../../plan/index.ts';
import { totalsWords } from '../../policy/impact/index.ts';
import { planText } from '../../terminal/index.ts';
import { count as plural } from '../../text/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { leadWith } from './incomplete.ts';
import { context, finish, listSection, type MessageWithFile, section } from './message.ts';

/**
 * `@rmq plan` with a definitions file attached, pure: the loss first (the end state's, then what a
 * state on the way would do), then the changes in the order of writing (as many as fit), then
 * what the file holds that was left alone; the whole plan (every change and object, as the
 * terminal prints it) in the attached file whenever there is a plan.
 */

function stepLine(s: PlanStep, i: number): string {
  const links = stepLinksWords(s.links, (n) => code(truncate(n, 60)), 3);
  return `${i + 1}. ${prose(s.action)} ${componentWords(componentOf(s))} ${code(truncate(s.name, 100))} in ${code(truncate(s.vhost, 60))}${links.map((l) => ` · ${l}`).join('')}`;
}

export function planView(result: PlanResult, source: string): MessageWithFile {
  const from = code(truncate(source, 200));
  if (result.status === 'refused') {
    const text = `The file ${from} is refused, nothing planned: ${result.problems.map(prose).join(' ')}`;
    return finish([section(`:x: ${text}`)], text);
  }
  if (result.status === 'not-asked') {
    const text = `The broker could not be asked (${prose(result.why)}${result.detail ? `: ${prose(result.detail)}` : ''}): nothing planned.`;
    return finish([section(`:warning: ${text}`)], text);
  }
  const { plan } = result;
  const head = `*Plan of* ${from}: ${plural(plan.changes.length, 'change')}, ${plan.unchanged} unchanged${plan.changes.length ? '' : ': nothing to do'}.`;
  const end = totalsWords(plan.impact);
  const loss = [
    `*What the set loses* — end state: ${end ? `*${end}*` : 'removes no message and deletes no queue'}.`,
    plan.transitional.length
      ? `On the way (no order avoids it): ${plural(new Set(plan.transitional.map((t) => `${t.vhost}/${t.name}`)).size, 'object')} at risk, ${plan.transitional
          .slice(0, 5)
          .map((t) => `${code(truncate(t.name, 80))} after step ${t.step + 1}`)
          .join(', ')}${plan.transitional.length > 5 ? ' …' : ''}.`
      : 'On the way: nothing; every state between the steps is as safe as the end state.',
    ...(plan.findings.length
      ? [
          `*New lint findings in the end state* (${plan.findings.length}): ${plan.findings
            .slice(0, 3)
            .map((f) => `${prose(f.severity)} · ${prose(f.kind)} · ${prose(truncate(whyOf(f), 300))}`)
            .join(' ')}${plan.findings.length > 3 ? ' …' : ''}`,
        ]
      : []),
  ].join('\n');
  const ignored = Object.entries(plan.ignored);
  const blocks = [
    section(head),
    section(loss),
    ...(plan.changes.length
      ? [listSection('*The changes, in the order they are written:*', plan.changes.map(stepLine))]
      : []),
    context(
      `Left alone (not managed by the bot): ${ignored.length ? ignored.map(([k, n]) => `${n} ${prose(k)}`).join(', ') : 'nothing'}. The whole plan is in the attached file; nothing was written.`,
    ),
  ];
  const text = `Plan of ${prose(truncate(source, 200))}: ${plural(plan.changes.length, 'change')}; end state: ${end ?? 'removes nothing'}.`;
  const name = source.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'definitions';
  return {
    ...leadWith(
      finish(blocks, text),
      planIncompleteWords(result, (v) => code(truncate(v, 60))),
    ),
    file: {
      filename: `plan-${name}.txt`,
      title: `Plan of ${truncate(source, 200)}: every change and object`,
      content: planText(result),
    },
  };
}
