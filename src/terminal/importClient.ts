import { readFile, stat } from 'node:fs/promises';
import { MAX_FILE_BYTES } from '../definitions/read.ts';
import { InputError } from '../errors.ts';

/**
 * The terminal's `import`: the file read (a path, or `-` for standard input, at most 10 MB) and
 * sent to the bot (`POST RMQ_BOT_URL/api/import`, `Authorization: Bearer RMQ_BOT_TOKEN`), within
 * a deadline and a limit on the answer. No retry: a POST that timed out may have filed the set,
 * and `requests` says whether it did. The terminal never touches Redis or the broker for this.
 */

/** The bot's answer is a request and its plan: far below this. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
export const IMPORT_DEADLINE_MS = 60_000;

export type BotAnswer =
  | { readonly kind: 'answered'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'not-asked'; readonly why: string };

export async function readImportFile(path: string, stdin: () => Promise<Buffer>): Promise<string> {
  if (path !== '-') {
    const size = await stat(path).then(
      (s) => s.size,
      () => {
        throw new InputError(`Cannot read ${JSON.stringify(path)}: no such file, or not readable.`);
      },
    );
    if (size > MAX_FILE_BYTES)
      throw new InputError(`${path} is ${(size / 1024 / 1024).toFixed(1)} MB, over the 10 MB the bot reads.`);
    return readFile(path, 'utf8');
  }
  const data = await stdin();
  if (data.length > MAX_FILE_BYTES) throw new InputError('Standard input is over the 10 MB the bot reads.');
  return data.toString('utf8');
}

/** Standard input, whole, stopped past the limit. */
export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    chunks.push(chunk);
    if (size > MAX_FILE_BYTES) break;
  }
  return Buffer.concat(chunks);
}

export async function postImport(
  botUrl: string,
  token: string,
  body: unknown,
  deadlineMs = IMPORT_DEADLINE_MS,
): Promise<BotAnswer> {
  let res: Response;
  try {
    res = await fetch(new URL('/api/import', botUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deadlineMs),
    });
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError';
    return {
      kind: 'not-asked',
      why: timedOut
        ? `the bot did not answer within ${deadlineMs / 1000} s (the set may be filed all the same: see requests)`
        : `the bot at ${botUrl} could not be reached (${err instanceof Error ? err.message : String(err)})`,
    };
  }
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      return { kind: 'not-asked', why: 'the bot answered more than 4 MB: not read' };
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return { kind: 'answered', status: res.status, body: JSON.parse(text) };
  } catch {
    return { kind: 'not-asked', why: `the bot answered HTTP ${res.status}, not JSON` };
  }
}
