import { deleteWarning, didYouMeanWords, KIND_WORDS, reachWords, WHICH_WORDS } from '../commands/index.ts';
import { previewIncompleteWords } from '../commands/preview/index.ts';
import { impactWords, objectNowWords, readingWords, totalsWords } from '../policy/impact/index.ts';
import { isAnchored } from '../policy/pattern/index.ts';
import type {
  ImpactSummary,
  PolicyFields,
  PreviewAnswer,
  PreviewObject,
  PreviewResult,
} from '../preview/index.ts';
import { nothingAfterWords, RISK_WORDS } from '../preview/index.ts';
import {
  agree,
  asWritten,
  count,
  definitionWritten,
  jsonWritten,
  quoted,
  showInvisible,
  terminalText,
} from '../text/index.ts';

/**
 * The preview as terminal text, what hurts first: objects losing a dead-letter target, a TTL, a
 * limit…; then ties the change creates; then what an unanchored pattern catches; then every
 * object grouped by what happens to it; then what the bot could not predict.
 */

/** Objects shown one by one (with values) when there are this few; otherwise only groups. */
const DETAIL_LIMIT = 40;
const NAMES_PER_GROUP = 10;

const show = (s: string) => (s === '' ? '(default exchange)' : showInvisible(s));
const value = jsonWritten;

export function policyWords(p: PolicyFields): string {
  return `pattern ${quoted(p.pattern)}, apply-to ${p.applyTo}, priority ${p.priority}, sets ${definitionWritten(p.definition, 'nothing')}`;
}

function header(r: PreviewResult): string[] {
  const c = r.change;
  const what = `${c.operator ? 'operator policy' : 'policy'} ${quoted(c.policy)} in vhost ${quoted(c.vhost)}`;
  const lines = [`Preview: ${c.action} ${what}${r.brokerVersion ? ` (RabbitMQ ${r.brokerVersion})` : ''}`];
  if (c.before) lines.push(`  now:      ${policyWords(c.before)}`);
  if (c.after) {
    const written = asWritten(c.after, r.notes);
    lines.push('  as it will be written:', ...written.lines.map((l) => `    ${l}`));
    for (const n of written.notes) lines.push(`  note: ${n}`);
  }
  return lines;
}

function names(list: readonly string[], total: number): string {
  const shown = list.slice(0, NAMES_PER_GROUP).map(show).join(', ');
  return total > NAMES_PER_GROUP
    ? `${shown} … and ${total - Math.min(list.length, NAMES_PER_GROUP)} more`
    : shown;
}

function keyList(keys: readonly string[]): string {
  return keys.join(', ');
}

function objectLines(o: PreviewObject, layerWords: string, brokerVersion: string | undefined): string[] {
  const lines: string[] = [];
  const noEffect = (k: string) =>
    o.noEffect?.includes(k) ? ` (${WHICH_WORDS.noEffect(o.kind, brokerVersion)})` : '';
  const before = o.before.candidates
    ? `undefined between ${o.before.candidates.join(' and ')}`
    : (o.before.policy ?? 'nothing');
  const after = o.after.candidates
    ? `undefined between ${o.after.candidates.join(' and ')}`
    : (o.after.policy ?? 'nothing');
  const stays = o.after.policy === null && !o.after.candidates && o.unchangedLayer.layer === 'user';
  lines.push(
    `  ${show(o.name)} (${KIND_WORDS[o.kind]}): ${layerWords} ${before} -> ${after}${stays ? ` (${nothingAfterWords(o)})` : ''}`,
  );
  for (const [k, v] of Object.entries(o.lost)) lines.push(`      loses   ${k}=${value(v)}${noEffect(k)}`);
  for (const [k, v] of Object.entries(o.gained)) {
    lines.push(
      `      gains   ${k}=${value(v)}${o.heldBy[k] === 'operator-policy' ? ' (from the operator policy)' : ''}${noEffect(k)}`,
    );
  }
  for (const [k, [b, a]] of Object.entries(o.changed)) {
    const held =
      o.heldBy[k] === 'operator-policy'
        ? ' (the operator policy holds it)'
        : o.heldBy[k] === 'both'
          ? ' (the stricter of policy and operator policy)'
          : '';
    lines.push(`      changes ${k}: ${value(b)} -> ${value(a)}${held}${noEffect(k)}`);
  }
  for (const k of o.keptByOperator ?? []) {
    if (!(k in o.changed)) lines.push(`      keeps   ${k}: the operator policy holds it`);
  }
  for (const [name, d] of Object.entries(o.ifCandidate ?? {})) {
    const parts = [
      Object.keys(d.lost).length ? `loses ${keyList(Object.keys(d.lost))}` : '',
      Object.keys(d.gained).length ? `gains ${keyList(Object.keys(d.gained))}` : '',
      Object.keys(d.changed).length ? `changes ${keyList(Object.keys(d.changed))}` : '',
    ].filter(Boolean);
    lines.push(`      if ${name} wins: ${parts.join('; ') || 'nothing changes in its values'}`);
  }
  for (const [k, n] of Object.entries(o.arguments ?? {})) {
    const rule =
      n.rule === 'smaller'
        ? 'the smaller of argument and policy holds'
        : n.rule === 'argument'
          ? 'its argument wins over any policy'
          : 'the policy wins over its argument';
    lines.push(
      `      its own ${n.argument}=${value(n.argumentValue)}: ${rule}, so ${k} in use goes ${value(n.before)} -> ${value(n.after)}`,
    );
  }
  if (o.kind !== 'exchange') lines.push(`      now     ${objectNowWords(o.now, o.nodeDown)}`);
  for (const x of o.impact) lines.push(`      ! ${impactWords(x, quoted)}`);
  for (const note of o.notes ?? []) lines.push(`      note: ${note}`);
  return lines;
}

