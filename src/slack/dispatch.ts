import { splitSlackText } from '../commands/index.ts';
import { InputError } from '../core/index.ts';
import type { Deliverable } from './delivery.ts';
import { COMMANDS } from './handlers/index.ts';
import type { CommandContext, SlackCommand } from './handlers/types.ts';
import { failureCodeOf, failureView, refusalView } from './views/errors.ts';
import { helpView, unknownCommandView } from './views/help.ts';

/**
 * The words after `/rmq` (or after the mention) -> an answer. Never throws: bad input gets a
 * usage answer, an InputError its own sentence, anything else a sentence chosen by its code.
 */

export interface Dispatched extends Deliverable {
  /** For metrics and logs: a name from the command table, `usage` or `unknown`; never user text. */
  readonly command: string;
}

export async function dispatch(
  text: string,
  ctx: Omit<CommandContext, 'available'>,
  commands: ReadonlyMap<string, SlackCommand> = COMMANDS,
): Promise<Dispatched> {
  const available = new Set(commands.keys());
  const full: CommandContext = { ...ctx, available };
  let command = 'usage';
  try {
    const [first, ...rest] = splitSlackText(text);
    if (first === undefined) {
      return { command, message: helpView(ctx.prefix, available), audience: 'asker', outcome: 'usage' };
    }
    const name = first.toLowerCase();
    const handler = commands.get(name);
    if (!handler) {
      return {
        command: 'unknown',
        message: unknownCommandView(first, ctx.prefix, available),
        audience: 'asker',
        outcome: 'usage',
      };
    }
    // A name from the table (the lookup found it), never other user text.
    command = name;
    return { command, ...(await handler.run(rest, full)) };
  } catch (err) {
    if (err instanceof InputError) {
      ctx.logger.info({ command, refused: err.message }, 'input refused');
      return { command, message: refusalView(err, ctx.prefix), audience: 'asker', outcome: 'refused' };
    }
    const code = failureCodeOf(err);
    ctx.logger.error({ err, command, code }, 'command failed');
    return { command, message: failureView(code, ctx.requestId), audience: 'asker', outcome: 'failed' };
  }
}
