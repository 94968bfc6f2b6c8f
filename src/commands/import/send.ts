import { InputError } from '../../core/index.ts';
import { type DefinitionsSource, MAX_FILE_BYTES } from '../../definitions/index.ts';
import type { Component } from '../../plan/index.ts';
import { quoted } from '../../text/index.ts';
import type { ImportWords } from './import.ts';

/**
 * `import` from the terminal: the set is filed by the bot, never by the terminal (it holds no
 * Redis and no write credentials). The file's text and the words go to the bot as `ImportBody`;
 * its answer comes back as the filed set, or the refusal and the exit code. How the body travels
 * (`POST /api/import`) is the terminal's (src/terminal/importClient.ts).
 */

/** What `FILE` named: one file's bytes, or a folder's files, each read on its own by the bot. */
export type ImportSource =
  | { readonly kind: 'file'; readonly bytes: Buffer }
  | { readonly kind: 'folder'; readonly sources: readonly DefinitionsSource[] };

/** The bot's answer to the body: its HTTP status and JSON, or why it was not asked. */
export type BotReply =
  | { readonly kind: 'answered'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'not-asked'; readonly why: string };

/** What the bot answers a filed set with (`importJson`). */
export interface ImportAnswer {
  readonly env: string;
  readonly request: { readonly id: string; readonly state: string; readonly vhost: string };
  readonly plan: {
    readonly changes: readonly {
      action: string;
      vhost: string;
      name?: string | undefined;
      policy?: string | undefined;
      component?: Component | undefined;
    }[];
    readonly impact: { messagesLost: number; messagesDeadLettered: number; queuesDeleted: number };
    readonly transitional: readonly unknown[];
  };
}

export type ImportSent =
  | { readonly status: 'filed'; readonly answer: ImportAnswer }
  | {
      readonly status: 'failed';
      /** 2 refused (the token, the words, the file, the plan), 3 the bot or the broker not asked, 1 the bot failed. */
      readonly exitCode: number;
      readonly error: { readonly code: string; readonly message: string };
    };

/** Sends the set to the bot with `post` and reads its answer; over the bot's 10 MB, nothing is sent. */
export async function sendImport(
  input: ImportWords,
  read: ImportSource,
  post: (body: unknown) => Promise<BotReply>,
): Promise<ImportSent> {
  const sources = read.kind === 'file' ? [read.bytes] : read.sources.map((s) => s.bytes);
  if (sources.reduce((n, b) => n + b.length, 0) > MAX_FILE_BYTES)
    throw new InputError(`${quoted(input.file)} is over the 10 MB the bot reads: nothing was filed.`);
  const reply = await post({
    ...input.body,
    source: input.file,
    ...(read.kind === 'file'
      ? { file: read.bytes.toString('utf8') }
      : {
          files: read.sources.map((s) => ({ name: s.name, file: Buffer.from(s.bytes).toString('utf8') })),
        }),
  });
  if (reply.kind === 'not-asked')
    return { status: 'failed', exitCode: 3, error: { code: 'bot-unreachable', message: reply.why } };
  const body = reply.body as { error?: { code: string; message: string } } & ImportAnswer;
  if (reply.status === 201) return { status: 'filed', answer: body };
  const error = body.error ?? { code: 'internal', message: `the bot answered HTTP ${reply.status}` };
  if (reply.status === 401)
    return {
      status: 'failed',
      exitCode: 2,
      error: {
        code: 'unauthorized',
        message: `the bot refused RMQ_BOT_TOKEN: nothing was filed (${error.message})`,
      },
    };
  return { status: 'failed', exitCode: reply.status === 503 ? 3 : reply.status >= 500 ? 1 : 2, error };
}
