// Over 400 lines: the Web API, response URLs and files share one record of calls, held in one closure.
/**
 * A local stand-in for Slack: the Web API (`<url>/api/<method>`) and the response URLs Slack
 * hands out with each slash command (`<url>/response/<id>`). It records every call and answers
 * like Slack, refusing with Slack's own error codes what Slack would refuse: too many blocks,
 * text over the limits, malformed blocks, a missing channel, a bad token, a used-up response
 * URL. A test that lets the bot send something Slack would refuse fails on `rejections()`.
 *
 *   const slack = await startFakeSlack();
 *   ... createApp({ ..., clientOptions: { slackApiUrl: slack.apiUrl } }) ...
 *   const responseUrl = slack.responseUrl();   // put it in a signed slash command
 *   const post = await slack.waitForCall((c) => c.path === new URL(responseUrl).pathname);
 *   expect(slack.rejections()).toEqual([]);
 *   await slack.close();
 *
 * Files arrive as `files.uploadV2` sends them: `files.getUploadURLExternal` (filename, length)
 * hands out an upload URL on this server, the bytes are POSTed there (raw or multipart), and
 * `files.completeUploadExternal` shares them into `channel_id` (and `thread_ts`). `uploads()`
 * holds what was received, content included.
 *
 * A file a user attached to a message (`shareFile`): `files.info` describes it (size, private
 * download URL on this server), and the download answers its bytes only with the bot token in
 * `Authorization: Bearer`; without it, Slack's sign-in page (HTML, status 200), as Slack does.
 * `downloads()` lists every download asked, with the token it carried.
 *
 * Socket Mode (`fakeSlackSocket.ts`): `apps.connections.open`, called with the app-level token
 * (`appToken`, `xapp-…`; any other token is refused with `invalid_auth`), hands out a
 * `ws://` URL on this server; `socket` pushes envelopes to the app and records its acks.
 *
 * Slack's checks (the limits, blocks, messages, modals, how a body is read) live in
 * scripts/try/checks.ts, shared with the trial's stand-in (`npm run try`).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  checkMessage,
  checkView,
  SLACK_CHECK_LIMITS as FAKE_SLACK_LIMITS,
  isObject,
  parseBody,
  tokenOf,
  uploadedBytes,
} from '../../scripts/try/checks.ts';
import { waitFor } from './broker.ts';
import { createFakeSlackSocket, type FakeSlackSocket } from './fakeSlackSocket.ts';

export {
  checkMessage,
  checkView,
  type Refusal,
  SLACK_CHECK_LIMITS as FAKE_SLACK_LIMITS,
  uploadedBytes,
  validateBlocks,
} from '../../scripts/try/checks.ts';

export interface RecordedCall {
  /** `api`: a Web API method; `response`: a POST to a response URL; `upload`: a file upload URL; `download`: a shared file's private URL. */
  readonly kind: 'api' | 'response' | 'upload' | 'download';
  /** The Web API method (`chat.postMessage`), or `response_url`, or `upload`. */
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The arguments, parsed: form fields, with `blocks`, `view`… decoded from their JSON. */
  readonly args: Record<string, unknown>;
  readonly ok: boolean;
  readonly error?: string;
  /** Slack-style pointers to what was wrong (`[ERROR] … [json-pointer:/blocks/0/text]`). */
  readonly messages?: readonly string[];
  /** What the fake answered an accepted Web API call (`ts` of a posted message, `view.id`…). */
  readonly response?: Record<string, unknown>;
  /** A failure the test asked for with `failNext`, not a call Slack would refuse. */
  readonly injected?: boolean;
  readonly at: number;
}

/** A file as the fake received it, from `files.getUploadURLExternal` to its completion. */
export interface FakeUpload {
  readonly id: string;
  /** As declared to files.getUploadURLExternal. */
  readonly filename: string;
  readonly length: number;
  /** The bytes POSTed to the upload URL, as UTF-8; `undefined` until they arrive. */
  content?: string;
  /** Set by files.completeUploadExternal, which shares the file. */
  completed: boolean;
  title?: string;
  channel_id?: string;
  thread_ts?: string;
  initial_comment?: string;
}

/** A file a user attached to a message, as Slack's `files.info` describes it. */
export interface SharedFile {
  readonly id: string;
  readonly name: string;
  readonly size: number;
  readonly url_private: string;
  readonly url_private_download: string;
  readonly mimetype: string;
}

