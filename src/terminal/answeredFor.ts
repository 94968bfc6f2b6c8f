import { quoted, terminalText } from '../text/index.ts';

/**
 * The line every terminal answer ends with: the environment it answered for, and the vhost where
 * it has one. With prod and staging side by side, an answer that does not say which one invites
 * the wrong change. Slack's is src/slack/views/answeredFor.ts; `--json` carries `env` instead.
 */
export interface AnsweredAt {
  /** The environment's name; `null`: every environment (`requests` and `history` without `--env`). */
  readonly env: string | null;
  readonly vhost?: string | undefined;
}

export function answeredForLine(at: AnsweredAt): string {
  const env = at.env === null ? 'every environment' : `environment ${at.env}`;
  return terminalText([
    `Answered for ${at.vhost === undefined ? '' : `vhost ${quoted(at.vhost)} in `}${env}.`,
  ]);
}
