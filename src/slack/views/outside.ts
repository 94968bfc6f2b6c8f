import { diffDefinition } from '../../policy/diff.ts';
import type { AuditObject, AuditRecord } from '../../workflow/types.ts';
import { code, prose, truncate } from '../escape.ts';
import { type Block, context, finish, listSection, type SlackMessage, section } from './message.ts';

/**
 * A policy changed outside the bot, as posted to the approvals channel: who (or that nobody can
 * say), the before and after of each field, what each object under it gained and lost, and the
 * audit record it was written to. Pure; every user or broker string is escaped.
 */

const MAX = { name: 200, pattern: 200, key: 60, value: 100 } as const;
const name = (s: string) => code(truncate(s, MAX.name));
const key = (s: string) => code(truncate(s, MAX.key));
const value = (v: unknown) =>
  v === null ? '_none_' : code(truncate(JSON.stringify(v) ?? String(v), MAX.value));

const HOW: Readonly<Record<NonNullable<AuditRecord['detectedBy']>, string>> = {
  events: "the broker's event exchange",
  interval: 'comparing the policy lists on the interval',
  start: 'comparing the policy lists when the bot started (changed while it was down)',
};

function verb(r: AuditRecord): string {
  return r.before === null ? 'created' : r.after === null ? 'deleted' : 'edited';
}

/** One line per field and definition key that differs: `pattern ^a → ^b`. */
export function fieldLines(r: Pick<AuditRecord, 'before' | 'after'>): string[] {
  const lines: string[] = [];
  for (const [label, k] of [
    ['pattern', 'pattern'],
    ['apply-to', 'applyTo'],
    ['priority', 'priority'],
  ] as const) {
    const b = r.before ? r.before[k] : null;
    const a = r.after ? r.after[k] : null;
    if (b !== a) lines.push(`• ${label}: ${value(b)} → ${value(a)}`);
  }
  for (const [k, d] of Object.entries(diffDefinition(r.before?.definition, r.after?.definition))) {
    lines.push(`• ${key(k)}: ${value(d.before)} → ${value(d.after)}`);
  }
  return lines;
}

function objectLine(o: AuditObject): string {
  const after = o.candidates
    ? `undefined between ${o.candidates.map(name).join(' and ')}`
    : o.after === null
      ? 'nothing'
      : name(o.after);
  const parts: string[] = [];
  const lost = Object.keys(o.lost);
  const gained = Object.keys(o.gained);
  if (lost.length) parts.push(`lost ${lost.map(key).join(', ')}`);
  if (gained.length) parts.push(`gained ${gained.map(key).join(', ')}`);
  for (const [k, c] of Object.entries(o.changed))
    parts.push(`${key(k)} ${value(c.before)} → ${value(c.after)}`);
  return `• ${name(o.name)} _(${prose(o.kind)})_ → ${after}${parts.length ? ` — ${parts.join('; ')}` : ''}`;
}

export function outsideView(r: AuditRecord): SlackMessage {
  const what = `${r.operator ? 'operator policy' : 'policy'} ${name(r.policy)} in vhost ${name(r.vhost)} (${prose(r.env)})`;
  const who = r.actor
    ? `*By* ${code(r.actor)}, seen through ${HOW[r.detectedBy ?? 'events']}.`
    : `*By:* not known — found by ${HOW[r.detectedBy ?? 'interval']}, which does not say who.`;
  const blocks: Block[] = [
    section(`:warning: *Changed outside the bot:* ${verb(r)} ${what}\n${who}`),
    listSection('*What changed:*', fieldLines(r), { maxItems: 20 }),
  ];
  if (r.objects.length === 0) {
    blocks.push(
      section(
        r.unpredictable > 0
          ? `No object's values changed that the bot could tell; ${r.unpredictable} it could not predict.`
          : "No object's policy or values changed.",
      ),
    );
  } else {
    blocks.push(
      listSection(`*What the objects under it got (${r.objects.length}):*`, r.objects.map(objectLine), {
        maxItems: 15,
      }),
    );
    if (r.unpredictable > 0) blocks.push(context(`${r.unpredictable} more the bot could not predict.`));
  }
  blocks.push(
    context(
      `Recorded in the audit trail as ${code(r.id)}${r.appliedAt ? ` · made at ${r.appliedAt}` : ''} · ${code(`history ${truncate(r.policy, MAX.name)} --vhost ${truncate(r.vhost, MAX.name)}`)}`,
    ),
  );
  return finish(
    blocks,
    `Changed outside the bot: ${verb(r)} ${r.operator ? 'operator policy' : 'policy'} ${prose(r.policy)} in vhost ${prose(r.vhost)}${r.actor ? ` by ${prose(r.actor)}` : ''}`,
  );
}