function answered(r: PreviewAnswer): string[] {
  const lines = header(r);
  const s = r.summary;
  const layerWords = r.change.operator ? 'operator policy' : 'policy';
  lines.splice(1, 0, ...changeWarning(r).map((w) => `  ${w}`));
  for (const w of r.warnings) lines.push(`  warning: ${w.message}`);
  lines.push('');
  if (r.objects.length === 0 && r.unpredictable.length === 0) {
    lines.push(
      `Nothing changes: no object's ${layerWords} or values would differ (${s.scanned.queues} queues and ${s.scanned.exchanges} exchanges read).`,
    );
    if (s.unanchoredCatch) lines.push(...catchLines(r));
    return lines;
  }
  const loss = impactLines(s.impact);
  if (s.impact?.count || s.risks.length > 0) lines.push('What hurts:');
  lines.push(...loss);
  if (s.risks.length > 0) {
    for (const risk of s.risks) {
      const how =
        risk.count === 0
          ? `${count(risk.possible, 'object')} may ${RISK_WORDS[risk.risk]}, depending on a tie`
          : `${count(risk.count, 'object')} would ${RISK_WORDS[risk.risk]}${risk.possible ? ` (${risk.possible} more may, depending on a tie)` : ''}`;
      lines.push(`  ! ${how} [${risk.keys.join(', ')}]: ${names(risk.names, risk.count + risk.possible)}`);
    }
  } else if (!s.impact?.count) {
    lines.push(
      'What hurts: no object loses a dead-letter target, TTL, limit, delivery limit, federation upstream, alternate exchange or retention.',
    );
  }
  if (s.newTies.count > 0) {
    lines.push(
      `New ties: ${count(s.newTies.count, 'object')} would be governed by one of several policies of the same priority; the broker's choice between them is not defined:`,
    );
    for (const t of s.newTies.objects.slice(0, NAMES_PER_GROUP))
      lines.push(`  ~ ${show(t.name)}: ${t.candidates.join(' or ')}`);
    if (s.newTies.count > NAMES_PER_GROUP) lines.push(`  … and ${s.newTies.count - NAMES_PER_GROUP} more`);
  }
  if (s.unanchoredCatch) lines.push(...catchLines(r));
  const links = s.impact?.links;
  if (links) {
    const part = (what: string, o: { count: number; names: string[] }) =>
      o.count ? `${what} for ${count(o.count, 'object')}: ${names(o.names, o.count)}` : '';
    lines.push(
      `Federation links: ${[part('start', links.starts), part('stop', links.stops)].filter(Boolean).join('; ')}.`,
    );
  }
  lines.push('', `What happens (${count(s.objects, 'object')} ${agree(s.objects, 'changes', 'change')}):`);
  for (const g of s.groups) {
    const parts = [
      g.lost.length ? `loses ${keyList(g.lost)}` : '',
      g.gained.length ? `gains ${keyList(g.gained)}` : '',
      g.changed.length ? `changes ${keyList(g.changed)}` : '',
    ].filter(Boolean);
    lines.push(
      `  ${g.count} ${g.outcome}${parts.length ? ` — ${parts.join('; ')}` : ''}: ${names(g.names, g.count)}`,
    );
  }
  if (r.objects.length <= DETAIL_LIMIT) {
    lines.push('', 'Object by object:');
    for (const o of r.objects) lines.push(...objectLines(o, layerWords, r.brokerVersion));
  } else {
    lines.push('', `(${r.objects.length} objects: --json lists each one with its values.)`);
  }
  if (r.unpredictable.length > 0) {
    lines.push(
      '',
      `Unpredictable (${r.unpredictable.length}): this bot cannot say what happens to these, and does not guess:`,
    );
    for (const u of r.unpredictable.slice(0, DETAIL_LIMIT)) lines.push(`  ? ${show(u.name)}: ${u.why}`);
    if (r.unpredictable.length > DETAIL_LIMIT)
      lines.push(`  … and ${r.unpredictable.length - DETAIL_LIMIT} more (see --json)`);
  }
  lines.push(
    '',
    `${s.scanned.queues} queues and ${s.scanned.exchanges} exchanges read; every other object keeps what it has.`,
  );
  return lines;
}

