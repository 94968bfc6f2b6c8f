import { asWritten, type WrittenFields } from '../../text/index.ts';
import { codeBlock, prose } from '../escape.ts';
import { type Block, section } from './message.ts';

/**
 * The policy exactly as it will be written, as one Slack section: every preview and every
 * change request shows it (one home for this rendering; see src/text/asWritten.ts). A code
 * block keeps backslashes, quotes and `*_~` as they are; it is cut only past Slack's limit for
 * one text, and then says so.
 */
const MAX_BLOCK = 2600;

export function asWrittenSection(
  p: WrittenFields,
  readNotes: readonly string[] = [],
  heading = '*As it will be written:*',
): Block {
  const { lines, notes } = asWritten(p, readNotes);
  let text = lines.join('\n');
  if (text.length > MAX_BLOCK) {
    notes.push(
      `cut here after ${MAX_BLOCK} of its ${text.length} characters; the --json output has all of it`,
    );
    text = `${text.slice(0, MAX_BLOCK)}…`;
  }
  const said = notes.map((n) => `_${prose(n)}._`).join('\n');
  return section(`${heading}\n${codeBlock(text)}${said ? `\n${said}` : ''}`);
}
