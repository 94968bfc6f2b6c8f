import {
  didYouMeanWords,
  kindWords,
  NOT_ASKED_WORDS,
  UNANCHORED_MARK,
  WHICH_WORDS,
} from '../../commands/index.ts';
import {
  isKnownPolicy,
  type PolicyView,
  type UnknownPolicyView,
  type WhichResult,
} from '../../commands/which/index.ts';
import { hazardWords, nowWords, statisticsSaid, unknownNowWords } from '../../policy/impact/index.ts';
import { code, prose, truncate, valueCode } from '../escape.ts';
import { linkLine } from './links.ts';
import {
  type Block,
  context,
  finish,
  listSection,
  type SlackMessage,
  section,
  setsWords,
} from './message.ts';

/**
 * The `which` answer as a Slack message, in up to four parts: in force; also matched, and why
 * it does not apply; the operator policy, apart; nothing governs, as a state of its own.
 * When the broker did not report, that comes first and the rest is worded as matches, not as
 * a statement of what applies; when it could not be asked, nothing is claimed.
 */

/**
 * Longest piece of a broker string shown (names of queues and exchanges, ≤ 255 bytes, fit
 * whole); `keys`: of a definition, shown before "and N more keys".
 */
const MAX_SHOWN = { name: 260, pattern: 200, key: 80, value: 120, keys: 8 } as const;

const name = (s: string) => code(truncate(s, MAX_SHOWN.name));
const value = (v: unknown) => valueCode(v, MAX_SHOWN.value);

const sets = (definition: Readonly<Record<string, unknown>>) => setsWords(definition, MAX_SHOWN);

/** The definition on a line of its own; nothing when the policy is only known by name. */
function setsLine(p: PolicyView | UnknownPolicyView): string {
  return isKnownPolicy(p) ? `\n${sets(p.definition)}` : '';
}

function patternPart(p: PolicyView): string {
  const pattern = `pattern ${code(truncate(p.pattern, MAX_SHOWN.pattern))}`;
  return `${pattern}${unanchoredMark(p)}`;
}

/** `name` · priority N · pattern `…` · applies to `…` */
function policyLine(p: PolicyView | UnknownPolicyView): string {
  // Reported by the broker but no longer among the vhost's policies: nothing more is known.
  if (!isKnownPolicy(p)) return name(p.name);
  return `${name(p.name)} · priority ${p.priority} · ${patternPart(p)} · applies to ${code(p.applyTo)}`;
}

function objectWords(r: WhichResult): string {
  const o = r.object;
  if (o.name === '' && o.kind === 'exchange') return `the default exchange in vhost ${name(o.vhost)}`;
  const kind = o.kindAssumed ? '' : `the ${kindWords(o.kind)} `;
  return `${kind}${name(o.name)} in vhost ${name(o.vhost)}`;
}

function alsoMatchedItems(r: WhichResult, list: WhichResult['alsoMatched'] = r.alsoMatched): string[] {
  const kind = kindWords(r.object.kind);
  return list.map((m) => {
    const keys = m.keys?.length ? ` (${m.keys.map((k) => code(truncate(k, MAX_SHOWN.key))).join(', ')})` : '';
    return `• ${name(m.name)} · priority ${m.priority}${unanchoredMark(m)} — ${WHICH_WORDS.notApplied[m.reason](kind)}${keys}`;
  });
}

function unanchoredMark(m: { unanchored: boolean }): string {
  return m.unanchored ? ` _(${UNANCHORED_MARK})_` : '';
}

function tieWords(r: WhichResult): string {
  const names = (r.candidates ?? []).map(name).join(', ');
  return `:warning: *Ambiguous:* ${names} share priority ${isKnownPolicy(r.inForce) ? r.inForce.priority : '?'}; which one the broker picks is not defined.`;
}

function operatorSection(r: WhichResult): Block | undefined {
  const op = r.operatorPolicy;
  if (!op) return undefined;
  if (r.answer === 'not-reported') {
    return section(
      `*Operator policy matching it:* ${policyLine(op)}${setsLine(op)}\n${WHICH_WORDS.operatorOnTop}`,
    );
  }
  const source =
    r.operatorPolicySource === 'engine'
      ? "\n_This bot's reading: the broker does not report operator policies for exchanges._"
      : '';
  return section(
    `*Operator policy:* ${policyLine(op)}${setsLine(op)}\nIt applies as well: for limits both set, the stricter value holds.${source}`,
  );
}

