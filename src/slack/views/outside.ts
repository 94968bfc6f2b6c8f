import type { AuditRecord } from '../../audit/types.ts';
import { code, codeBlock, prose, truncate } from '../escape.ts';
import { type Block, context, finish, listSection, type SlackMessage, section } from './message.ts';
import { auditDiffLines, objectLoss } from './request.ts';

/**
 * A policy changed outside the bot, as posted to the approvals channel: who (or that nobody can
 * say), the before and after of each field, what each object under it gained and lost, and the
 * audit record it was written to. Pure; every user or broker string is escaped.
 */

const MAX = { name: 200 } as const;
const name = (s: string) => code(truncate(s, MAX.name));

const HOW: Readonly<Record<NonNullable<AuditRecord['detectedBy']>, string>> = {
  events: "the broker's event exchange",
  interval: 'comparing the policy lists on the interval',
  start: 'comparing the policy lists when the bot started (changed while it was down)',
};

function verb(r: AuditRecord): string {
  return r.before === null ? 'created' : r.after === null ? 'deleted' : 'edited';
}

export function outsideView(r: AuditRecord): SlackMessage {
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
