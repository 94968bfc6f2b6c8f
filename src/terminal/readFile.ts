import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../core/index.ts';
import {
  type DefinitionsFile,
  type DefinitionsSource,
  MAX_FILE_BYTES,
  type ReadDefinitions,
  type ReadOptions,
  readDefinitions,
  readDefinitionsFolder,
} from '../definitions/index.ts';
import { quoted } from '../text/index.ts';

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

/** What `FILE` names: one file's bytes, or a folder's definitions files (see `readFolder`). */
export type DefinitionsInput =
  | { readonly kind: 'file'; readonly bytes: Buffer }
  | { readonly kind: 'folder'; readonly folder: string; readonly sources: readonly DefinitionsSource[] };

const DEFINITIONS_FILE = /\.(json|ya?ml)$/i;

/**
 * `FILE` read: `-` or a file, or a folder's `.json`, `.yaml` and `.yml` files (not its
 * subfolders), by name, as `kubectl apply -f DIR` takes them. A file of the folder that cannot be
 * read refuses the whole, naming it.
 */
export async function readDefinitionsInput(file: string): Promise<DefinitionsInput> {
  const isFolder = file !== '-' && (await stat(file).catch(() => undefined))?.isDirectory() === true;
  if (!isFolder) return { kind: 'file', bytes: await readBounded(file) };
  const names = (await readdir(file)).filter((n) => DEFINITIONS_FILE.test(n)).sort();
  const sources: DefinitionsSource[] = [];
  let total = 0;
  for (const name of names) {
    const path = join(file, name);
    const what = await stat(path).catch((err: NodeJS.ErrnoException) => err);
    if (what instanceof Error) {
      throw new InputError(
        `The file ${quoted(path)} of the folder cannot be read (${what.code ?? what.message}): fix it or move it out; nothing of the folder was read.`,
      );
    }
    if (!what.isFile()) continue;
    // Past the limit the reader refuses the folder; what is over it is not held.
    const bytes = await readBounded(path, Math.max(1, MAX_FILE_BYTES + 1 - total));
    total += bytes.length;
    sources.push({ name: path, bytes });
  }
  return { kind: 'folder', folder: file, sources };
}

/** `FILE` (a file, `-` or a folder) read as definitions: the file, or the sentence refusing it. */
export async function readDefinitionsAt(file: string, options: ReadOptions): Promise<ReadDefinitions> {
  const input = await readDefinitionsInput(file);
  return input.kind === 'file'
    ? readDefinitions(input.bytes, options)
    : readDefinitionsFolder(input.folder, input.sources, options);
}

/**
 * `FILE` read as definitions, or refused: the file refused is not a usage error, so its sentence
 * comes without the usage line (as `plan` says it).
 */
export async function definitionsFileAt(file: string, options: ReadOptions): Promise<DefinitionsFile> {
  const read = await readDefinitionsAt(file, options);
  if (!read.ok) throw new InputError(read.problem);
  return read.file;
}
