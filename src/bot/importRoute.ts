import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CustomRoute } from '@slack/bolt';
import { parseThreadLink } from '../commands/change/index.ts';
import { fileImport, ImportBody, type ImportDeps, importJson } from '../commands/import/index.ts';
import { InputError } from '../core/index.ts';
import type { Logger } from '../log/index.ts';
import { jsonText } from '../text/index.ts';
import type { ChangeRequest, Origin } from '../workflow/index.ts';

/**
 * `POST /api/import`: a change set filed through the bot by the terminal's `import` (or a CI
 * job), with a token of RMQ_API_TOKENS (`Authorization: Bearer TOKEN`, compared in constant time,
 * never logged); the request's requester is `api:NAME`. The body (JSON, `ImportBody`) is read
 * up to a limit and parsed with zod; nothing is filed on any refusal.
 *
 *   201 { env, request, plan }   filed
 *   400 { error: { code, message } }   the body, the file, the plan or the workflow refused it
 *   401   no token, or one the bot does not know      413   the body is over the limit
 *   503   the broker could not be asked
 */

export const IMPORT_PATH = '/api/import';
/** The file's limit (10 MB) and room for the flags around it, JSON-escaped. */
export const MAX_IMPORT_BODY = 12 * 1024 * 1024;

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The name of the token given, or undefined: each known token compared in constant time (digests: equal lengths). */
export function tokenName(
  header: string | undefined,
  tokens: ReadonlyMap<string, string>,
): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  const given = digest(m?.[1] ?? '');
  let found: string | undefined;
  // Every token compared, found or not: the time taken does not say which one, or how far it matched.
  for (const [name, token] of tokens) if (timingSafeEqual(given, digest(token))) found = name;
  return m ? found : undefined;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(jsonText(body));
}

const refused = (code: string, message: string) => ({ error: { code, message } });

async function readBody(req: IncomingMessage, limit: number): Promise<string | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return 'too-large';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface ImportRouteDeps {
  readonly tokens: ReadonlyMap<string, string>;
  /** The workflow and the brokers a set is planned on; absent: the bot files no request. */
  readonly importDeps: ImportDeps | undefined;
  /** Posts the filed set to its approvals channel (ChangeRequests.postSet). */
  readonly post: (request: ChangeRequest) => Promise<unknown>;
  /** Where a set's result is posted when no `--thread` is given: the environment's approvals channel. */
  readonly approvalsChannel: (env: string | undefined) => string | undefined;
  readonly logger: Logger;
  readonly maxBodyBytes?: number;
}

export function importRoute(deps: ImportRouteDeps): CustomRoute {
  return {
    path: IMPORT_PATH,
    method: ['POST'],
    handler: (req, res) => {
      void handle(deps, req, res).catch((err: unknown) => {
        deps.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'import failed');
        if (!res.headersSent)
          send(res, 500, refused('internal', 'The bot failed to file the set; nothing was filed.'));
      });
    },
  };
}

async function handle(deps: ImportRouteDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const name = tokenName(req.headers.authorization, deps.tokens);
  if (!name) {
    deps.logger.warn({ path: IMPORT_PATH }, 'import refused: no token, or one RMQ_API_TOKENS does not hold');
    req.resume();
    send(res, 401, refused('unauthorized', 'The token is not one of RMQ_API_TOKENS: nothing was filed.'));
    return;
  }
  const text = await readBody(req, deps.maxBodyBytes ?? MAX_IMPORT_BODY);
  if (text === 'too-large') {
    send(
      res,
      413,
      refused(
        'too-large',
        'The body is over the limit (a definitions file is at most 10 MB): nothing was filed.',
      ),
    );
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    send(res, 400, refused('bad-input', 'The body is not JSON: nothing was filed.'));
    return;
  }
  const body = ImportBody.safeParse(json);
  if (!body.success) {
    const first = body.error.issues[0];
    send(
      res,
      400,
      refused(
        'bad-input',
        `${first?.path.join('.') || 'body'}: ${first?.message ?? 'invalid'}; nothing was filed.`,
      ),
    );
    return;
  }
  const { importDeps } = deps;
  if (!importDeps) {
    send(res, 503, refused('not-set-up', 'This bot files no change requests (no workflow configured).'));
    return;
  }
  let origin: Origin;
  try {
    const channel = deps.approvalsChannel(body.data.env);
    if (body.data.thread) origin = parseThreadLink(body.data.thread, 'import FILE --thread LINK');
    else if (channel) origin = { channel };
    else throw new InputError('No approvals channel is configured for this environment: give --thread LINK.');
  } catch (err) {
    if (err instanceof InputError) {
      send(res, 400, refused('bad-input', err.message));
      return;
    }
    throw err;
  }
  const requester = `api:${name}`;
  const log = deps.logger.child({ requester, source: body.data.source, env: body.data.env });
  let outcome: Awaited<ReturnType<typeof fileImport>>;
  try {
    outcome = await fileImport(importDeps, body.data, requester, origin);
  } catch (err) {
    if (err instanceof InputError) {
      send(res, 400, refused('bad-input', err.message));
      return;
    }
    throw err;
  }
  if (outcome.status === 'filed') {
    log.info(
      { requestId: outcome.request.id, steps: outcome.plan.changes.length },
      'set filed through the API',
    );
    // Filed: a post that fails is logged and never unfiles it.
    await deps.post(outcome.request).catch((err: unknown) => log.error({ err }, 'the set was not posted'));
    send(res, 201, importJson(outcome.request.env, outcome.request, outcome.plan));
    return;
  }
  if (outcome.status === 'not-asked') {
    send(res, 503, refused(outcome.why, outcome.detail ?? `The broker could not be asked (${outcome.why}).`));
    return;
  }
  log.info({ problems: outcome.problems.length }, 'set refused; nothing filed');
  send(res, 400, {
    ...refused(outcome.code ?? 'refused', outcome.problems.join(' ')),
    problems: outcome.problems,
  });
}
