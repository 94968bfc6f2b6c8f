import { open } from 'node:fs/promises';
import { MAX_FILE_BYTES } from '../definitions/read.ts';
import { InputError } from '../errors.ts';
import { quoted } from '../text/asWritten.ts';

/**
 * A definitions file as bytes, from a path or `-` (standard input): at most one byte over the
 * reader's limit is read, so a file too large is refused by the reader without being held whole.
 */
export async function readBounded(file: string, limit = MAX_FILE_BYTES + 1): Promise<Buffer> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      chunks.push(b);
      size += b.length;
      if (size >= limit) break;
    }
    return Buffer.concat(chunks).subarray(0, limit);
  }
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(
      code === 'ENOENT'
        ? `No file ${quoted(file)}: give the path of a definitions file, or - for standard input.`
        : `The file ${quoted(file)} cannot be read (${code ?? String(err)}).`,
    );
  }
  try {
    const buffer = Buffer.alloc(limit);
    let read = 0;
    while (read < limit) {
      const { bytesRead } = await handle.read(buffer, read, limit - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return buffer.subarray(0, read);
  } catch (err) {
    throw new InputError(
      `The file ${quoted(file)} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}): give a definitions file.`,
    );
  } finally {
    await handle.close();
  }
}
