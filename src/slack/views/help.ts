import { commandsOf, usageOf } from '../../commands/index.ts';
import { code, codeBlock } from '../escape.ts';
import { finish, type SlackMessage, section } from './message.ts';

/** `help`, and the usage shown with an unknown command: only the commands Slack answers. */

function usageLines(prefix: string, available: ReadonlySet<string>): string {
  return commandsOf('slack')
    .filter(({ name }) => available.has(name))
    .map(({ usage, does }) => `${prefix} ${usage}\n    ${does}`)
    .join('\n');
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
      section(codeBlock(usageLines(prefix, available))),
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
