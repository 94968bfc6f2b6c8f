import { showInvisible } from '../text/index.ts';

/**
 * Text going to Slack and text coming from it.
 *
 * Outbound, every string that came from a user or the broker is shown as written
 * (`src/text/asWritten.ts`: what does not show, escaped) and escaped: in mrkdwn only `&`, `<`
 * and `>` are control characters (`<!channel>`, `<@U…>`, `<https://evil|click>`), and escaping
 * those three neutralises every mention and link. Names are also shown as inline code, where
 * `*`, `_` and `~` do not format; a backtick, which would end the code span, is replaced.
 */

const ENTITY: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** `&`, `<`, `>` as entities; nothing else is encoded (Slack decodes only these three). */
export function escapeMrkdwn(s: string): string {
  return s.replace(/[&<>]/g, (c) => ENTITY[c] ?? c);
}

/** U+02CB MODIFIER LETTER GRAVE ACCENT: looks like a backtick and does not end a code span. */
const BACKTICK_STANDIN = '\u02cb';

/** A name or value as inline code, safe for mrkdwn. The empty string is said in words. */
export function code(s: string): string {
  if (s === '') return '_(empty)_';
  return `\`${escapeMrkdwn(showInvisible(s).replaceAll('`', BACKTICK_STANDIN))}\``;
}

/**
 * A sentence that carries names (the notes the `which` command writes): escaped, invisible
 * characters shown, backticks replaced so no stray code span swallows the rest of the line.
 */
export function prose(s: string): string {
  return escapeMrkdwn(showInvisible(s).replaceAll('`', BACKTICK_STANDIN));
}

/** A preformatted block (usage text): escaped, and no ``` inside can end it early. */
export function codeBlock(s: string): string {
  return `\`\`\`\n${escapeMrkdwn(s.replaceAll('```', BACKTICK_STANDIN.repeat(3)))}\n\`\`\``;
}

/** Cuts to at most `max` characters (code points kept whole), marking the cut with `…`. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  let out = '';
  for (const ch of s) {
    if (out.length + ch.length > max - 1) break;
    out += ch;
  }
  return `${out}…`;
}

/** A value as inline code, cut to `max` characters. */
export function valueCode(v: unknown, max: number): string {
  return code(truncate(JSON.stringify(v) ?? String(v), max));
}

/**
 * `render(raw)` cut down until it fits `max` characters. Cutting the raw string before
 * rendering keeps entities and code spans whole (`&amp;` never ends as `&am`).
 */
export function fitRendered(raw: string, max: number, render: (s: string) => string): string {
  let out = render(raw);
  let cut = raw;
  while (out.length > max && cut.length > 0) {
    const next = Math.min(cut.length - 1, Math.floor((cut.length * max) / out.length) - 1);
    cut = truncate(cut, Math.max(next, 1));
    if (cut === '…') return render(cut);
    out = render(cut);
  }
  return out;
}

const INBOUND_ENTITY: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>' };

/**
 * What the user typed, from what Slack sent: Slack encodes `&`, `<`, `>` as entities and turns
 * things that look like links (a queue named `orders.com`) into `<http://orders.com|orders.com>`.
 * Mentions (`<@U…>`, `<!channel>`) are kept as Slack sent them.
 */
export function decodeSlackText(s: string): string {
  return s
    .replace(
      /<((?:https?|mailto|tel):[^<>|]*)(?:\|([^<>]*))?>/g,
      (_m, url: string, label: string | undefined) => (label === undefined ? url : label),
    )
    .replace(/<#[A-Z0-9]+\|([^<>]*)>/g, '#$1')
    .replace(/&(?:amp|lt|gt);/g, (e) => INBOUND_ENTITY[e] ?? e);
}