function effectiveSection(r: WhichResult): Block | undefined {
  const entries = Object.entries(r.effective);
  if (entries.length === 0) return undefined;
  const items = entries.map(
    ([k, e]) =>
      `• ${code(truncate(k, MAX_SHOWN.key))} = ${value(e.value)} _(${WHICH_WORDS.from[e.from]}${e.noEffect ? `; ${WHICH_WORDS.noEffect(r.object.kind, r.brokerVersion)}` : ''})_`,
  );
  return listSection('*What the object gets:*', items, { maxItems: MAX_SHOWN.keys + 2 });
}

function argumentsSection(r: WhichResult): Block | undefined {
  const entries = Object.entries(r.object.arguments ?? {});
  if (entries.length === 0) return undefined;
  const items = entries.map(([k, v]) => `• ${code(truncate(k, MAX_SHOWN.key))} = ${value(v)}`);
  return listSection('*Its own arguments* (set when it was declared):', items, {
    maxItems: MAX_SHOWN.keys + 2,
  });
}

/** A queue's statistics now (or that they are unknown), and what threatens the object as it stands. */
function liveBlocks(r: WhichResult): Block[] {
  const blocks: Block[] = [];
  if (r.now !== undefined) {
    blocks.push(
      section(
        r.now === null
          ? `*Now:* unknown — ${unknownNowWords(r.nodeDown)}.`
          : `*Now:* ${nowWords(r.now)} — as ${statisticsSaid(r.now.sampledAt)}.`,
      ),
    );
  }
  if (r.hazards.length > 0) {
    const items = r.hazards.map((h) => `• ${hazardWords(h, name)}`);
    blocks.push(listSection(':warning: *Hazards:*', items));
  }
  for (const n of r.hazardsNotRead ?? []) blocks.push(section(`*Not read:* ${prose(truncate(n, 400))}.`));
  if (r.links)
    blocks.push(
      listSection(`:link: *Federation links* (${r.links.length} should run):`, r.links.map(linkLine)),
    );
  return blocks;
}

function notesBlocks(r: WhichResult): Block[] {
  const blocks: Block[] = [...liveBlocks(r)];
  if (r.operatorPoliciesNotRead !== undefined) {
    blocks.push(
      section(
        `:lock: ${WHICH_WORDS.operatorPoliciesNotRead} (${code(truncate(r.operatorPoliciesNotRead, 300))})`,
      ),
    );
  }
  if (r.unreadable.length > 0) {
    const items = r.unreadable.map(
      (u) =>
        `• ${name(u.name)} · pattern ${code(truncate(u.pattern, MAX_SHOWN.pattern))}: ${prose(truncate(u.why, 300))}`,
    );
    blocks.push(listSection('*Not read by this bot* (left out rather than guessed):', items));
  }
  if (r.object.keyRulesKnown === false)
    blocks.push(section(prose(WHICH_WORDS.keyRulesUnknown(kindWords(r.object.kind)))));
  if (r.disagreements.length > 0) {
    const items = r.disagreements.map((d) => `• ${prose(truncate(d, 600))}`);
    blocks.push(listSection('*Note:*', items, { maxItems: 5 }));
  }
  return blocks;
}

function title(r: WhichResult): Block {
  return section(`*Which policy governs* ${objectWords(r)}`);
}

function footer(r: WhichResult): Block {
  const parts = [`broker ${prose(r.brokerVersion ?? 'unknown')}`];
  if (r.object.kindAssumed) {
    parts.push(
      'no queue or exchange by that name exists, so it is answered as for a classic queue; add `--kind` to ask about another kind',
    );
  }
  return context(parts.join(' · '));
}

/**
 * What follows the user policies, in order, each part only when it has something to say: the
 * operator policy, that nothing governs (`nothingGoverns`, worded for the answer), what the
 * object gets when known, its own arguments, the notes, the footer.
 */
function closing(r: WhichResult, effective?: Block): Block[] {
  const operatorLosers = r.operatorAlsoMatched ?? [];
  const nothing = WHICH_WORDS.nothingGoverns(r);
  const parts = [
    operatorSection(r),
    operatorLosers.length > 0
      ? listSection(`*${WHICH_WORDS.operatorAlsoMatched}:*`, alsoMatchedItems(r, operatorLosers))
      : undefined,
    r.nothingGoverns ? section(`*${nothing.heading}:* ${nothing.why}`) : undefined,
    effective,
    argumentsSection(r),
  ];
  const path = r.pathLine
    ? [section(`:warning: ${prose(r.pathLine).replaceAll(prose('`path`'), '`path`')}`)]
    : [];
  return [...parts.filter((b) => b !== undefined), ...notesBlocks(r), ...path, footer(r)];
}