export interface FakeSlack {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** What to give the bot as `slackApiUrl`. */
  readonly apiUrl: string;
  readonly botToken: string;
  /** The app-level token (`xapp-…`) for Socket Mode: the only one `apps.connections.open` takes. */
  readonly appToken: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly teamId: string;
  /** Every call, in arrival order, accepted or not. */
  readonly calls: RecordedCall[];
  /** The Socket Mode side: connections, envelopes pushed to the app, its acks. */
  readonly socket: FakeSlackSocket;
  /** A fresh response URL on this server, good for five posts. */
  responseUrl(): string;
  /** Accepted messages: chat.postMessage, chat.postEphemeral, chat.update and response URL posts. */
  posts(): RecordedCall[];
  /** Posts to one response URL. */
  responsesTo(responseUrl: string): RecordedCall[];
  /** Calls Slack would have refused (failures asked for with `failNext` are not among them). */
  rejections(): RecordedCall[];
  /** Every file upload begun, in order; `completed` once shared into a channel. */
  uploads(): FakeUpload[];
  /** A file a user attached (for an event's `files`); `size` may be declared larger than the bytes. */
  shareFile(file: { name: string; content: string | Buffer; size?: number }): SharedFile;
  /** Every download of a shared file asked, with whether the bot token came with it. */
  downloads(): RecordedCall[];
  /** Waits until a call matching `match` has arrived (default deadline 20 s) and returns it. */
  waitForCall(
    match: (c: RecordedCall) => boolean,
    options?: { deadlineMs?: number; what?: string },
  ): Promise<RecordedCall>;
  /** The next call to `method` fails with this Slack error code (recorded as `injected`). */
  failNext(method: string, error: string): void;
  /** The members `usergroups.users.list` answers for user group `id` (`S…`); unknown groups get `no_such_subteam`. */
  setUsergroup(id: string, members: readonly string[]): void;
  /**
   * HTTP-level faults for the next calls to `target` (a Web API method, or `response_url` for
   * any response URL), one per call, in order: a 429 with `Retry-After` (seconds), a 5xx, or no
   * answer at all (`hang`, until the caller gives up or the fake closes). Recorded as `injected`.
   */
  faultNext(target: string, ...faults: SlackFault[]): void;
  /** Drops the faults not used up. */
  clearFaults(): void;
  close(): Promise<void>;
}

/** An HTTP-level failure of Slack, for `faultNext`. */
export type SlackFault =
  | { readonly status: 429; readonly retryAfter?: number }
  | { readonly status: 500 | 502 | 503 | 504 }
  | { readonly hang: true };

// ---- the server -----------------------------------------------------------------------------------

