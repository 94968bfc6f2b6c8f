import type { ChangeRecord } from '../../audit/index.ts';
import { readingWords, totalsWords } from '../../policy/impact/index.ts';
import { jsonWritten, showInvisible } from '../../text/index.ts';
import type { AttachedFile } from '../delivery.ts';
import { code, codeBlock, prose, truncate } from '../escape.ts';
import { type Block, context, finish, listSection, type SlackMessage, section } from './message.ts';
import { impactBlocks } from './preview.ts';
import { auditDiffLines, objectLoss } from './request.ts';

/**
 * A policy changed outside the bot, as posted to the approvals channel: who (or that nobody can
 * say), the before and after of each field, what each object under it gained and lost, and the
 * audit record it was written to. Pure; every user or broker string is escaped.
 */

const MAX = { name: 200 } as const;
const name = (s: string) => code(truncate(s, MAX.name));

const HOW: Readonly<Record<NonNullable<ChangeRecord['detectedBy']>, string>> = {
  events: "the broker's event exchange",
  interval: 'comparing the policy lists on the interval',
  start: 'comparing the policy lists when the bot started (changed while it was down)',
  reconnect:
    'comparing the policy lists once the event exchange was followed again (changed while it was not)',
};

/**
 * What the change did to the messages: the preview's rules on the state before it (and the
 * numbers as of just before it, when the events dated it), said even when it did nothing.
 */
function messagesBlocks(r: ChangeRecord): Block[] {
  const d = r.impactDetail;
  if (!d) return [];
  if (d.count > 0)
    return impactBlocks(d, {
      loss: 'What it did to the messages — loss',
      noLoss: 'What it did to the messages',
    });
  return [
    context(
      [
        'What it did to the messages: none removed, no queue deleted or refusing publishes.',
        ...readingWords(d),
      ]
        .map(prose)
        .join(' '),
    ),
  ];
}

/** The loss of a burst's changes together, one line; null when none removed or refused anything. */
function burstLoss(records: readonly ChangeRecord[]): string | null {
  const sum = { messagesDeadLettered: 0, messagesLost: 0, queuesDeleted: 0, queuesRefusingPublishes: 0 };
  for (const r of records)
    for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += r.impact?.[k] ?? 0;
  return totalsWords(sum);
}

function verb(r: ChangeRecord): string {
  return r.before === null ? 'created' : r.after === null ? 'deleted' : 'edited';
}

export function outsideView(r: ChangeRecord): SlackMessage {
  const what = `${r.operator ? 'operator policy' : 'policy'} ${name(r.policy)} in vhost ${name(r.vhost)} (${prose(r.env)})`;
  const who = r.actor
    ? `*By* ${code(r.actor)}, seen through ${HOW[r.detectedBy ?? 'events']}.`
    : `*By:* not known — found by ${HOW[r.detectedBy ?? 'interval']}, which does not say who.`;
  const blocks: Block[] = [
    section(`:warning: *Changed outside the bot:* ${verb(r)} ${what}\n${who}`),
    section(`*What changed* (before -> after)\n${codeBlock(truncate(auditDiffLines(r).join('\n'), 2800))}`),
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
      listSection(`*What the objects under it got (${r.objects.length}):*`, r.objects.map(objectLoss), {
        maxItems: 15,
      }),
    );
    if (r.unpredictable > 0) blocks.push(context(`${r.unpredictable} more the bot could not predict.`));
  }
  blocks.push(...messagesBlocks(r));
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

/** How many changes of a burst the message itself shows (the file has them all), and objects each. */
export const BURST_SHOWN = { changes: 5, objects: 3 } as const;

/**
 * A burst of changes made outside the bot (one environment and vhost, oldest first) as ONE post:
 * how many, who (or that nobody can say), the first few with what their objects lost, and a
 * pointer to the attached file holding every change (outsideBurstFile). A burst of one is
 * outsideView.
 */
