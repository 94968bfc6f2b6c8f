import {
  NOT_ASKED_WORDS,
  OPERATOR_POLICIES_NOT_LISTED,
  POLICIES_TIE_WORDS,
  UNANCHORED_MARK,
} from '../../commands/index.ts';
import type { ListedPolicy, PoliciesResult } from '../../commands/policies/index.ts';
import { showInvisible } from '../../text/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { SLACK_LIMITS, VIEW_BUDGET } from '../limits.ts';
import type { AttachedFile } from '../slackCalls.ts';
import {
  type Block,
  context,
  finish,
  type MessageWithFile,
  section,
  setsWords,
  totalText,
} from './message.ts';
import { csvField } from './preview.ts';

/**
 * The `policies` answer as a Slack message: the policies by priority (highest first), each
 * unanchored pattern and each shared priority marked, then the operator policies in a part of
 * their own, present only when there are any. As many as fit Slack's limits are in the message;
 * when some do not, the whole list comes as a CSV file for the delivery to attach. Pure.
 */

/** Characters of a name, a pattern, a key and a value shown; `keys`: before "and N more keys". */
const MAX_SHOWN = { name: 120, pattern: 120, key: 50, value: 60, keys: 4 } as const;
/** Text kept free for the heading, the notes and the footer. */
const RESERVED_TEXT = 1500;

function line(p: ListedPolicy): string {
  const unanchored = p.unanchored ? ` _(${UNANCHORED_MARK})_` : '';
  const tie = p.tie ? ' · :warning: _tie_' : '';
  return `• *${p.priority}* · ${code(truncate(p.name, MAX_SHOWN.name))}${tie} · pattern ${code(truncate(p.pattern, MAX_SHOWN.pattern))}${unanchored} · applies to ${code(p.applyTo)}\n      ${setsWords(p.definition, MAX_SHOWN)}`;
}

/**
 * The heading and as many lines as fit, in as few sections as they fit (each under Slack's
 * section limit), within the block and text budget. Never splits a line; says how many it holds.
 */
export function pages(
  heading: string,
  lines: readonly string[],
  budget: { blocks: number; text: number },
): { blocks: Block[]; shown: number } {
  const perSection = SLACK_LIMITS.sectionText - 100;
  const blocks: Block[] = [];
  let current = heading;
  let used = 0;
  let shown = 0;
  for (const l of lines) {
    const joined = `${current}\n${l}`;
    if (joined.length <= perSection) {
      if (used + joined.length > budget.text) break;
      current = joined;
    } else {
      if (blocks.length + 2 > budget.blocks || used + current.length + l.length > budget.text) break;
      blocks.push(section(current));
      used += current.length;
      current = l;
    }
    shown++;
  }
  blocks.push(section(current));
  return { blocks, shown };
}

function notAsked(r: PoliciesResult): MessageWithFile {
  const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
  const detail = r.detail ? ` (${code(truncate(r.detail, 300))})` : '';
  return finish(
    [section(`:x: *Could not list the policies* of vhost ${code(truncate(r.vhost, 200))}: ${why}${detail}.`)],
    `Could not list the policies of vhost ${prose(truncate(r.vhost, 200))}: ${why}.`,
  );
}

export function policiesView(r: PoliciesResult): MessageWithFile {
  if (r.answer === 'not-asked') return notAsked(r);
  const vhost = code(truncate(r.vhost, 200));
  const budget = { blocks: VIEW_BUDGET.blocks - 6, text: VIEW_BUDGET.totalText - RESERVED_TEXT };

  const heading =
    r.policies.length === 0
      ? `*Policies of vhost* ${vhost}: none.`
      : `*Policies of vhost* ${vhost}, by priority, highest first (${r.policies.length}):`;
  const user = pages(heading, r.policies.map(line), budget);
  const blocks: Block[] = [...user.blocks];
  let shown = user.shown;
  if (r.policies.some((p) => p.tie)) blocks.push(context(`:warning: ${POLICIES_TIE_WORDS}`));

  let operatorShown = 0;
  if (r.operatorPolicies.length > 0) {
    const left = {
      blocks: budget.blocks - blocks.length,
      text: budget.text - totalText(blocks),
    };
    const op = pages(
      `*Operator policies* (${r.operatorPolicies.length}), applied on top of whichever policy governs; for limits both set, the stricter value holds:`,
      r.operatorPolicies.map(line),
      left,
    );
    blocks.push(...op.blocks);
    operatorShown = op.shown;
  }
  if (r.operatorPoliciesNotRead !== undefined) {
    blocks.push(
      context(`:lock: ${OPERATOR_POLICIES_NOT_LISTED} (${code(truncate(r.operatorPoliciesNotRead, 200))})`),
    );
  }

  const total = r.policies.length + r.operatorPolicies.length;
  shown += operatorShown;
  const needsFile = shown < total;
  const footer = [`broker ${r.brokerVersion ?? 'unknown'}`];
  if (needsFile) footer.push(`${shown} of ${total} shown: the whole list is in the attached file`);
  blocks.push(context(footer.join(' · ')));

  const text = `Policies of vhost ${prose(truncate(r.vhost, 200))}: ${r.policies.length} policies${
    r.operatorPolicies.length ? ` and ${r.operatorPolicies.length} operator policies` : ''
  }.`;
  const message = finish(blocks, text);
  return needsFile ? { ...message, file: policiesCsv(r) } : message;
}

const CSV_COLUMNS = ['layer', 'priority', 'name', 'pattern', 'apply_to', 'unanchored', 'tie', 'definition'];

/** Every policy, one per row: the file attached when the message cannot hold them all. */
export function policiesCsv(r: PoliciesResult): AttachedFile {
  const rows = [CSV_COLUMNS.join(',')];
  const add = (layer: string, p: ListedPolicy) =>
    rows.push(
      [
        layer,
        String(p.priority),
        p.name,
        p.pattern,
        p.applyTo,
        String(p.unanchored),
        String(p.tie),
        JSON.stringify(p.definition),
      ]
        .map(csvField)
        .join(','),
    );
  for (const p of r.policies) add('policy', p);
  for (const p of r.operatorPolicies) add('operator-policy', p);
  const safe = r.vhost.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'vhost';
  return {
    filename: `policies-${safe}.csv`,
    title: `Policies of vhost ${showInvisible(r.vhost)}`,
    content: `${rows.join('\n')}\n`,
  };
}
