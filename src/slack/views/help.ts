import { commandsOf, usageOf } from '../../commands/index.ts';
import { code, codeBlock } from '../escape.ts';
import { finish, type SlackMessage, section } from './message.ts';

/** `help`, and the usage shown with an unknown command: only the commands Slack answers. */

/** Characters of one section's code block: Slack cuts a section's text at 3,000. */
const USAGE_PER_SECTION = 2800;

/** Every command's usage and what it does, in as many code blocks as Slack's limit takes. */
function usageBlocks(prefix: string, available: ReadonlySet<string>): string[] {
  const blocks: string[] = [];
  let current = '';
  for (const { name, usage, does } of commandsOf('slack')) {
    if (!available.has(name)) continue;
    const entry = `${prefix} ${usage}\n    ${does}`;
    if (current && current.length + entry.length + 1 > USAGE_PER_SECTION) {
      blocks.push(current);
      current = '';
    }
    current = current ? `${current}\n${entry}` : entry;
  }
  if (current) blocks.push(current);
  return blocks;
}

export function helpView(prefix: string, available: ReadonlySet<string>): SlackMessage {
  const previews = available.has('preview');
  const intro = previews
    ? '*Ask which RabbitMQ policy governs a queue or exchange*, and *preview what deleting, creating or editing a policy would do* to every object it touches. The answers come from what the broker reports, explained; previews change nothing.'
    : "*Ask which RabbitMQ policy governs a queue or exchange.* The answer is the broker's report, explained.";
  const changes = available.has('delete')
    ? ` *Request a change* with ${code(`${prefix} create`)}, ${code('edit')} or ${code('delete')}: an approver other than you gives a reason, then the bot applies it and posts exactly what changed.`
    : '';
  const examples = [code(`${prefix} which orders.audit --vhost /`)];
  const channel = available.has('use')
    ? ` In an incident channel, ${code(`${prefix} use --env E --vhost V`)} once, and every later command there (and in its threads) uses them; each answer says which vhost and environment it answered for.`
    : '';
  if (previews) examples.push(code(`${prefix} preview delete audit-retention --vhost /`));
  return finish(
    [
      section(`${intro}${changes}${channel}`),
      ...usageBlocks(prefix, available).map((b) => section(codeBlock(b))),
      section(
        `Example: ${examples.join(', ')}. Mention the bot in an incident thread (${code('@rmq which orders.audit')}) and it answers in that thread.`,
      ),
      section(
        `*Type as you would anywhere in Slack:* ${code('--pattern ^orders\\.audit$')} keeps its backslash, ${code('--definition {"max-length": 7}')} is one word (curly quotes from a phone are read as straight ones, and the answer says so); quotes still group. A text that could be read two ways is refused with both readings. Every preview and request shows the pattern and definition exactly as they would be written.`,
      ),
    ],
    `Usage: ${prefix} ${usageOf('which')}${previews ? ` · ${prefix} preview delete|create|edit POLICY …` : ''}`,
  );
}

export function unknownCommandView(
  word: string,
  prefix: string,
  available: ReadonlySet<string>,
): SlackMessage {
  const help = helpView(prefix, available);
  const lead = `I don't know the command ${code(word)}. These are the ones I answer:`;
  return finish([section(lead), ...help.blocks.slice(1)], `Unknown command. ${help.text}`);
}
