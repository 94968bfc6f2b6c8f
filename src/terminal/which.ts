import {
  didYouMeanWords,
  kindWords,
  NOT_ASKED_WORDS,
  UNANCHORED_MARK,
  WHICH_WORDS,
} from '../commands/index.ts';
import {
  isKnownPolicy,
  type PolicyView,
  type UnknownPolicyView,
  type WhichResult,
} from '../commands/which/index.ts';
import { hazardWords, nowWords, statisticsSaid, unknownNowWords } from '../policy/impact/index.ts';
import { definitionWritten as definition, jsonWritten, quoted, terminalText } from '../text/index.ts';

/**
 * The `which` answer as terminal text, in the parts the Slack view has: in force, also matched,
 * operator policy, nothing governs. When the broker did not report, the matches come by priority
 * with the first one marked, and nothing is said about what applies.
 */

const mark = (p: { unanchored: boolean }) => (p.unanchored ? ` (${UNANCHORED_MARK})` : '');

/** The policy's fields and what it sets, or that only its name is known. */
function policyWords(p: PolicyView | UnknownPolicyView): string {
  if (!isKnownPolicy(p)) return `${p.name} (${WHICH_WORDS.onlyNameKnown})`;
  return `${p.name} — pattern ${quoted(p.pattern)}${mark(p)}, apply-to ${p.applyTo}, priority ${p.priority}`;
}

/** Matches that do not apply, one a line, with why and the keys refused. */
function notAppliedLines(r: WhichResult, list: WhichResult['alsoMatched']): string[] {
  const kind = kindWords(r.object.kind);
  return list.map(
    (m) =>
      `    - ${m.name} (priority ${m.priority})${mark(m)}: ${WHICH_WORDS.notApplied[m.reason](kind)}${m.keys ? ` (${m.keys.join(', ')})` : ''}`,
  );
}

function operatorAlsoMatchedLines(r: WhichResult): string[] {
  const list = r.operatorAlsoMatched ?? [];
  return list.length ? [`  ${WHICH_WORDS.operatorAlsoMatched}:`, ...notAppliedLines(r, list)] : [];
}

function nothingGovernsLines(r: WhichResult): string[] {
  if (!r.nothingGoverns) return [];
  const { heading, why } = WHICH_WORDS.nothingGoverns(r);
  return [`  ${heading}: ${why}`];
}

function argumentsLines(r: WhichResult): string[] {
  const args = r.object.arguments ?? {};
  return Object.keys(args).length ? [`  Its own arguments: ${definition(args)}`] : [];
}

function notReported(r: WhichResult, what: string): string[] {
  const cause = r.detail ?? WHICH_WORDS.notReported[r.why ?? 'missing'] ?? 'it does not exist';
  const lines = [
    `The broker did not report which policy is in force on the ${what} (${cause}).`,
    'What follows is every policy whose pattern matches it, not a statement about which one applies.',
  ];
  const first = r.inForce;
  if (first) {
    lines.push(
      `  ${WHICH_WORDS.matchesByPriority}:`,
      `    1. ${policyWords(first)} — ${WHICH_WORDS.firstByPriority}`,
    );
    if (isKnownPolicy(first)) lines.push(`         sets ${definition(first.definition)}`);
    if (r.ambiguous)
      lines.push(
        `         ambiguous: ${(r.candidates ?? []).join(', ')} share its priority; which one the broker picks is not defined`,
      );
    const kind = kindWords(r.object.kind);
    r.alsoMatched.forEach((m, i) => {
      const later = WHICH_WORDS.laterMatch(m.reason, kind);
      const keys = m.reason === 'refused-key' && m.keys ? ` (${m.keys.join(', ')})` : '';
      const why = later ? ` — ${later}${keys}` : '';
      lines.push(`    ${i + 2}. ${m.name} (priority ${m.priority})${mark(m)}${why}`);
    });
  } else if (r.alsoMatched.length) {
    lines.push(`  ${WHICH_WORDS.noneCanApply}:`, ...notAppliedLines(r, r.alsoMatched));
  } else {
    lines.push(`  ${WHICH_WORDS.noUserPolicyMatches}`);
  }
  if (r.operatorPolicy) {
    lines.push(
      `  Operator policy matching it: ${policyWords(r.operatorPolicy)}${isKnownPolicy(r.operatorPolicy) ? ` sets ${definition(r.operatorPolicy.definition)}` : ''}`,
      `    ${WHICH_WORDS.operatorOnTop}`,
    );
  }
  lines.push(...operatorAlsoMatchedLines(r), ...nothingGovernsLines(r));
  lines.push(...argumentsLines(r));
  return lines;
}