export async function startFakeSlack(
  options: {
    botToken?: string;
    appToken?: string;
    botUserId?: string;
    botId?: string;
    teamId?: string;
    /** How often the Socket Mode side pings each connection (Slack does, every few seconds). */
    socketPingIntervalMs?: number;
  } = {},
): Promise<FakeSlack> {
  const botToken = options.botToken ?? `xoxb-test-${randomBytes(8).toString('hex')}`;
  const appToken = options.appToken ?? `xapp-1-A0RMQ-1-${randomBytes(16).toString('hex')}`;
  const botUserId = options.botUserId ?? 'U0RMQBOT';
  const botId = options.botId ?? 'B0RMQBOT';
  const teamId = options.teamId ?? 'T0TEST';
  const calls: RecordedCall[] = [];
  const responseUses = new Map<string, number>();
  const uploads = new Map<string, FakeUpload>();
  const failures = new Map<string, string[]>();
  const usergroups = new Map<string, readonly string[]>();
  const faults = new Map<string, SlackFault[]>();
  const shared = new Map<string, { file: SharedFile; bytes: Buffer }>();
  let seq = 0;
  let url = '';
  const socket = createFakeSlackSocket({
    appId: 'A0RMQ',
    ...(options.socketPingIntervalMs ? { pingIntervalMs: options.socketPingIntervalMs } : {}),
  });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const record = (call: Omit<RecordedCall, 'path' | 'headers' | 'at'>) => {
        calls.push({ ...call, path, headers: req.headers, at: Date.now() });
      };
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };

      // ---- injected HTTP faults ----------------------------------------------------------
      const target = path.startsWith('/response/')
        ? 'response_url'
        : path.startsWith('/api/')
          ? path.slice('/api/'.length)
          : '';
      const fault = faults.get(target)?.shift();
      if (fault) {
        const kind = target === 'response_url' ? 'response' : 'api';
        const args = parseBody(
          kind === 'response' ? { 'content-type': 'application/json' } : req.headers,
          raw,
        );
        const error =
          'hang' in fault ? 'hang' : fault.status === 429 ? 'ratelimited' : `http-${fault.status}`;
        record({
          kind,
          method: target,
          args: '__invalid' in args ? {} : args,
          ok: false,
          error,
          injected: true,
        });
        if ('hang' in fault) return;
        if (fault.status === 429) {
          res.writeHead(429, {
            'content-type': 'application/json',
            ...(fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) }),
          });
          return res.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
        }
        res.writeHead(fault.status, { 'content-type': 'text/plain' });
        return res.end('Internal Server Error');
      }

      // ---- response URLs -----------------------------------------------------------------
      if (path.startsWith('/response/')) {
        const parsed = parseBody({ 'content-type': 'application/json' }, raw);
        const args = '__invalid' in parsed ? {} : parsed;
        const refuse = (status: number, error: string, messages: readonly string[] = []) => {
          record({ kind: 'response', method: 'response_url', args, ok: false, error, messages });
          res.writeHead(status, { 'content-type': 'text/plain' });
          res.end(error);
        };
        const uses = responseUses.get(path);
        if (req.method !== 'POST') return refuse(405, 'method_not_allowed');
        if (uses === undefined) return refuse(404, 'expired_url');
        if (uses >= FAKE_SLACK_LIMITS.responseUrlUses) return refuse(404, 'used_url');
        if ('__invalid' in parsed) return refuse(400, 'invalid_payload');
        responseUses.set(path, uses + 1);
        if (
          args.response_type !== undefined &&
          args.response_type !== 'in_channel' &&
          args.response_type !== 'ephemeral'
        ) {
          return refuse(400, 'invalid_response_type');
        }
        const refusal = checkMessage(args);
        if (refusal) return refuse(400, refusal.error, refusal.messages);
        record({ kind: 'response', method: 'response_url', args, ok: true });
        return json(200, { ok: true });
      }

      // ---- file uploads (files.uploadV2 posts the bytes here) -------------------------------
      // Slack answers 200 when it took the bytes and anything else when not (docs.slack.dev,
      // files.getUploadURLExternal). The fake also refuses bytes that do not add up to the
      // length declared, which Slack would not let complete.
      if (path.startsWith('/upload/')) {
        const id = path.slice('/upload/'.length);
        const upload = uploads.get(id);
        const refuse = (status: number, error: string, messages: readonly string[] = []) => {
          record({ kind: 'upload', method: 'upload', args: { id }, ok: false, error, messages });
          res.writeHead(status, { 'content-type': 'text/plain' });
          res.end(error);
        };
        if (req.method !== 'POST') return refuse(405, 'method_not_allowed');
        if (!upload) return refuse(404, 'file_not_found');
        if (upload.completed) return refuse(400, 'already_completed');
        const bytes = uploadedBytes(String(req.headers['content-type'] ?? ''), Buffer.concat(chunks));
        if (!bytes) return refuse(400, 'invalid_form_data');
        if (bytes.length !== upload.length) {
          return refuse(400, 'length_mismatch', [
            `[ERROR] declared ${upload.length} bytes, received ${bytes.length}`,
          ]);
        }
        upload.content = bytes.toString('utf8');
        record({ kind: 'upload', method: 'upload', args: { id, bytes: bytes.length }, ok: true });
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end(`OK - ${bytes.length}`);
      }

      // ---- a shared file's private URL (the bot token as a Bearer header, or the sign-in page) ----
      if (path.startsWith('/files-pri/')) {
        const id = path.split('/')[2] ?? '';
        const file = shared.get(id);
        const authorized = req.headers.authorization === `Bearer ${botToken}`;
        const ok = req.method === 'GET' && file !== undefined && authorized;
        record({
          kind: 'download',
          method: 'download',
          args: { id, authorized },
          ok,
          ...(ok ? {} : { error: file ? 'not_authed' : 'file_not_found' }),
        });
        if (!file) {
          res.writeHead(404, { 'content-type': 'text/plain' });
          return res.end('Not Found');
        }
        if (!ok) {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          return res.end('<!DOCTYPE html><html><body>Sign in to Slack</body></html>');
        }
        res.writeHead(200, {
          'content-type': file.file.mimetype,
          'content-length': String(file.bytes.length),
        });
        return res.end(file.bytes);
      }

      // ---- the Web API ---------------------------------------------------------------------------
      if (!path.startsWith('/api/')) {
        res.writeHead(404);
        return res.end();
      }
      const method = path.slice('/api/'.length);
      const parsed = parseBody(req.headers, raw);
      const args = '__invalid' in parsed ? {} : parsed;
      const reply = (body: Record<string, unknown>) => {
        record({ kind: 'api', method, args, ok: true, response: body });
        json(200, { ok: true, ...body });
      };
      const fail = (error: string, messages: readonly string[] = []) => {
        record({ kind: 'api', method, args, ok: false, error, messages });
        json(200, { ok: false, error, ...(messages.length ? { response_metadata: { messages } } : {}) });
      };
      const token = tokenOf(req.headers, args);
      if (!token) return fail('not_authed');
      // The app-level token opens Socket Mode connections and does nothing else; nothing else opens them.
      if (token !== (method === 'apps.connections.open' ? appToken : botToken)) return fail('invalid_auth');
      if ('__invalid' in parsed) return fail(String(parsed.__invalid));
      const queued = failures.get(method)?.shift();
      if (queued) {
        record({ kind: 'api', method, args, ok: false, error: queued, injected: true });
        return json(200, { ok: false, error: queued });
      }

      const ts = () => `${Math.floor(Date.now() / 1000)}.${String(++seq).padStart(6, '0')}`;
      switch (method) {
        case 'auth.test':
          return reply({
            url: 'https://fake.slack.test/',
            team: 'Test',
            user: 'rmq',
            team_id: teamId,
            user_id: botUserId,
            bot_id: botId,
          });
        case 'apps.connections.open':
          return reply({ url: socket.issueUrl(url) });
        case 'chat.postMessage': {
          if (typeof args.channel !== 'string' || !args.channel) return fail('channel_not_found');
          const refusal = checkMessage(args);
          if (refusal) return fail(refusal.error, refusal.messages);
          const at = ts();
          return reply({
            channel: args.channel,
            ts: at,
            message: { type: 'message', text: args.text, ts: at, bot_id: botId },
          });
        }
        case 'chat.postEphemeral': {
          if (typeof args.channel !== 'string' || !args.channel) return fail('channel_not_found');
          if (typeof args.user !== 'string' || !args.user) return fail('user_not_in_channel');
          const refusal = checkMessage(args);
          if (refusal) return fail(refusal.error, refusal.messages);
          return reply({ message_ts: ts() });
        }
        case 'chat.update': {
          if (typeof args.channel !== 'string' || !args.channel) return fail('channel_not_found');
          if (typeof args.ts !== 'string' || !args.ts) return fail('message_not_found');
          const refusal = checkMessage(args, { maxText: FAKE_SLACK_LIMITS.updateText });
          if (refusal) return fail(refusal.error, refusal.messages);
          return reply({ channel: args.channel, ts: args.ts, text: args.text });
        }
        case 'views.open':
        case 'views.push': {
          if (typeof args.trigger_id !== 'string' || !args.trigger_id) return fail('invalid_trigger_id');
          const refusal = checkView(args.view);
          if (refusal) return fail(refusal.error, refusal.messages);
          return reply({ view: { id: `V${++seq}`, ...(args.view as object) } });
        }
        case 'views.update': {
          const refusal = checkView(args.view);
          if (refusal) return fail(refusal.error, refusal.messages);
          return reply({ view: { id: args.view_id ?? `V${++seq}`, ...(args.view as object) } });
        }
        case 'usergroups.users.list': {
          const members = typeof args.usergroup === 'string' ? usergroups.get(args.usergroup) : undefined;
          if (!members) return fail('no_such_subteam');
          return reply({ users: [...members] });
        }
        case 'files.info': {
          const file = typeof args.file === 'string' ? shared.get(args.file) : undefined;
          if (!file) return fail('file_not_found');
          return reply({ file: file.file });
        }
        case 'files.getUploadURLExternal': {
          // Slack: `invalid_arguments` with "[ERROR] missing required field: …" (seen live).
          const missing: string[] = [];
          if (typeof args.filename !== 'string' || !args.filename)
            missing.push('[ERROR] missing required field: filename');
          const length = Number(args.length);
          if (args.length === undefined || args.length === '')
            missing.push('[ERROR] missing required field: length');
          else if (!Number.isInteger(length) || length <= 0)
            missing.push('[ERROR] length must be a positive integer');
          if (missing.length > 0) return fail('invalid_arguments', missing);
          if (typeof args.alt_txt === 'string' && args.alt_txt.length > FAKE_SLACK_LIMITS.altText)
            return fail('alt_txt_too_large');
          const id = `F${++seq}`;
          uploads.set(id, { id, filename: String(args.filename), length, completed: false });
          return reply({ upload_url: `${url}/upload/${id}`, file_id: id });
        }
        case 'files.completeUploadExternal': {
          const files = args.files;
          if (!Array.isArray(files) || files.length === 0)
            return fail('invalid_arguments', ['[ERROR] missing required field: files']);
          if (args.channel_id !== undefined && (typeof args.channel_id !== 'string' || !args.channel_id))
            return fail('channel_not_found');
          if (args.thread_ts !== undefined && args.channel_id === undefined && args.channels === undefined)
            return fail('invalid_arguments', ['[ERROR] thread_ts needs the channel_id of its thread']);
          if (args.initial_comment !== undefined && typeof args.initial_comment !== 'string')
            return fail('invalid_arguments', ['[ERROR] initial_comment must be a string']);
          const taken: [FakeUpload, Record<string, unknown>][] = [];
          for (const f of files) {
            const upload = isObject(f) && typeof f.id === 'string' ? uploads.get(f.id) : undefined;
            // An unknown id, bytes never sent, or a second completion (Slack allows one): Slack
            // does not document a code for the last two; the fake says file_not_found.
            if (!upload || upload.content === undefined || upload.completed) return fail('file_not_found');
            taken.push([upload, f as Record<string, unknown>]);
          }
          for (const [upload, f] of taken) {
            upload.completed = true;
            upload.title = typeof f.title === 'string' ? f.title : upload.filename;
            if (typeof args.channel_id === 'string') upload.channel_id = args.channel_id;
            if (typeof args.thread_ts === 'string') upload.thread_ts = args.thread_ts;
            if (typeof args.initial_comment === 'string') upload.initial_comment = args.initial_comment;
          }
          return reply({
            files: taken.map(([u]) => ({ id: u.id, name: u.filename, title: u.title })),
          });
        }
        default:
          return fail('unknown_method');
      }
    });
  });
  server.on('upgrade', (req, duplex, head) => socket.handleUpgrade(req, duplex, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const isMessage = (c: RecordedCall) =>
    c.ok &&
    (c.kind === 'response' || ['chat.postMessage', 'chat.postEphemeral', 'chat.update'].includes(c.method));

  return {
    url,
    apiUrl: `${url}/api/`,
    botToken,
    appToken,
    botUserId,
    botId,
    teamId,
    calls,
    socket,
    responseUrl() {
      const path = `/response/${randomBytes(8).toString('hex')}`;
      responseUses.set(path, 0);
      return `${url}${path}`;
    },
    posts: () => calls.filter(isMessage),
    responsesTo: (responseUrl) => {
      const path = new URL(responseUrl).pathname;
      return calls.filter((c) => c.kind === 'response' && c.path === path && c.ok);
    },
    rejections: () => calls.filter((c) => !c.ok && !c.injected),
    uploads: () => [...uploads.values()],
    shareFile({ name, content, size }) {
      const id = `F${String(++seq).padStart(8, '0')}`;
      const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
      const at = `${url}/files-pri/${id}/${encodeURIComponent(name)}`;
      const file: SharedFile = {
        id,
        name,
        size: size ?? bytes.length,
        url_private: at,
        url_private_download: `${at}?download=1`,
        mimetype: name.endsWith('.json') ? 'application/json' : 'text/plain',
      };
      shared.set(id, { file, bytes });
      return file;
    },
    downloads: () => calls.filter((c) => c.kind === 'download'),
    waitForCall: (match, opts = {}) =>
      waitFor(() => calls.find(match), {
        deadlineMs: opts.deadlineMs ?? 20_000,
        intervalMs: 25,
        what: opts.what ?? 'a Slack call',
      }),
    failNext(method, error) {
      failures.set(method, [...(failures.get(method) ?? []), error]);
    },
    setUsergroup(id, members) {
      usergroups.set(id, members);
    },
    faultNext(target, ...list) {
      faults.set(target, [...(faults.get(target) ?? []), ...list]);
    },
    clearFaults: () => faults.clear(),
    close: async () => {
      await socket.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Everything a message shows, as one string: fallback text and every text object of its blocks. */
export function renderedText(args: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof args.text === 'string') parts.push(args.text);
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if ((o.type === 'mrkdwn' || o.type === 'plain_text') && typeof o.text === 'string') parts.push(o.text);
      else Object.values(o).forEach(visit);
    }
  };
  visit(args.blocks);
  return parts.join('\n');
}

/** The first file shared (`files.completeUploadExternal`) among the calls after the first `mark`, as uploaded. */
export async function sharedFileSince(slack: FakeSlack, mark: number): Promise<FakeUpload> {
  const complete = await slack.waitForCall(
    (c) => slack.calls.indexOf(c) >= mark && c.method === 'files.completeUploadExternal' && c.ok,
    { what: 'the file to be shared' },
  );
  const [file] = complete.args.files as { id: string }[];
  const upload = slack.uploads().find((u) => u.id === file?.id);
  if (!upload) throw new Error(`no upload ${file?.id}`);
  return upload;
}