function notAsked(r: WhichResult): SlackMessage {
  const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
  const detail = r.detail ? ` (${code(truncate(r.detail, 300))})` : '';
  const blocks = [
    section(
      `:x: *Could not ask the broker* about ${objectWords(r)}: ${why}${detail}.\n${WHICH_WORDS.nothingClaimed}`,
    ),
  ];
  return finish(blocks, `Could not ask the broker about ${prose(truncate(r.object.name, 200))}: ${why}.`);
}

function notReported(r: WhichResult): SlackMessage {
  const cause = WHICH_WORDS.notReported[r.why ?? 'missing'] ?? 'it did not say why';
  const blocks: Block[] = [
    title(r),
    section(
      `:grey_question: *The broker did not report which policy is in force on this object* (${cause}), so what follows is every policy whose pattern matches it — not a statement about which one applies.`,
    ),
  ];
  const first = r.inForce;
  if (first) {
    const mark = r.ambiguous ? `\n${tieWords(r)}` : '';
    const matches = [
      `1. ${policyLine(first)} — ${WHICH_WORDS.firstByPriority}${isKnownPolicy(first) ? `\n      ${sets(first.definition)}` : ''}${mark}`,
    ];
    const kind = kindWords(r.object.kind);
    r.alsoMatched.forEach((m, i) => {
      const later = WHICH_WORDS.laterMatch(m.reason, kind);
      const why = later ? ` — ${later}` : '';
      matches.push(`${i + 2}. ${name(m.name)} · priority ${m.priority}${unanchoredMark(m)}${why}`);
    });
    blocks.push(listSection(`*${WHICH_WORDS.matchesByPriority}:*`, matches));
  } else if (r.alsoMatched.length > 0) {
    blocks.push(listSection(`*${WHICH_WORDS.noneCanApply}:*`, alsoMatchedItems(r)));
  } else {
    blocks.push(section(`*${WHICH_WORDS.noUserPolicyMatches}*`));
  }
  blocks.push(...closing(r));
  const lead = first
    ? `first match by priority: ${prose(truncate(first.name, 200))}${r.ambiguous ? ' (ambiguous)' : ''}`
    : 'no policy matches it';
  return finish(
    blocks,
    `The broker did not report the policy in force on ${prose(truncate(r.object.name, 200))}; ${lead}.`,
  );
}

function reported(r: WhichResult): SlackMessage {
  const blocks: Block[] = [title(r)];
  const p = r.inForce;
  if (p) {
    const tie = r.ambiguous ? `\n${tieWords(r)} The broker reports ${name(p.name)}.` : '';
    blocks.push(section(`*In force:* ${policyLine(p)}${setsLine(p)}${tie}`));
  } else if (!r.nothingGoverns) {
    blocks.push(section('*In force:* no user policy.'));
  }
  if (r.alsoMatched.length > 0) {
    blocks.push(listSection(`*${WHICH_WORDS.alsoMatched}:*`, alsoMatchedItems(r)));
  }
  blocks.push(...closing(r, effectiveSection(r)));

  const obj = `${prose(truncate(r.object.name, 200))} (${kindWords(r.object.kind)}, vhost ${prose(truncate(r.object.vhost, 100))})`;
  const opText = r.operatorPolicy
    ? `; operator policy ${prose(truncate(r.operatorPolicy.name, 200))} applies as well`
    : '';
  const text = r.nothingGoverns
    ? `Nothing governs ${obj}.`
    : p
      ? `${obj}: ${prose(truncate(p.name, 200))} is in force${r.ambiguous ? ' (tied at its priority)' : ''}${opText}.`
      : `${obj}: no user policy is in force${opText}.`;
  return finish(blocks, text);
}

export function whichView(r: WhichResult): SlackMessage {
  if (r.answer === 'not-asked') return notAsked(r);
  const message = r.answer === 'not-reported' ? notReported(r) : reported(r);
  return r.didYouMean ? { ...message, blocks: [didYouMean(r), ...message.blocks] } : message;
}

/** Above the answer: the asker more likely meant one of these than an object nobody declared. */
function didYouMean(r: WhichResult): Block {
  const what = WHICH_WORDS.missingObject(r.object.kind, r.object.kindAssumed);
  return section(`:mag: ${didYouMeanWords(what, r.object.name, r.didYouMean ?? [], name)}`);
}
