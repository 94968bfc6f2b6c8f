import {
  isKnownPolicy,
  type PolicyView,
  type UnknownPolicyView,
  type WhichResult,
} from '../../commands/which.ts';
import {
  keyRulesUnknownWords,
  kindWords,
  NOT_APPLIED_WORDS,
  NOT_ASKED_WORDS,
  NOT_REPORTED_WORDS,
  ONLY_NAME_KNOWN,
} from '../../commands/words.ts';

/** The `which` answer as terminal text: in force, also matched, operator policy, nothing governs. */

function definition(def: Record<string, unknown>): string {
  const entries = Object.entries(def);
  return entries.length ? entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ') : '(nothing)';
}

/** Pattern, apply-to and priority of a policy, or that only its name is known. */
function fields(p: PolicyView | UnknownPolicyView): string {
  if (!isKnownPolicy(p)) return ` (${ONLY_NAME_KNOWN})`;
  return ` — pattern ${JSON.stringify(p.pattern)}${p.unanchored ? ' (unanchored: matches any name containing it)' : ''}, apply-to ${p.applyTo}, priority ${p.priority}\n    sets ${definition(p.definition)}`;
}

export function whichText(r: WhichResult): string {
  const o = r.object;
  const what = `${kindWords(o.kind)} ${JSON.stringify(o.name)} in vhost ${JSON.stringify(o.vhost)}`;
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    return `Could not ask the broker about ${what}: ${why}${r.detail ? ` (${r.detail})` : ''}.\nNothing is claimed about this object.\n`;
  }
  const lines: string[] = [];
  if (o.kindAssumed)
    lines.push(`No queue or exchange by that name exists; answering as for a classic queue.`);
  if (r.answer === 'not-reported') {
    const cause = r.detail ?? NOT_REPORTED_WORDS[r.why ?? 'missing'] ?? 'it does not exist';
    lines.push(
      `The broker did not report which policy is in force on the ${what} (${cause}).`,
      `What follows is every policy whose pattern matches it, not a statement about which one applies.`,
    );
    if (isKnownPolicy(r.inForce)) {
      lines.push(
        `First match: ${r.inForce.name} (priority ${r.inForce.priority}, pattern ${JSON.stringify(r.inForce.pattern)}${r.inForce.unanchored ? ', unanchored' : ''}) sets ${definition(r.inForce.definition)}${r.ambiguous ? ` — ambiguous: ${(r.candidates ?? []).join(', ')} share its priority` : ''}`,
      );
    }
  } else {
    lines.push(`Policy in force on the ${what} (broker ${r.brokerVersion ?? '?'}):`);
    if (r.inForce) {
      lines.push(`  In force: ${r.inForce.name}${fields(r.inForce)}`);
      if (r.ambiguous)
        lines.push(
          `    tie: ${(r.candidates ?? []).join(', ')} share this priority; the broker's choice between them is not defined`,
        );
    } else {
      lines.push('  In force: no user policy.');
    }
  }
  if (r.alsoMatched.length) {
    lines.push('  Also matched, and does not apply:');
    for (const m of r.alsoMatched) {
      const words = NOT_APPLIED_WORDS[m.reason](kindWords(o.kind));
      const reason = r.answer === 'reported' ? words : words.replace('the one in force', 'the first match');
      lines.push(
        `    - ${m.name} (priority ${m.priority}): ${reason}${m.keys ? ` (${m.keys.join(', ')})` : ''}`,
      );
    }
  }
  if (r.operatorPolicy) {
    lines.push(
      `  Operator policy${r.operatorPolicySource === 'engine' ? " (this bot's reading; the broker does not report it here)" : ''}: ${r.operatorPolicy.name}${isKnownPolicy(r.operatorPolicy) ? ` sets ${definition(r.operatorPolicy.definition)}` : ` (${ONLY_NAME_KNOWN})`}`,
      '    It applies as well; for limits both set, the more restrictive value holds.',
    );
  }
  if (r.nothingGoverns)
    lines.push('  Nothing governs this object: no user policy and no operator policy matches it.');
  const eff = Object.entries(r.effective);
  if (eff.length && !r.nothingGoverns) {
    lines.push(
      `  Effective: ${eff.map(([k, e]) => `${k}=${JSON.stringify(e.value)} (${e.from})`).join(', ')}`,
    );
  }
  for (const u of r.unreadable)
    lines.push(`  Not read: ${u.name} (pattern ${JSON.stringify(u.pattern)}): ${u.why}.`);
  if (o.keyRulesKnown === false) lines.push(`  Note: ${keyRulesUnknownWords(kindWords(o.kind))}`);
  for (const d of r.disagreements) lines.push(`  Note: ${d}`);
  return `${lines.join('\n')}\n`;
}
