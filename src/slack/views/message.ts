import type { types } from '@slack/bolt';
import { code, truncate, valueCode } from '../escape.ts';
import { SLACK_LIMITS, VIEW_BUDGET } from '../limits.ts';
import type { AttachedFile } from '../slackCalls.ts';

/**
 * What every view returns, and the few block builders views share. Builders keep each block
 * inside Slack's limits; `finish` keeps the whole message inside them, whatever went in.
 */

export type Block = types.KnownBlock;

export interface SlackMessage {
  /** Fallback for notifications and screen readers; escaped like the blocks. */
  readonly text: string;
  readonly blocks: Block[];
}

/** A message that shows the first part of a list, and the whole list as a file to attach beside it. */
export interface MessageWithFile extends SlackMessage {
  /** Every item, when the message does not show them all. */
  readonly file?: AttachedFile;
}

/** How much of a definition `setsWords` shows: how many keys, and how many characters of a key and a value. */
export interface SetsShown {
  readonly keys: number;
  readonly key: number;
  readonly value: number;
}

/** "sets `k` = `v`, … and N more keys": what a policy's definition sets, on one line. */
export function setsWords(definition: Readonly<Record<string, unknown>>, shown: SetsShown): string {
  const entries = Object.entries(definition);
  if (entries.length === 0) return 'sets nothing';
  const pairs = entries
    .slice(0, shown.keys)
    .map(([k, v]) => `${code(truncate(k, shown.key))} = ${valueCode(v, shown.value)}`);
  const more = entries.length > shown.keys ? ` and ${entries.length - shown.keys} more keys` : '';
  return `sets ${pairs.join(', ')}${more}`;
}

/** What a button asks before it acts: a title, the question, the words of its two answers. */
export interface ButtonConfirm {
  readonly title: string;
  readonly text: string;
  readonly confirm: string;
  readonly deny: string;
}

/** A button: its action id, label and value, and its style and confirmation when it has them. */
export function button(
  actionId: string,
  text: string,
  value: string,
  options: { readonly style?: 'primary' | 'danger'; readonly confirm?: ButtonConfirm } = {},
): types.Button {
  const plain = (t: string) => ({ type: 'plain_text' as const, text: t });
  const { style, confirm } = options;
  return {
    type: 'button',
    action_id: actionId,
    text: plain(text),
    ...(style ? { style } : {}),
    value,
    ...(confirm
      ? {
          confirm: {
            title: plain(confirm.title),
            text: plain(confirm.text),
            confirm: plain(confirm.confirm),
            deny: plain(confirm.deny),
          },
        }
      : {}),
  };
}

/** A row of buttons, its block id naming it. */
export function actions(blockId: string, ...elements: types.Button[]): types.ActionsBlock {
  return { type: 'actions', block_id: blockId, elements };
}

/**
 * Cuts rendered mrkdwn to `max` characters without leaving half an entity (`&am`) or an open
 * code span behind: at a line break when one is near, and marked with `…`.
 */
export function clampMrkdwn(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(max - 2, 0));
  const lastBreak = cut.lastIndexOf('\n');
  if (lastBreak > max * 0.6) cut = cut.slice(0, lastBreak);
  const amp = cut.lastIndexOf('&');
  if (amp >= 0 && !cut.slice(amp).includes(';')) cut = cut.slice(0, amp);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  if ((cut.match(/`/g)?.length ?? 0) % 2 === 1) cut += '`';
  return `${cut}…`;
}

export function section(mrkdwn: string): types.SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: clampMrkdwn(mrkdwn, SLACK_LIMITS.sectionText) } };
}

export function context(...mrkdwn: string[]): types.ContextBlock {
  return {
    type: 'context',
    elements: mrkdwn
      .slice(0, SLACK_LIMITS.contextElements)
      .map((t) => ({ type: 'mrkdwn' as const, text: clampMrkdwn(t, SLACK_LIMITS.textObject) })),
  };
}

