import {
  NOT_ASKED_WORDS,
  OPERATOR_POLICIES_NOT_LISTED,
  POLICIES_TIE_WORDS,
  UNANCHORED_MARK,
} from '../commands/index.ts';
import type { ListedPolicy, PoliciesResult } from '../commands/policies/index.ts';
import { definitionWritten as definition, quoted, terminalText } from '../text/index.ts';

/** The `policies` answer as terminal text: the policies by priority, then the operator policies apart. */

function row(p: ListedPolicy): string[] {
  const marks = [p.unanchored ? UNANCHORED_MARK : '', p.tie ? 'tie: shares its priority' : ''].filter(
    Boolean,
  );
  return [
    `  ${String(p.priority).padStart(4)}  ${p.name} — pattern ${quoted(p.pattern)}, apply-to ${p.applyTo}${marks.length ? ` (${marks.join('; ')})` : ''}`,
    `        sets ${definition(p.definition)}`,
  ];
}

export function policiesText(r: PoliciesResult): string {
  const vhost = quoted(r.vhost);
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    return terminalText([
      `Could not list the policies of vhost ${vhost}: ${why}${r.detail ? ` (${r.detail})` : ''}.`,
    ]);
  }
  const lines = [`Policies of vhost ${vhost} by priority, highest first (broker ${r.brokerVersion ?? '?'}):`];
  if (r.policies.length === 0) lines.push('  (none)');
  for (const p of r.policies) lines.push(...row(p));
  if (r.policies.some((p) => p.tie)) lines.push(`  ${POLICIES_TIE_WORDS}`);
  if (r.operatorPolicies.length > 0) {
    lines.push(
      '',
      'Operator policies (applied on top of whichever policy governs; for limits both set, the stricter value holds):',
    );
    for (const p of r.operatorPolicies) lines.push(...row(p));
  }
  if (r.operatorPoliciesNotRead !== undefined)
    lines.push('', `Not read: ${OPERATOR_POLICIES_NOT_LISTED} (${r.operatorPoliciesNotRead})`);
  return terminalText(lines);
}
