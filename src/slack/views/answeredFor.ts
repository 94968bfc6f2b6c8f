import { code, prose, truncate } from '../escape.ts';
import { type Block, context, type SlackMessage } from './message.ts';

/**
 * The context line every answer about a vhost ends with: which vhost and environment it answered
 * for, and whether those came from the channel's defaults (`/rmq use`) — in an incident channel
 * the question rarely names them, so the answer must.
 */

export interface AnsweredFor {
  readonly env: string;
  readonly vhost: string;
  /** Which of the two came from the channel's defaults rather than a flag. */
  readonly fromChannel: { readonly env: boolean; readonly vhost: boolean };
  /** The channel's defaults could not be read (Redis down): the built-in ones were used. */
  readonly defaultsUnavailable?: boolean;
  /** How the user calls the bot, for the `use` hint. */
  readonly prefix: string;
}

export function answeredForBlock(a: AnsweredFor): Block {
  const parts = [`vhost ${code(truncate(a.vhost, 200))}`, `environment ${code(truncate(a.env, 100))}`];
  const from = [a.fromChannel.vhost ? 'vhost' : '', a.fromChannel.env ? 'environment' : ''].filter(Boolean);
  let how = '';
  if (from.length) how = ` · ${from.join(' and ')} from this channel's defaults (${code(`${a.prefix} use`)})`;
  else if (a.defaultsUnavailable)
    how = ` · ${prose("this channel's defaults could not be read, so none were used")}`;
  return context(`Answered for ${parts.join(' in ')}${how}`);
}

/** The message with the line added last (views leave room for one more block). */
export function withAnsweredFor<M extends SlackMessage>(message: M, a: AnsweredFor): M {
  return { ...message, blocks: [...message.blocks, answeredForBlock(a)] };
}
