// Over 400 lines: Slack's Web API and the page's routes serve one in-memory workspace, held in one closure.
/**
 * The trial's stand-in for a Slack workspace (`npm run try`): one HTTP server on 127.0.0.1 that is
 *
 *  - Slack's Web API for the bot (`<url>/api/<method>`, bot token checked) and the response URLs
 *    Slack hands out (`<url>/response/<id>`), refusing with Slack's own codes what Slack would
 *    refuse (checks.ts, shared with the tests' fake Slack);
 *  - a small web page (`<url>/`) that shows two channels as Slack would and sends what a person
 *    does there to the bot as Slack sends it: a signed slash command, a signed button click
 *    (`block_actions`), a signed form submission (`view_submission`).
 *
 * It keeps the workspace in memory: the messages of each channel (ephemeral ones only for their
 * user), each user's open modals, the response URLs. Nothing it stores is rendered here: the page
 * builds its DOM from text nodes (page.js), so a name the bot echoes is shown, never run.
 *
 * The page's own requests (`/try/*`) are JSON POSTs from this origin only (the Host and Origin
 * headers are checked), so another site open in the same browser cannot act as a user here.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  checkMessage,
  checkView,
  isObject,
  parseBody,
  SLACK_CHECK_LIMITS,
  tokenOf,
  uploadedBytes,
} from './checks.ts';

export interface TrialUser {
  readonly id: string;
  readonly name: string;
  /** What they stand for in the trial, shown beside the name. */
  readonly role: string;
}

export interface TrialChannel {
  readonly id: string;
  readonly name: string;
}

/** The people of the trial: one who files requests, two approvers. */
export const TRIAL_USERS: readonly TrialUser[] = [
  { id: 'U0ALICE', name: 'alice', role: 'on call: files change requests' },
  { id: 'U0BOB', name: 'bob', role: 'approver' },
  { id: 'U0CAROL', name: 'carol', role: 'approver' },
];

export const TRIAL_CHANNELS = {
  team: { id: 'C0TEAM', name: 'orders-team' },
  approvals: { id: 'C0APPROVALS', name: 'rmq-approvals' },
} as const satisfies Record<string, TrialChannel>;

export const TRIAL_BOT = {
  userId: 'U0RMQBOT',
  botId: 'B0RMQBOT',
  teamId: 'T0TRIAL',
  appId: 'A0RMQ',
} as const;

/** A message as the page shows it. */
export interface TrialMessage {
  readonly ts: string;
  readonly channel: string;
  readonly threadTs?: string;
  /** A person's id, or the bot's user id for what the bot posted. */
  readonly user: string;
  readonly text: string;
  readonly blocks?: unknown;
  /** Only this user sees it ("Only visible to you"). */
  readonly ephemeralTo?: string;
  readonly edited?: boolean;
  /** A file the bot shared, with its content. */
  readonly file?: { readonly title: string; readonly content: string };
}

/** Something the stand-in refused or failed to deliver: shown on the page, so nothing fails unseen. */
export interface TrialNotice {
  readonly at: number;
  readonly text: string;
}

interface OpenView {
  readonly id: string;
  hash: string;
  readonly user: string;
  view: Record<string, unknown>;
}

export interface Workspace {
  /** `http://127.0.0.1:<port>`: the page, and the Web API under `/api/`. */
  readonly url: string;
  readonly apiUrl: string;
  readonly botToken: string;
  readonly signingSecret: string;
  /** Where the bot's `POST /slack/events` is; set once it listens. */
  setBotUrl(url: string): void;
  /** Sends a slash command as `user` in `channel`, as the page's composer does. */
  command(user: string, channel: string, text: string): Promise<void>;
  messages(): readonly TrialMessage[];
  notices(): readonly TrialNotice[];
  close(): Promise<void>;
}

