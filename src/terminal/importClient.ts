/**
 * The terminal's `import`: the file read (a path, or `-` for standard input, at most 10 MB) and
 * sent to the bot (`POST RMQ_BOT_URL/api/import`, `Authorization: Bearer RMQ_BOT_TOKEN`), within
 * a deadline and a limit on the answer. No retry: a POST that timed out may have filed the set,
 * and `requests` says whether it did. The terminal never touches Redis or the broker for this.
 *
 * An answer that is not the bot's (a proxy's page, another service at that address, a path
 * missing from RMQ_BOT_URL) is said as such, with the address it came from and what to check:
 * its body is never read as the bot's refusal.
 */
import * as z from 'zod';
import { PARAMETER_COMPONENTS } from '../policy/index.ts';

/** The bot's answer is a request and its plan: far below this. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
export const IMPORT_DEADLINE_MS = 60_000;

/** What the bot answers: 201 and the filed set, or any other status and its refusal. */
const Filed = z.object({
  env: z.string(),
  request: z.object({ id: z.string(), state: z.string(), vhost: z.string() }),
  plan: z.object({
    // Each change names what it writes (`component`, `name`); a policy's also as `policy`.
    changes: z.array(
      z.object({
        action: z.string(),
        vhost: z.string(),
        name: z.string().optional(),
        policy: z.string().optional(),
        component: z.enum(['policy', 'operator-policy', ...PARAMETER_COMPONENTS]).optional(),
      }),
    ),
  }),
});
const Refused = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/**
 * `RMQ_BOT_URL/api/import`, under the URL's path: a bot served under a path by a proxy
 * (`https://gw.internal/rmq-bot`) is posted to there, not at the host's root.
 */
export function importUrl(botUrl: string): URL {
  return new URL('api/import', botUrl.endsWith('/') ? botUrl : `${botUrl}/`);
}

/** An answer that is not the bot's, in words: where it came from, and what to check. */
function notTheBot(url: URL, status: number, json: boolean): string {
  const check =
    status === 404 || status === 405 || status < 400
      ? "check RMQ_BOT_URL's path: it is the bot's base URL, where GET /livez answers, and import posts to api/import under it"
      : status >= 500
        ? 'something in front of the bot failed; the set may be filed all the same: see requests'
        : 'something in front of the bot refused it: check RMQ_BOT_URL and what stands in front of the bot';
  // Origin and path only: a user or password in RMQ_BOT_URL is not repeated.
  return `the server at RMQ_BOT_URL answered HTTP ${status} to POST ${url.origin}${url.pathname}${json ? ', and not as the bot answers' : ', not JSON'}: ${check}`;
}

export type BotAnswer =
  | { readonly kind: 'answered'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'not-asked'; readonly why: string };

export async function postImport(
  botUrl: string,
  token: string,
  body: unknown,
  deadlineMs = IMPORT_DEADLINE_MS,
): Promise<BotAnswer> {
  const url = importUrl(botUrl);
  let res: Response;
  try {
    res = await fetch(url, {
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
  let answer: unknown;
  try {
    answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return { kind: 'not-asked', why: notTheBot(url, res.status, false) };
  }
  const theBots = (res.status === 201 ? Filed : Refused).safeParse(answer).success;
  if (!theBots) return { kind: 'not-asked', why: notTheBot(url, res.status, true) };
  return { kind: 'answered', status: res.status, body: answer };
}
