import { InputError } from '../../core/index.ts';
import type { PreviewInput } from '../../preview/index.ts';
import type { Origin } from '../../workflow/index.ts';
import { parseTimeBox } from '../../workflow/index.ts';
import type { FlagDefaults } from '../parse.ts';
import { parsePreview } from '../preview/preview.ts';
import { usageOf } from '../registry.ts';

/**
 * `create|edit|delete POLICY …`, the change requests: the preview's words plus `--reason TEXT`,
 * `--for DURATION` (create and edit: reverted at the deadline), `--break-glass` (applied at once
 * without approval where the environment allows it, the reason its break-glass reason) and
 * `--thread LINK` (the incident thread the result is posted to). Asked in Slack only: filing,
 * the forms a request without fields or reason opens, and who may ask are the Slack adapter's
 * (src/slack/requests/command.ts) and the workflow's.
 */

export type ChangeAction = 'create' | 'edit' | 'delete';

export interface ChangeWords {
  /** The change as the preview reads it; with no field flag, `fields` is empty (a form asks them). */
  readonly input: PreviewInput;
  /** `--reason`, trimmed; undefined when not given. */
  readonly reason: string | undefined;
  /** `--thread LINK`: where the result is posted; undefined: where it was asked. */
  readonly thread: Origin | undefined;
  /** `--for`: reverted this long after it is applied. */
  readonly timeBoxMs: number | undefined;
  readonly breakGlass: boolean;
}

export function parseChange(
  action: ChangeAction,
  words: readonly string[],
  defaults: FlagDefaults = {},
): ChangeWords {
  const usage = usageOf(action);
  const input = parsePreview(
    [action, ...words],
    { reason: 'string', thread: 'string', for: 'string', 'break-glass': 'boolean' },
    { fieldsOptional: true, defaults, usage },
  );
  const extra = input.extra ?? {};
  return {
    input,
    reason: typeof extra.reason === 'string' ? extra.reason.trim() : undefined,
    thread: typeof extra.thread === 'string' ? parseThreadLink(extra.thread, usage) : undefined,
    timeBoxMs: typeof extra.for === 'string' ? parseTimeBox(extra.for, action) : undefined,
    breakGlass: extra['break-glass'] === true,
  };
}

/**
 * A Slack message link -> the thread it is in: `https://W.slack.com/archives/C…/p1700000000000901`
 * (a reply's link carries its thread in `?thread_ts=`). A change request's and an import's
 * `--thread`, whichever door it came through.
 */
export function parseThreadLink(link: string, usage: string): Origin {
  let url: URL;
  try {
    url = new URL(link.trim());
  } catch {
    throw new InputError(`--thread must be a Slack message link, got ${JSON.stringify(link)}.`, { usage });
  }
  const m = /^\/archives\/([A-Z0-9]+)\/p(\d{10})(\d{6})\/?$/.exec(url.pathname);
  if (!/^https:$/.test(url.protocol) || !m) {
    throw new InputError(
      `--thread must be a Slack message link (Copy link on the thread's first message), got ${JSON.stringify(link)}.`,
      { usage },
    );
  }
  const threadTs = url.searchParams.get('thread_ts');
  return {
    channel: m[1] as string,
    threadTs: threadTs && /^\d{10}\.\d{6}$/.test(threadTs) ? threadTs : `${m[2]}.${m[3]}`,
  };
}
