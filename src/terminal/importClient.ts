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
