/**
 * Slack's requests as Slack sends them, to a bot however it runs (harness.ts in-process,
 * processHarness.ts as a process): signed, form-encoded commands with a response URL on the fake
 * Slack, JSON event callbacks, interactions; the answers read back from the fake.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { type FakeSlack, type RecordedCall, renderedText } from './fakeSlack.ts';

export interface SignedRequest {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** Slack's signature: `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` under the signing secret. */
export function signature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export function signed(
  secret: string,
  body: string,
  contentType: string,
  options: { timestamp?: number } = {},
): SignedRequest {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    body,
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature(secret, timestamp, body),
    },
  };
}

export function commandForm(fields: {
  text: string;
  responseUrl: string;
  userId?: string;
  channelId?: string;
}): string {
  return new URLSearchParams({
    token: 'deprecated-verification-token',
    team_id: 'T0TEST',
    team_domain: 'test',
    channel_id: fields.channelId ?? 'C0INCIDENT',
    channel_name: 'incident-42',
    user_id: fields.userId ?? 'U0ONCALL',
    user_name: 'oncall',
    command: '/rmq',
    text: fields.text,
    api_app_id: 'A0RMQ',
    is_enterprise_install: 'false',
    response_url: fields.responseUrl,
    trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
  }).toString();
}

export function mentionEnvelope(event: {
  text: string;
  eventId?: string;
  channel?: string;
  ts?: string;
  threadTs?: string;
  user?: string;
  botId?: string;
  botUserId: string;
  /** Files attached to the message, as the event names them. */
  files?: readonly { id: string; name: string }[];
}): Record<string, unknown> {
  const ts =
    event.ts ??
    `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
  return {
    token: 'deprecated-verification-token',
    team_id: 'T0TEST',
    api_app_id: 'A0RMQ',
    type: 'event_callback',
    event_id: event.eventId ?? `Ev${randomBytes(6).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      { team_id: 'T0TEST', user_id: event.botUserId, is_bot: true, is_enterprise_install: false },
    ],
    event: {
      type: 'app_mention',
      user: event.user ?? 'U0ONCALL',
      text: event.text,
      ts,
      channel: event.channel ?? 'C0INCIDENT',
      event_ts: ts,
      ...(event.threadTs ? { thread_ts: event.threadTs } : {}),
      ...(event.botId ? { bot_id: event.botId } : {}),
      ...(event.files ? { files: event.files.map((f) => ({ ...f, file_access: 'check_file_info' })) } : {}),
    },
  };
}

/** What a test sends the bot, and where it reads the answer. */
export interface SignedRequests {
  post(
    path: string,
    request: SignedRequest | { body: string; headers: Record<string, string> },
  ): Promise<Response>;
  /** A signed `/rmq` command, from channel C0INCIDENT and user U0ONCALL unless told; returns the ack and its response URL. */
  command(
    text: string,
    from?: { channelId?: string; userId?: string },
  ): Promise<{ response: Response; responseUrl: string }>;
  /** Waits for the first answer posted to that response URL (faults injected with `faultNext` skipped). */
  answerTo(responseUrl: string): Promise<RecordedCall>;
  /** A signed app_mention event callback (to `baseUrl`, another instance, when given). */
  mention(
    envelope: Record<string, unknown>,
    headers?: Record<string, string>,
    baseUrl?: string,
  ): Promise<Response>;
  /** A signed interaction (block_actions, view_submission): `payload=` + its JSON, as Slack posts it. */
  interact(payload: Record<string, unknown>, baseUrl?: string): Promise<Response>;
}

/** Slack's requests to the bot at `url`, signed with `signingSecret`; answers read from the fake. */
export function signedRequests(url: string, signingSecret: string, slack: FakeSlack): SignedRequests {
  const post = (path: string, request: { body: string; headers: Record<string, string> }, baseUrl = url) =>
    fetch(`${baseUrl}${path}`, { method: 'POST', headers: request.headers, body: request.body });
  return {
    post,
    async command(text, from = {}) {
      const responseUrl = slack.responseUrl();
      const request = signed(
        signingSecret,
        commandForm({ text, responseUrl, ...from }),
        'application/x-www-form-urlencoded',
      );
      const response = await post('/slack/events', request);
      return { response, responseUrl };
    },
    interact(payload, baseUrl = url) {
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      return post('/slack/events', signed(signingSecret, body, 'application/x-www-form-urlencoded'), baseUrl);
    },
    answerTo(responseUrl) {
      const path = new URL(responseUrl).pathname;
      return slack.waitForCall((c) => c.kind === 'response' && c.path === path && !c.injected, {
        what: `an answer at ${path}`,
      });
    },
    mention(envelope, headers = {}, baseUrl = url) {
      const request = signed(signingSecret, JSON.stringify(envelope), 'application/json');
      return post(
        '/slack/events',
        { body: request.body, headers: { ...request.headers, ...headers } },
        baseUrl,
      );
    },
  };
}

/**
 * `@rmq TEXT` mentioned in `where` (a thread when `threadTs` is given) through `to`, and the text
 * of the bot's first answer posted there after it that contains `shows`.
 */
export async function askInThread(
  to: Pick<SignedRequests, 'mention'> & { readonly slack: FakeSlack },
  text: string,
  where: { readonly channel: string; readonly threadTs?: string | undefined },
  shows: string,
): Promise<string> {
  const { slack } = to;
  const mark = slack.calls.length;
  await to.mention(
    mentionEnvelope({
      text: `<@${slack.botUserId}> ${text}`,
      channel: where.channel,
      ...(where.threadTs ? { threadTs: where.threadTs } : {}),
      botUserId: slack.botUserId,
    }),
  );
  const post = await slack.waitForCall(
    (c) =>
      slack.calls.indexOf(c) >= mark &&
      c.method === 'chat.postMessage' &&
      c.args.channel === where.channel &&
      c.args.thread_ts === where.threadTs &&
      renderedText(c.args).includes(shows),
  );
  return renderedText(post.args);
}