export function outsideBurstView(records: readonly ChangeRecord[]): SlackMessage {
  const [first] = records;
  if (!first || records.length === 1) return first ? outsideView(first) : finish([], '');
  const where = `vhost ${name(first.vhost)} (${prose(first.env)})`;
  const actors = [...new Set(records.map((r) => r.actor).filter((a): a is string => a !== undefined))];
  const who =
    actors.length > 0
      ? `*By* ${actors.map((a) => code(a)).join(', ')}, seen through ${HOW[first.detectedBy ?? 'events']}.`
      : `*By:* not known — found by ${HOW[first.detectedBy ?? 'interval']}, which does not say who.`;
  const lines = records.slice(0, BURST_SHOWN.changes).map((r) => {
    const head = `${verb(r)} ${r.operator ? 'operator policy' : 'policy'} ${name(r.policy)}`;
    if (r.objects.length === 0) return `${head}: no object's policy or values changed`;
    const shown = r.objects.slice(0, BURST_SHOWN.objects).map((o) => `${name(o.name)} ${objectLoss(o)}`);
    const more = r.objects.length > shown.length ? `; ${r.objects.length - shown.length} more objects` : '';
    return `${head}: ${shown.join('; ')}${more}`;
  });
  const loss = burstLoss(records);
  const blocks: Block[] = [
    section(
      `:warning: *${records.length} policy changes outside the bot* in ${where}\n${who}${loss ? `\n:rotating_light: *What they did to the messages — loss: ${loss}*` : ''}`,
    ),
    listSection(`*The first ${lines.length}* (every change is in the attached file):`, lines, {
      maxItems: BURST_SHOWN.changes,
    }),
    context(
      `Each is its own record in the audit trail (${code(first.id)} …) · ${code(`history --vhost ${truncate(first.vhost, MAX.name)}`)}`,
    ),
  ];
  return finish(
    blocks,
    `${records.length} policy changes outside the bot in vhost ${prose(first.vhost)}${actors.length ? ` by ${actors.map(prose).join(', ')}` : ''}`,
  );
}

/** Every change of a burst, as a plain-text file beside its post. */
export function outsideBurstFile(records: readonly ChangeRecord[]): AttachedFile {
  const first = records[0];
  const parts = records.map((r) =>
    [
      `${r.id}  ${verb(r)} ${r.operator ? 'operator policy' : 'policy'} ${showInvisible(r.policy)}${r.actor ? ` by ${showInvisible(r.actor)}` : ''}${r.appliedAt ? ` at ${r.appliedAt}` : ''}`,
      ...auditDiffLines(r).map((l) => `  ${l}`),
      ...(r.objects.length === 0
        ? ["  no object's policy or values changed"]
        : r.objects.map((o) => `  ${showInvisible(o.name)}: ${plainLoss(o)}`)),
      ...(r.unpredictable > 0 ? [`  ${r.unpredictable} objects the bot could not predict`] : []),
    ].join('\n'),
  );
  const vhost = first ? first.vhost : '';
  return {
    filename: `outside-changes-${vhost.replace(/[^A-Za-z0-9_.-]+/g, '_') || 'default'}.txt`,
    title: `${records.length} policy changes outside the bot in vhost ${showInvisible(vhost)}`,
    content: `${parts.join('\n\n')}\n`,
  };
}

/** What an object lost, gained and changed, as plain text (no mrkdwn). */
function plainLoss(o: ChangeRecord['objects'][number]): string {
  const kv = (m: Record<string, unknown>) =>
    Object.entries(m)
      .map(([k, v]) => `${showInvisible(k)} ${jsonWritten(v)}`)
      .join(', ');
  const parts: string[] = [];
  if (Object.keys(o.lost).length) parts.push(`lost ${kv(o.lost)}`);
  if (Object.keys(o.gained).length) parts.push(`gained ${kv(o.gained)}`);
  if (Object.keys(o.changed).length)
    parts.push(
      `changed ${Object.entries(o.changed)
        .map(([k, c]) => `${showInvisible(k)} ${jsonWritten(c.before)} -> ${jsonWritten(c.after)}`)
        .join(', ')}`,
    );
  return parts.length
    ? parts.join('; ')
    : `policy ${o.before === null ? 'none' : showInvisible(o.before)} -> ${o.after === null ? 'none' : showInvisible(o.after)}, values the same`;
}
