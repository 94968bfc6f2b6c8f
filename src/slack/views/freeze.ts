import { formatDuration } from '../../core/index.ts';
import { agree, count } from '../../text/index.ts';
import type { Freeze } from '../../workflow/index.ts';
import { code, prose, truncate } from '../escape.ts';
import { finish, type SlackMessage, section } from './message.ts';
import { frozenLine, when, who } from './request.ts';

/** A freeze and its end, as the channel is told. Pure. */

export function frozenView(env: string, f: Freeze): SlackMessage {
  const forMs = Date.parse(f.until) - Date.parse(f.at);
  return finish(
    [
      section(
        `${frozenLine(env, f)}\nFor ${formatDuration(forMs)}: change requests are filed and approved, but nothing is applied until it ends or an approver lifts it (\`unfreeze\`); then the approved ones are applied in approval order, each checked against the broker first.`,
      ),
    ],
    `${env} is frozen until ${f.until}.`,
  );
}

export function unfrozenView(
  env: string,
  lifted: Freeze | undefined,
  by: string,
  reason: string,
  released: number,
): SlackMessage {
  if (!lifted)
    return finish(
      [section(`:information_source: ${code(env)} is not frozen: nothing to lift.`)],
      `${env} is not frozen.`,
    );
  return finish(
    [
      section(
        `:sunny: *${code(env)} is no longer frozen*: lifted by ${who(by)} because ${prose(truncate(reason, 500))} (${who(lifted.by)} had frozen it until ${when(lifted.until)}). ${released === 0 ? 'No approved request was waiting.' : `${count(released, 'approved request')} waiting ${agree(released, 'is', 'are')} applied now, in approval order.`}`,
      ),
    ],
    `${env} is no longer frozen.`,
  );
}
