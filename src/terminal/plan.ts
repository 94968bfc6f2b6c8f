import { whyOf } from '../commands/lint/index.ts';
import { planIncompleteWords } from '../commands/plan/index.ts';
import { maskUris } from '../core/index.ts';
import type { PlanObject, PlanResult, PlanStep } from '../plan/index.ts';
import { componentOf, componentWords, fieldsOf, isParameterStep, stepLinksWords } from '../plan/index.ts';
import { impactWords, totalsWords } from '../policy/impact/index.ts';
import type { LayerNames } from '../policy/simulate/index.ts';
import { definitionWritten, jsonWritten, quoted, showInvisible, terminalText } from '../text/index.ts';
import { policyWords } from './preview.ts';

/**
 * The plan as terminal text, for a reviewer reading it in a pull request: what the set loses
 * first (the end state, then the states on the way), then the changes in the order of writing,
 * then object by object, then what the file holds that was left alone. The front door's last line
 * names the environment (src/terminal/answeredFor.ts).
 */

const DETAIL_LIMIT = 100;
const show = (s: string) => (s === '' ? '(default exchange)' : showInvisible(s));

function stepWords(s: PlanStep, i: number): string[] {
  const what = `${componentWords(componentOf(s))} ${quoted(s.name)} in vhost ${quoted(s.vhost)}`;
  const lines = [`  ${i + 1}. ${s.action} ${what}`];
  for (const l of stepLinksWords(s.links, quoted)) lines.push(`       ${l}`);
  if (isParameterStep(s)) {
    // Its URIs masked: a password is never printed.
    if (s.before) lines.push(`       now:   ${jsonWritten(maskUris(s.before.value))}`);
    if (s.after) lines.push(`       after: ${jsonWritten(maskUris(s.after.value))}`);
    return lines;
  }
  const before = fieldsOf(s.before);
  const after = fieldsOf(s.after);
  if (before) lines.push(`       now:   ${policyWords(before)}`);
  if (after) lines.push(`       after: ${policyWords(after)}`);
  return lines;
}

function layerWords(l: LayerNames): string {
  if (l.candidates) return `undefined between ${l.candidates.map(show).join(' and ')}`;
  const user = l.policy === null ? 'no policy' : `policy ${show(l.policy)}`;
  return l.operatorPolicy === null ? user : `${user}, operator policy ${show(l.operatorPolicy)}`;
}

function objectWords(o: PlanObject): string[] {
  const head = `  ${o.kind} ${show(o.name)} (vhost ${show(o.vhost)}): ${layerWords(o.before)} -> ${layerWords(o.after)}`;
  const lines = [head];
  const parts = [
    Object.keys(o.lost).length ? `loses ${definitionWritten(o.lost)}` : '',
    Object.keys(o.gained).length ? `gains ${definitionWritten(o.gained)}` : '',
    Object.keys(o.changed).length
      ? `changes ${Object.entries(o.changed)
          .map(([k, [a, b]]) => `${showInvisible(k)} ${jsonWritten(a)} -> ${jsonWritten(b)}`)
          .join(', ')}`
      : '',
  ].filter(Boolean);
  if (parts.length) lines.push(`      ${parts.join('; ')}`);
  for (const x of o.impact) lines.push(`      ${impactWords(x, show)}`);
  return lines;
}

export function planText(r: PlanResult): string {
  if (r.status === 'refused') {
    return `${['Plan: the file is refused, nothing planned.', ...r.problems.map((p) => `  ${p}`)].join('\n')}\n`;
  }
  if (r.status === 'not-asked') {
    return `Plan: the broker could not be asked (${r.why}${r.detail ? `: ${r.detail}` : ''}).\n`;
  }
  const { plan } = r;
  const vhosts = plan.vhosts.map((v) => `${quoted(v.vhost)} (RabbitMQ ${v.brokerVersion})`).join(', ');
  // What the loss depends on and could not be read: said first, before any figure of it.
  const incomplete = planIncompleteWords(r, quoted);
  const lines: string[] = [
    ...(incomplete ? [incomplete, ''] : []),
    `Plan for vhost ${vhosts || '(none named)'}`,
  ];
  lines.push(
    `  ${plan.changes.length} to change, ${plan.unchanged} unchanged${plan.changes.length ? '' : ': nothing to do'}.`,
  );
  // The loss first: the end state, then what a state on the way would do that the end does not.
  lines.push('', 'What the set loses:');
  const totals = totalsWords(plan.impact);
  lines.push(`  end state: ${totals ?? 'removes no message and deletes no queue'}`);
  if (plan.losing.length)
    lines.push(
      `    queues: ${plan.losing.slice(0, 20).map(show).join(', ')}${plan.losing.length > 20 ? ` … and ${plan.losing.length - 20} more` : ''}`,
    );
  if (plan.transitional.length === 0) {
    lines.push('  on the way: nothing; every state between the steps is as safe as the end state');
  } else {
    lines.push('  on the way (the order chosen avoids all the bot found it could):');
    for (const t of plan.transitional) {
      for (const x of t.impact)
        lines.push(
          `    after step ${t.step + 1}, ${t.kind} ${show(t.name)} (vhost ${show(t.vhost)}): ${impactWords(x, show)}`,
        );
    }
  }
  // Beside the loss: the surprises the end state would hold that the broker does not hold now.
  if (plan.changes.length) {
    lines.push(
      '',
      plan.findings.length
        ? `What lint would find in the end state and does not find now (${plan.findings.length}):`
        : 'What lint would find in the end state and does not find now: nothing.',
    );
    for (const f of plan.findings) {
      lines.push(`  ${f.severity.toUpperCase()}  ${f.kind}  (vhost ${show(f.vhost)})  ${whyOf(f)}`);
      const more = f.objectCount - f.objects.length;
      if (f.objects.length)
        lines.push(`      ${f.objects.map(quoted).join(', ')}${more > 0 ? `, and ${more} more` : ''}`);
    }
  }
  if (plan.changes.length) {
    lines.push('', 'The changes, in the order they are written:');
    plan.changes.forEach((s, i) => {
      lines.push(...stepWords(s, i));
    });
  }
  const objects = plan.vhosts.flatMap((v) => v.objects);
  if (objects.length) {
    lines.push('', `What each object gets (${objects.length}):`);
    for (const o of objects.slice(0, DETAIL_LIMIT)) lines.push(...objectWords(o));
    if (objects.length > DETAIL_LIMIT)
      lines.push(`  … and ${objects.length - DETAIL_LIMIT} more (--json lists them all)`);
  }
  const unpredictable = plan.vhosts.flatMap((v) => v.unpredictable.map((u) => ({ ...u, vhost: v.vhost })));
  if (unpredictable.length) {
    lines.push('', 'Not predicted:');
    for (const u of unpredictable) lines.push(`  ${show(u.name)} (vhost ${show(u.vhost)}): ${u.why}`);
  }
  const ignored = Object.entries(plan.ignored);
  lines.push('', 'Left alone (not managed by the bot):');
  lines.push(
    ignored.length ? `  ${ignored.map(([k, n]) => `${n} ${showInvisible(k)}`).join(', ')}` : '  nothing',
  );
  const notes = plan.vhosts.flatMap((v) => [
    ...(v.sampledAt
      ? [
          `Messages in vhost ${quoted(v.vhost)} as the broker's statistics said at ${v.sampledAt.slice(11, 19)} UTC.`,
        ]
      : []),
    ...v.notes,
  ]);
  if (notes.length) lines.push('', ...notes);
  return terminalText(lines);
}