/** The most a request to this server may carry (Slack's own are far smaller). */
const MAX_BODY = 8 << 20;
/** The bot has 3 s to acknowledge Slack; the stand-in gives it this long before saying it did not. */
const BOT_DEADLINE_MS = 10_000;
/** A trigger id opens a modal for this long after the click (Slack: 3 s; a trial is slower). */
const TRIGGER_TTL_MS = 60_000;
const MAX_MESSAGES = 2_000;

const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'page.html', type: 'text/html; charset=utf-8' },
  '/page.js': { file: 'page.js', type: 'text/javascript; charset=utf-8' },
  '/page.css': { file: 'page.css', type: 'text/css; charset=utf-8' },
};

/** The page allows its own script and style only: even a string that slipped into markup could not run. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'";

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(undefined);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(undefined));
  });
}

function signature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export async function startWorkspace(options: { port?: number; pageDir?: string } = {}): Promise<Workspace> {
  const pageDir = options.pageDir ?? import.meta.dirname;
  const botToken = `xoxb-trial-${randomBytes(12).toString('hex')}`;
  const signingSecret = randomBytes(24).toString('hex');
  const channels = new Map<string, TrialChannel>(Object.values(TRIAL_CHANNELS).map((c) => [c.id, c]));
  const users = new Map(TRIAL_USERS.map((u) => [u.id, u]));
  const messages: TrialMessage[] = [];
  const notices: TrialNotice[] = [];
  const views = new Map<string, OpenView[]>(); // user -> stack of open modals
  const triggers = new Map<string, { user: string; at: number }>();
  const responseUrls = new Map<
    string,
    { user: string; channel: string; uses: number; source?: { ts: string; ephemeral: boolean } }
  >();
  const uploads = new Map<string, { filename: string; length: number; content?: string }>();
  let version = 0;
  let seq = 0;
  let url = '';
  let botUrl = '';

  const changed = () => {
    version++;
  };
  const notice = (text: string) => {
    notices.push({ at: Date.now(), text });
    if (notices.length > 200) notices.shift();
    changed();
  };
  const newTs = () => `${Math.floor(Date.now() / 1000)}.${String(++seq).padStart(6, '0')}`;
  const post = (m: TrialMessage) => {
    messages.push(m);
    if (messages.length > MAX_MESSAGES) messages.shift();
    changed();
    return m;
  };
  const find = (channel: string, ts: string) =>
    messages.findIndex((m) => m.channel === channel && m.ts === ts);
  const newTrigger = (user: string) => {
    const id = `${Date.now()}.${randomBytes(6).toString('hex')}`;
    triggers.set(id, { user, at: Date.now() });
    return id;
  };
  const newResponseUrl = (user: string, channel: string, source?: { ts: string; ephemeral: boolean }) => {
    const id = randomBytes(10).toString('hex');
    responseUrls.set(id, { user, channel, uses: 0, ...(source ? { source } : {}) });
    return `${url}/response/${id}`;
  };
  const userRef = (id: string) => {
    const u = users.get(id);
    return { id, username: u?.name ?? id, name: u?.name ?? id, team_id: TRIAL_BOT.teamId };
  };
  const stackOf = (user: string) => {
    const s = views.get(user) ?? [];
    views.set(user, s);
    return s;
  };
  const findView = (id: string) => {
    for (const stack of views.values()) {
      const v = stack.find((x) => x.id === id);
      if (v) return { stack, view: v };
    }
    return undefined;
  };

  /** A signed request to the bot, as Slack signs it; its answer (status and body) or why none came. */
  async function toBot(
    body: string,
    contentType: string,
  ): Promise<{ status: number; body: string } | { error: string }> {
    if (!botUrl) return { error: 'the bot is not listening yet' };
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const res = await fetch(`${botUrl}/slack/events`, {
        method: 'POST',
        headers: {
          'content-type': contentType,
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': signature(signingSecret, timestamp, body),
        },
        body,
        signal: AbortSignal.timeout(BOT_DEADLINE_MS),
      });
      const text = await res.text();
      return { status: res.status, body: text.slice(0, MAX_BODY) };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  const interact = (payload: Record<string, unknown>) =>
    toBot(
      new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
      'application/x-www-form-urlencoded',
    );

  /** Slack says so in the channel when the app did not answer; the trial says why. */
  function unanswered(
    user: string,
    channel: string,
    what: string,
    r: { status: number } | { error: string },
  ) {
    const why = 'error' in r ? r.error : `HTTP ${r.status}`;
    post({
      ts: newTs(),
      channel,
      user: TRIAL_BOT.userId,
      ephemeralTo: user,
      text: `${what} failed: ${why}.`,
    });
  }

  async function command(user: string, channel: string, text: string): Promise<void> {
    const m = /^\/(\S+)\s*([\s\S]*)$/.exec(text.trim());
    if (!m) return;
    const [, name, rest] = m as unknown as [string, string, string];
    post({ ts: newTs(), channel, user, ephemeralTo: user, text: `/${name} ${rest}`.trim() });
    if (name !== 'rmq') {
      post({
        ts: newTs(),
        channel,
        user: TRIAL_BOT.userId,
        ephemeralTo: user,
        text: `/${name} is not a valid command here: the trial's app has /rmq.`,
      });
      return;
    }
    const body = new URLSearchParams({
      token: 'trial',
      team_id: TRIAL_BOT.teamId,
      team_domain: 'trial',
      channel_id: channel,
      channel_name: channels.get(channel)?.name ?? channel,
      user_id: user,
      user_name: users.get(user)?.name ?? user,
      command: '/rmq',
      text: rest,
      api_app_id: TRIAL_BOT.appId,
      is_enterprise_install: 'false',
      response_url: newResponseUrl(user, channel),
      trigger_id: newTrigger(user),
    }).toString();
    const r = await toBot(body, 'application/x-www-form-urlencoded');
    if ('error' in r || r.status !== 200) return unanswered(user, channel, `/rmq ${rest}`, r);
    // An acknowledgement may carry a message of its own (ephemeral unless said otherwise).
    const ack = r.body ? safeJson(r.body) : undefined;
    if (isObject(ack) && (typeof ack.text === 'string' || Array.isArray(ack.blocks))) {
      deliverResponse({ user, channel }, ack);
    }
  }

  function deliverResponse(
    target: { user: string; channel: string; source?: { ts: string; ephemeral: boolean } },
    args: Record<string, unknown>,
  ): void {
    const source = target.source;
    const i = source ? find(target.channel, source.ts) : -1;
    if (args.delete_original === true || args.delete_original === 'true') {
      if (i !== -1) messages.splice(i, 1);
      changed();
      return;
    }
    const text = typeof args.text === 'string' ? args.text : '';
    const blocks = args.blocks;
    if ((args.replace_original === true || args.replace_original === 'true') && i !== -1) {
      const old = messages[i] as TrialMessage;
      messages[i] = {
        ...old,
        text,
        ...(blocks === undefined ? { blocks: undefined } : { blocks }),
        edited: true,
      };
      changed();
      return;
    }
    const inChannel = args.response_type === 'in_channel';
    post({
      ts: newTs(),
      channel: target.channel,
      user: TRIAL_BOT.userId,
      text,
      ...(blocks === undefined ? {} : { blocks }),
      ...(inChannel ? {} : { ephemeralTo: target.user }),
      ...(typeof args.thread_ts === 'string' ? { threadTs: args.thread_ts } : {}),
    });
  }

  // ---- the Web API, for the bot ------------------------------------------------------------------

  function api(method: string, args: Record<string, unknown>): Record<string, unknown> {
    const fail = (error: string, messages: readonly string[] = []) => {
      notice(
        `Slack would refuse the bot's ${method}: ${error}${messages.length ? ` ${messages.join(' ')}` : ''}`,
      );
      return { ok: false, error, ...(messages.length ? { response_metadata: { messages } } : {}) };
    };
    const ok = (body: Record<string, unknown>) => ({ ok: true, ...body });
    const channelOf = () => (typeof args.channel === 'string' ? channels.get(args.channel) : undefined);
    switch (method) {
      case 'auth.test':
        return ok({
          url: `${url}/`,
          team: 'Trial',
          user: 'rmq',
          team_id: TRIAL_BOT.teamId,
          user_id: TRIAL_BOT.userId,
          bot_id: TRIAL_BOT.botId,
        });
      case 'chat.postMessage':
      case 'chat.postEphemeral': {
        const channel = channelOf();
        if (!channel) return fail('channel_not_found');
        if (method === 'chat.postEphemeral' && (typeof args.user !== 'string' || !users.has(args.user)))
          return fail('user_not_in_channel');
        const refusal = checkMessage(args);
        if (refusal) return fail(refusal.error, refusal.messages);
        const ts = newTs();
        post({
          ts,
          channel: channel.id,
          user: TRIAL_BOT.userId,
          text: typeof args.text === 'string' ? args.text : '',
          ...(args.blocks === undefined ? {} : { blocks: args.blocks }),
          ...(typeof args.thread_ts === 'string' && args.thread_ts ? { threadTs: args.thread_ts } : {}),
          ...(method === 'chat.postEphemeral' ? { ephemeralTo: String(args.user) } : {}),
        });
        return method === 'chat.postMessage'
          ? ok({
              channel: channel.id,
              ts,
              message: { type: 'message', text: args.text, ts, bot_id: TRIAL_BOT.botId },
            })
          : ok({ message_ts: ts });
      }
      case 'chat.update': {
        const channel = channelOf();
        if (!channel) return fail('channel_not_found');
        const i = typeof args.ts === 'string' ? find(channel.id, args.ts) : -1;
        if (i === -1) return fail('message_not_found');
        const refusal = checkMessage(args, { maxText: SLACK_CHECK_LIMITS.updateText });
        if (refusal) return fail(refusal.error, refusal.messages);
        const old = messages[i] as TrialMessage;
        messages[i] = {
          ...old,
          text: typeof args.text === 'string' ? args.text : old.text,
          ...(args.blocks === undefined ? {} : { blocks: args.blocks }),
          edited: true,
        };
        changed();
        return ok({ channel: channel.id, ts: old.ts, text: messages[i]?.text });
      }
      case 'chat.delete': {
        const channel = channelOf();
        const i = channel && typeof args.ts === 'string' ? find(channel.id, args.ts) : -1;
        if (i === -1) return fail('message_not_found');
        messages.splice(i, 1);
        changed();
        return ok({ channel: args.channel, ts: args.ts });
      }
      case 'views.open':
      case 'views.push': {
        const trigger = typeof args.trigger_id === 'string' ? triggers.get(args.trigger_id) : undefined;
        if (!trigger || Date.now() - trigger.at > TRIGGER_TTL_MS) return fail('expired_trigger_id');
        triggers.delete(String(args.trigger_id));
        const refusal = checkView(args.view);
        if (refusal) return fail(refusal.error, refusal.messages);
        const open: OpenView = {
          id: `V${++seq}`,
          hash: randomBytes(4).toString('hex'),
          user: trigger.user,
          view: args.view as Record<string, unknown>,
        };
        const stack = stackOf(trigger.user);
        if (method === 'views.open') stack.length = 0;
        stack.push(open);
        changed();
        return ok({ view: { id: open.id, hash: open.hash, ...open.view } });
      }
      case 'views.update': {
        const found = typeof args.view_id === 'string' ? findView(args.view_id) : undefined;
        if (!found) return fail('not_found');
        if (typeof args.hash === 'string' && args.hash !== found.view.hash) return fail('hash_conflict');
        const refusal = checkView(args.view);
        if (refusal) return fail(refusal.error, refusal.messages);
        found.view.view = args.view as Record<string, unknown>;
        found.view.hash = randomBytes(4).toString('hex');
        changed();
        return ok({ view: { id: found.view.id, hash: found.view.hash, ...found.view.view } });
      }
      case 'usergroups.users.list':
        return fail('no_such_subteam');
      case 'users.info': {
        const u = typeof args.user === 'string' ? users.get(args.user) : undefined;
        return u ? ok({ user: { id: u.id, name: u.name, real_name: u.name } }) : fail('user_not_found');
      }
      case 'conversations.info': {
        const channel = channelOf();
        return channel ? ok({ channel: { id: channel.id, name: channel.name } }) : fail('channel_not_found');
      }
      case 'files.getUploadURLExternal': {
        const length = Number(args.length);
        if (typeof args.filename !== 'string' || !Number.isInteger(length) || length <= 0)
          return fail('invalid_arguments');
        const id = `F${++seq}`;
        uploads.set(id, { filename: args.filename, length });
        return ok({ upload_url: `${url}/upload/${id}`, file_id: id });
      }
      case 'files.completeUploadExternal': {
        const files = Array.isArray(args.files) ? args.files : [];
        const channel = typeof args.channel_id === 'string' ? channels.get(args.channel_id) : undefined;
        const done = [];
        for (const f of files) {
          const upload = isObject(f) && typeof f.id === 'string' ? uploads.get(f.id) : undefined;
          if (!upload || upload.content === undefined) return fail('file_not_found');
          const title = isObject(f) && typeof f.title === 'string' ? f.title : upload.filename;
          if (channel) {
            post({
              ts: newTs(),
              channel: channel.id,
              user: TRIAL_BOT.userId,
              text: typeof args.initial_comment === 'string' ? args.initial_comment : '',
              file: { title, content: upload.content },
              ...(typeof args.thread_ts === 'string' ? { threadTs: args.thread_ts } : {}),
            });
          }
          done.push({ id: (f as { id: string }).id, title });
        }
        return ok({ files: done });
      }
      default:
        return fail('unknown_method');
    }
  }

  // ---- the page's requests -------------------------------------------------------------------

  function state(user: string) {
    const top = views.get(user)?.at(-1);
    return {
      version,
      bot: TRIAL_BOT.userId,
      users: TRIAL_USERS,
      channels: Object.values(TRIAL_CHANNELS),
      messages: messages.filter((m) => m.ephemeralTo === undefined || m.ephemeralTo === user),
      view: top ? { id: top.id, hash: top.hash, ...top.view } : null,
      notices: notices.slice(-20),
    };
  }

  async function pageAction(path: string, body: Record<string, unknown>): Promise<unknown> {
    const user = typeof body.as === 'string' && users.has(body.as) ? body.as : undefined;
    if (!user) return { error: 'unknown user' };
    switch (path) {
      case '/try/command': {
        const channel = typeof body.channel === 'string' ? channels.get(body.channel) : undefined;
        if (!channel || typeof body.text !== 'string') return { error: 'a channel and a text are needed' };
        const text = body.text.slice(0, 4000);
        if (text.trim().startsWith('/')) await command(user, channel.id, text);
        else if (text.trim()) post({ ts: newTs(), channel: channel.id, user, text });
        return {};
      }
      case '/try/action': {
        // A button (or a menu) in a message or in a modal.
        const action = isObject(body.action) ? body.action : undefined;
        if (!action || typeof action.action_id !== 'string') return { error: 'no action' };
        const viewId = typeof body.viewId === 'string' ? body.viewId : undefined;
        const trigger = newTrigger(user);
        const base = {
          type: 'block_actions',
          user: userRef(user),
          api_app_id: TRIAL_BOT.appId,
          token: 'trial',
          team: { id: TRIAL_BOT.teamId, domain: 'trial' },
          trigger_id: trigger,
          actions: [{ ...action, action_ts: `${Date.now() / 1000}` }],
        };
        if (viewId) {
          const found = findView(viewId);
          if (!found || found.view.user !== user) return { error: 'that form is closed' };
          const r = await interact({
            ...base,
            container: { type: 'view', view_id: viewId },
            view: {
              id: viewId,
              hash: found.view.hash,
              team_id: TRIAL_BOT.teamId,
              ...found.view.view,
              state: { values: isObject(body.values) ? body.values : {} },
            },
          });
          if ('error' in r || r.status !== 200)
            notice(
              `The bot did not take the action in the form: ${'error' in r ? r.error : `HTTP ${r.status}`}`,
            );
          return {};
        }
        const channel = typeof body.channel === 'string' ? channels.get(body.channel) : undefined;
        const i = channel && typeof body.ts === 'string' ? find(channel.id, body.ts) : -1;
        const message = messages[i];
        if (!channel || !message) return { error: 'that message is gone' };
        const ephemeral = message.ephemeralTo !== undefined;
        const r = await interact({
          ...base,
          container: {
            type: 'message',
            message_ts: message.ts,
            channel_id: channel.id,
            is_ephemeral: ephemeral,
            ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
          },
          channel: { id: channel.id, name: channel.name },
          message: {
            type: 'message',
            ts: message.ts,
            text: message.text,
            ...(message.blocks === undefined ? {} : { blocks: message.blocks }),
            ...(message.user === TRIAL_BOT.userId ? { bot_id: TRIAL_BOT.botId } : { user: message.user }),
            ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
          },
          response_url: newResponseUrl(user, channel.id, { ts: message.ts, ephemeral }),
          state: { values: {} },
        });
        if ('error' in r || r.status !== 200) unanswered(user, channel.id, 'The button', r);
        return {};
      }
      case '/try/submit': {
        const found = typeof body.viewId === 'string' ? findView(body.viewId) : undefined;
        if (!found || found.view.user !== user) return { error: 'that form is closed' };
        const open = found.view;
        const r = await interact({
          type: 'view_submission',
          team: { id: TRIAL_BOT.teamId, domain: 'trial' },
          user: userRef(user),
          api_app_id: TRIAL_BOT.appId,
          token: 'trial',
          trigger_id: newTrigger(user),
          view: {
            id: open.id,
            hash: open.hash,
            team_id: TRIAL_BOT.teamId,
            ...open.view,
            state: { values: isObject(body.values) ? body.values : {} },
          },
          response_urls: [],
        });
        if ('error' in r || r.status !== 200) {
          const why = 'error' in r ? r.error : `HTTP ${r.status}`;
          return { errors: { '': `The bot did not take the form (${why}).` } };
        }
        const answer = r.body ? safeJson(r.body) : {};
        const action = isObject(answer) ? answer.response_action : undefined;
        if (action === 'errors' && isObject(answer) && isObject(answer.errors))
          return { errors: answer.errors };
        if ((action === 'update' || action === 'push') && isObject(answer) && isObject(answer.view)) {
          const refusal = checkView(answer.view);
          if (refusal) {
            notice(`Slack would refuse the bot's form: ${refusal.error} ${refusal.messages.join(' ')}`);
            return {};
          }
          if (action === 'update') {
            open.view = answer.view;
            open.hash = randomBytes(4).toString('hex');
          } else
            found.stack.push({
              id: `V${++seq}`,
              hash: randomBytes(4).toString('hex'),
              user,
              view: answer.view,
            });
          changed();
          return {};
        }
        if (action === 'clear') found.stack.length = 0;
        else found.stack.splice(found.stack.indexOf(open), 1);
        changed();
        return {};
      }
      case '/try/close': {
        const found = typeof body.viewId === 'string' ? findView(body.viewId) : undefined;
        if (found && found.view.user === user) {
          found.stack.splice(found.stack.indexOf(found.view), 1);
          changed();
        }
        return {};
      }
      default:
        return { error: 'unknown' };
    }
  }

  const send = (res: ServerResponse, status: number, body: unknown, type = 'application/json') => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

  let ownHosts: string[] = [];
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
    const raw = await readBody(req);
    if (raw === undefined) return send(res, 413, { ok: false, error: 'request_too_large' });

    if (path === '/favicon.ico') {
      res.writeHead(204);
      return res.end();
    }
    if (req.method === 'GET' && STATIC[path]) {
      const { file, type } = STATIC[path];
      res.writeHead(200, {
        'content-type': type,
        'cache-control': 'no-store',
        'content-security-policy': CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      });
      return res.end(readFileSync(`${pageDir}/${file}`));
    }

    if (path.startsWith('/try/')) {
      // Only this page may act here: its own host, its own origin, JSON (which a form elsewhere cannot send).
      const host = String(req.headers.host ?? '');
      const origin = req.headers.origin;
      if (
        !ownHosts.includes(host) ||
        (origin !== undefined && !ownHosts.some((h) => origin === `http://${h}`))
      )
        return send(res, 403, { error: 'not this page' });
      const as = new URL(req.url ?? '/', 'http://stand-in').searchParams.get('as') ?? '';
      if (req.method === 'GET' && path === '/try/state') return send(res, 200, state(as));
      if (req.method !== 'POST' || !String(req.headers['content-type'] ?? '').startsWith('application/json'))
        return send(res, 415, { error: 'JSON POSTs only' });
      const body = safeJson(raw.toString('utf8'));
      if (!isObject(body)) return send(res, 400, { error: 'not JSON' });
      return send(res, 200, await pageAction(path, body));
    }

    if (path.startsWith('/response/')) {
      const target = responseUrls.get(path.slice('/response/'.length));
      if (req.method !== 'POST') return send(res, 405, 'method_not_allowed', 'text/plain');
      if (!target) return send(res, 404, 'expired_url', 'text/plain');
      if (target.uses >= SLACK_CHECK_LIMITS.responseUrlUses) return send(res, 404, 'used_url', 'text/plain');
      const args = safeJson(raw.toString('utf8'));
      if (!isObject(args)) return send(res, 400, 'invalid_payload', 'text/plain');
      const refusal = args.delete_original ? null : checkMessage(args);
      if (refusal) {
        notice(`Slack would refuse the bot's answer: ${refusal.error} ${refusal.messages.join(' ')}`);
        return send(res, 400, refusal.error, 'text/plain');
      }
      target.uses++;
      deliverResponse(target, args);
      return send(res, 200, { ok: true });
    }

    if (path.startsWith('/upload/')) {
      const upload = uploads.get(path.slice('/upload/'.length));
      if (!upload) return send(res, 404, 'file_not_found', 'text/plain');
      const bytes = uploadedBytes(String(req.headers['content-type'] ?? ''), raw);
      if (!bytes || bytes.length !== upload.length) return send(res, 400, 'invalid_form_data', 'text/plain');
      upload.content = bytes.toString('utf8');
      return send(res, 200, `OK - ${bytes.length}`, 'text/plain');
    }

    if (path.startsWith('/api/')) {
      const method = path.slice('/api/'.length);
      const parsed = parseBody(req.headers, raw.toString('utf8'));
      const args = '__invalid' in parsed ? {} : parsed;
      const token = tokenOf(req.headers, args);
      if (!token) return send(res, 200, { ok: false, error: 'not_authed' });
      if (token !== botToken) return send(res, 200, { ok: false, error: 'invalid_auth' });
      if ('__invalid' in parsed) return send(res, 200, { ok: false, error: String(parsed.__invalid) });
      return send(res, 200, api(method, args));
    }
    return send(res, 404, { error: 'not found' });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}`;
  ownHosts = [`127.0.0.1:${port}`, `localhost:${port}`];

  return {
    url,
    apiUrl: `${url}/api/`,
    botToken,
    signingSecret,
    setBotUrl(u) {
      botUrl = u;
    },
    command,
    messages: () => messages,
    notices: () => notices,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
