import type { AllMiddlewareArgs } from '@slack/bolt';
import type { Logger } from '../../log.ts';
import type { AttachedFile } from '../commands/types.ts';
import { slackErrorCode } from './context.ts';

/**
 * An answer's file (the full list of a long preview), uploaded where its message went: the
 * channel, and the thread when there is one. files.uploadV2 asks Slack for an upload URL, posts
 * the bytes there and completes the upload into the channel (scope `files:write`). Unlike the
 * response URL, this needs the bot to be in the channel, so it can fail where the message did
 * not: the caller tells the asker, with Slack's error code.
 */
export async function attachFile(
  client: AllMiddlewareArgs['client'],
  file: AttachedFile,
  where: { readonly channel: string; readonly threadTs?: string | undefined },
  logger: Logger,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const bytes = Buffer.byteLength(file.content);
  try {
    // No `filetype`: files.uploadV2 ignores it (and warns); Slack reads the type off the filename.
    const { filename, title, content } = file;
    await client.files.uploadV2(
      where.threadTs
        ? { channel_id: where.channel, thread_ts: where.threadTs, content, filename, title }
        : { channel_id: where.channel, content, filename, title },
    );
    logger.info({ filename: file.filename, bytes }, 'file attached');
    return { ok: true };
  } catch (err) {
    const error = slackErrorCode(err);
    logger.warn({ error, filename: file.filename, bytes }, 'Slack did not take the file');
    return { ok: false, error };
  }
}
