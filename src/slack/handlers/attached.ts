import { InputError } from '../../core/index.ts';
import type { CommandContext } from './types.ts';

/**
 * The definitions file of `@rmq plan` / `@rmq import`: the one attached to the message that
 * mentions the bot (or, when several are, the one the word names), downloaded with the bot token
 * within the size limit (`../attachments.ts`). A slash command carries no file: it is told where
 * the file goes. Every refusal is a sentence; nothing is planned or filed.
 */
export async function attachedDefinitions(
  ctx: CommandContext,
  named: string,
  command: 'plan' | 'import',
  usage: string,
): Promise<{ readonly name: string; readonly bytes: Buffer }> {
  const attachments = ctx.attachments;
  const files = attachments?.files ?? [];
  if (!attachments || files.length === 0)
    throw new InputError(
      `In Slack, ${command} reads a definitions file attached to the message that mentions the bot: attach the export or the Policy manifests to a message saying \`@rmq ${command}${command === 'import' ? ' --reason …' : ''}\` (a slash command carries no file).`,
      { usage },
    );
  const chosen = named ? files.filter((f) => f.name === named || f.id === named) : files;
  if (chosen.length === 0)
    throw new InputError(
      `No attached file is named ${JSON.stringify(named)}; attached: ${files.map((f) => JSON.stringify(f.name ?? f.id)).join(', ')}.`,
      { usage },
    );
  if (chosen.length > 1)
    throw new InputError(
      `${chosen.length} files are attached: name the one to read (\`@rmq ${command} NAME\`).`,
      { usage },
    );
  const got = await attachments.read(chosen[0] as (typeof chosen)[number]);
  if (!got.ok) throw new InputError(got.why, { usage });
  return got;
}