/** The live impact, first in "What hurts": the totals, each object's effects, how old the numbers are. */
function impactLines(s: ImpactSummary | undefined): string[] {
  if (!s) return [];
  const lines: string[] = [];
  const totals = totalsWords(s.totals);
  if (totals) lines.push(`  !! Loss: ${totals}`);
  for (const o of s.objects)
    for (const x of o.impact) lines.push(`  ! ${show(o.name)}: ${impactWords(x, quoted)}`);
  if (s.count > s.objects.length)
    lines.push(`  … and ${count(s.count - s.objects.length, 'more object', 'more objects')} (see --json)`);
  // What could not be read is said even when nothing read shows a loss: unknown is not none.
  if (lines.length > 0 || s.unknown > 0 || s.notes.length > 0)
    for (const w of readingWords(s)) lines.push(`    ${w}`);
  return lines;
}

/** Said before anything else: what a delete does not restore, or how far a create or edit reaches. */
function changeWarning(r: PreviewAnswer): string[] {
  const c = r.change;
  if (c.action === 'delete' || c.after === null) return [deleteWarning(c.operator)];
  return [reachWords(quoted(c.after.pattern), c.after.applyTo, !isAnchored(c.after.pattern))];
}

function catchLines(r: PreviewAnswer): string[] {
  const c = r.summary.unanchoredCatch;
  if (!c) return [];
  return [
    `Unanchored pattern ${quoted(c.pattern)} does not start with ^: it also reaches ${count(c.count, 'name')} that ${agree(c.count, 'does', 'do')} not start with it: ${names(c.names, c.count)}`,
  ];
}

function suggestion(what: string, typed: string, names: readonly string[]): string {
  return didYouMeanWords(
    what,
    typed,
    names.map((name) => ({ name })),
    quoted,
  );
}

export function previewText(r: PreviewResult): string {
  switch (r.status) {
    case 'answered': {
      // What the loss depends on and could not be read: said first, before any figure of it.
      const incomplete = previewIncompleteWords(r, quoted);
      return terminalText([...(incomplete ? [incomplete, ''] : []), ...answered(r)]);
    }
    case 'refused': {
      const lines = header(r);
      lines.push('', `Refused: nothing was previewed or filed.`);
      for (const p of r.refusals) lines.push(`  x ${p.message}`);
      for (const w of r.warnings) lines.push(`  warning: ${w.message}`);
      if (r.didYouMean)
        lines.push(
          '',
          suggestion(r.change.operator ? 'operator policy' : 'policy', r.change.policy, r.didYouMean),
        );
      return terminalText(lines);
    }
    case 'not-asked': {
      const why =
        r.why === 'missing-vhost'
          ? (r.detail ?? `vhost ${quoted(r.change.vhost)} does not exist`)
          : `the broker could not be asked (${r.why}${r.detail ? `: ${r.detail}` : ''})`;
      return terminalText([
        `Could not preview ${r.change.action} of ${quoted(r.change.policy)}: ${why}. Nothing is claimed.`,
      ]);
    }
  }
}