function reported(r: WhichResult, what: string): string[] {
  const lines = [`Policy in force on the ${what} (broker ${r.brokerVersion ?? '?'}):`];
  if (r.inForce) {
    lines.push(`  In force: ${policyWords(r.inForce)}`);
    if (isKnownPolicy(r.inForce)) lines.push(`    sets ${definition(r.inForce.definition)}`);
    if (r.ambiguous)
      lines.push(
        `    tie: ${(r.candidates ?? []).join(', ')} share this priority; the broker's choice between them is not defined`,
      );
  } else {
    lines.push('  In force: no user policy.');
  }
  if (r.alsoMatched.length) lines.push(`  ${WHICH_WORDS.alsoMatched}:`, ...notAppliedLines(r, r.alsoMatched));
  if (r.operatorPolicy) {
    lines.push(
      `  Operator policy${r.operatorPolicySource === 'engine' ? " (this bot's reading; the broker does not report it here)" : ''}: ${r.operatorPolicy.name}${isKnownPolicy(r.operatorPolicy) ? ` sets ${definition(r.operatorPolicy.definition)}` : ` (${WHICH_WORDS.onlyNameKnown})`}`,
      '    It applies as well; for limits both set, the more restrictive value holds.',
    );
  }
  lines.push(...operatorAlsoMatchedLines(r), ...nothingGovernsLines(r));
  const eff = Object.entries(r.effective);
  if (eff.length) {
    lines.push(
      `  Effective: ${eff.map(([k, e]) => `${k}=${jsonWritten(e.value)} (${WHICH_WORDS.from[e.from]}${e.noEffect ? `; ${WHICH_WORDS.noEffect(r.object.kind, r.brokerVersion)}` : ''})`).join(', ')}`,
    );
  }
  lines.push(...argumentsLines(r));
  return lines;
}

/** What is there now and what threatens it: a queue's statistics (or that they are unknown), the hazards. */
function liveLines(r: WhichResult): string[] {
  const lines: string[] = [];
  if (r.now !== undefined) {
    lines.push(
      r.now === null
        ? `  Now: unknown — ${unknownNowWords(r.nodeDown)}.`
        : `  Now: ${nowWords(r.now)} — as ${statisticsSaid(r.now.sampledAt)}.`,
    );
  }
  if (r.hazards.length) {
    lines.push('  Hazards:');
    for (const h of r.hazards) lines.push(`    ! ${hazardWords(h, quoted)}`);
  }
  for (const n of r.hazardsNotRead ?? []) lines.push(`  Not read: ${n}.`);
  if (r.links) {
    lines.push(`  Federation links (${r.links.length} should run):`);
    for (const l of r.links) {
      const node = l.node ? ` on ${quoted(l.node)}` : '';
      const why = l.reason ? ` — ${l.reason}` : '';
      lines.push(
        `    ${l.state}  upstream ${l.upstream === null ? '(none)' : quoted(l.upstream)}${node}${why}`,
      );
      if (l.next) lines.push(`      Next: ${l.next}`);
    }
  }
  return lines;
}

export function whichText(r: WhichResult): string {
  const o = r.object;
  const what = `${kindWords(o.kind)} ${quoted(o.name)} in vhost ${quoted(o.vhost)}`;
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    return terminalText([
      `Could not ask the broker about ${what}: ${why}${r.detail ? ` (${r.detail})` : ''}.`,
      WHICH_WORDS.nothingClaimed,
    ]);
  }
  const lines: string[] = [];
  if (r.didYouMean) {
    const missing = WHICH_WORDS.missingObject(o.kind, o.kindAssumed);
    lines.push(didYouMeanWords(missing, o.name, r.didYouMean, quoted), '');
  }
  if (o.kindAssumed)
    lines.push(`No queue or exchange by that name exists; answering as for a classic queue.`);
  lines.push(...(r.answer === 'not-reported' ? notReported(r, what) : reported(r, what)));
  lines.push(...liveLines(r));
  if (r.operatorPoliciesNotRead !== undefined)
    lines.push(`  Not read: ${WHICH_WORDS.operatorPoliciesNotRead} (${r.operatorPoliciesNotRead})`);
  for (const u of r.unreadable) lines.push(`  Not read: ${u.name} (pattern ${quoted(u.pattern)}): ${u.why}.`);
  if (o.keyRulesKnown === false) lines.push(`  Note: ${WHICH_WORDS.keyRulesUnknown(kindWords(o.kind))}`);
  for (const d of r.disagreements) lines.push(`  Note: ${d}`);
  if (r.pathLine) lines.push(`  ${r.pathLine}`);
  return terminalText(lines);
}