export function divider(): types.DividerBlock {
  return { type: 'divider' };
}

/**
 * A heading and its items as one section: as many items as fit in `maxChars` (and at most
 * `maxItems`), then "…and N more". Never splits an item.
 */
export function listSection(
  heading: string,
  items: readonly string[],
  options: { maxItems?: number; maxChars?: number } = {},
): types.SectionBlock {
  const maxItems = options.maxItems ?? VIEW_BUDGET.listItems;
  const maxChars = Math.min(options.maxChars ?? SLACK_LIMITS.sectionText, SLACK_LIMITS.sectionText);
  const moreLine = (n: number) => `_…and ${n} more_`;
  // Room for the "and N more" line, however many are left out.
  const reserve = moreLine(items.length).length + 1;
  let text = heading;
  let shown = 0;
  for (const item of items) {
    if (shown >= maxItems) break;
    const next = `${text}\n${item}`;
    const left = items.length - shown - 1;
    if (next.length + (left > 0 ? reserve : 0) > maxChars) break;
    text = next;
    shown++;
  }
  if (shown === 0 && items.length > 0) {
    // Not even one item fits whole: show the first one cut, so the list is never silently empty.
    text = clampMrkdwn(`${heading}\n${items[0]}`, maxChars - reserve);
    shown = 1;
  }
  if (shown < items.length) text += `\n${moreLine(items.length - shown)}`;
  return section(text);
}

function textsOf(block: Block): { get: () => string; set: (s: string) => void }[] {
  const out: { get: () => string; set: (s: string) => void }[] = [];
  const visit = (obj: { text: string } | undefined) => {
    if (obj && typeof obj.text === 'string') {
      out.push({ get: () => obj.text, set: (s) => (obj.text = s) });
    }
  };
  if (block.type === 'section') {
    visit(block.text);
    for (const f of block.fields ?? []) visit(f);
  } else if (block.type === 'context') {
    for (const e of block.elements)
      if ('text' in e && typeof e.text === 'string') visit(e as { text: string });
  } else if (block.type === 'header') {
    visit(block.text);
  }
  return out;
}

export function totalText(blocks: readonly Block[]): number {
  return blocks.reduce((n, b) => n + textsOf(b).reduce((m, t) => m + t.get().length, 0), 0);
}

/**
 * The last word on limits: at most `VIEW_BUDGET.blocks` blocks (a note says what was left out),
 * total block text under the aggregate budget (the longest texts shortened first), and a
 * fallback text of bounded length.
 */
export function finish(blocks: Block[], text: string): SlackMessage {
  let out = blocks;
  if (out.length > VIEW_BUDGET.blocks) {
    const dropped = out.length - (VIEW_BUDGET.blocks - 1);
    out = [
      ...out.slice(0, VIEW_BUDGET.blocks - 1),
      context(`_…${dropped} more parts left out: the answer is too long for one Slack message._`),
    ];
  }
  const floor = 200;
  for (
    let excess = totalText(out) - VIEW_BUDGET.totalText;
    excess > 0;
    excess = totalText(out) - VIEW_BUDGET.totalText
  ) {
    const longest = out
      .flatMap(textsOf)
      .reduce<ReturnType<typeof textsOf>[number] | undefined>(
        (a, t) => (!a || t.get().length > a.get().length ? t : a),
        undefined,
      );
    if (!longest || longest.get().length <= floor) break;
    longest.set(clampMrkdwn(longest.get(), Math.max(floor, longest.get().length - excess)));
  }
  return { text: clampMrkdwn(text, VIEW_BUDGET.fallbackText), blocks: out };
}

/**
 * An instant in Slack's date formatting: each reader sees it in their own time zone; the ISO
 * text is the fallback where Slack cannot format it.
 */
export function slackDate(iso: string): string {
  return `<!date^${Math.floor(Date.parse(iso) / 1000)}^{date_short_pretty} {time}|${iso}>`;
}
