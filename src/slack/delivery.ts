import type { Outcome, Via } from '../bot/metrics/index.ts';
import type { Logger } from '../log/index.ts';
import { SLACK_LIMITS } from './limits.ts';
import { type AttachedFile, createSlackCalls, type Sent, type SlackCallOptions } from './slackCalls.ts';
import { answerNotDeliveredView, fileNotAttachedView } from './views/errors.ts';
import type { SlackMessage } from './views/message.ts';

export type { AttachedFile, Sent } from './slackCalls.ts';

/**
 * One way to answer in Slack. Every message the bot sends (answers, notices to the asker, files,
 * and next the approval messages and results of change requests) goes through a `Delivery`:
 *
 *   const delivery = createDelivery({ token, metrics, logger });
 *   const reply = delivery.toResponseUrl({ responseUrl, channel, user });   // or toChannel, toModal
 *   await delivery.deliver(reply, answer, { via: 'command', command, started, logger });
 *
 * A `Reply` is the surface a request came from (a slash command's response URL, a channel or a
 * thread, a modal) with the three things one can do there: `send` a message (for everyone there
 * or for the asker alone), `attach` a file beside it, `tellAsker` something ephemeral. Every call
 * goes through `slackCalls.ts`: retried within one budget per message, and it never throws.
 *
 * `deliver` is the whole flow for a request's answer: send it, attach its file, count the
 * request (`rmq_slack_requests_total`, outcome `lost` when the answer did not reach Slack) and,
 * when the answer or its file was lost, tell the asker ephemerally by another way than the one
 * that failed.
 */

export type Audience = 'channel' | 'asker';
export type Surface = 'response-url' | 'channel' | 'thread' | 'modal';

export interface Reply {
  readonly surface: Surface;
  /**
   * The message where the request came from: for everyone there (`channel`), or for the asker
   * alone (`asker`, ephemeral). A modal shows it whatever the audience.
   */
  send(message: SlackMessage, audience: Audience): Promise<Sent>;
  /** A file uploaded where `send` posts for everyone (the channel, and the thread when there is one). */
  attach(file: AttachedFile): Promise<Sent>;
  /** An ephemeral message to the asker, by the surest way the surface has. */
  tellAsker(message: SlackMessage): Promise<Sent>;
}

/** What `deliver` needs to know of the request, for the count and the log. */
export interface RequestInfo {
  readonly via: Via;
  /** A name from the command table (never user text). */
  readonly command: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** The request's child logger. */
  readonly logger: Logger;
  /** Shown to the asker when their answer was lost, to quote to the bot's operators. */
  readonly requestId: string;
}

/** A request's answer, as the dispatcher returns it. */
export interface Deliverable {
  readonly message: SlackMessage;
  readonly audience: Audience;
  readonly outcome: Outcome;
  /** Goes with `channel` answers only, never beside an ephemeral one. */
  readonly file?: AttachedFile;
}

export interface DeliveryResult {
  /** The answer reached Slack. */
  readonly delivered: boolean;
  /** As counted: the answer's own outcome, or `lost`. */
  readonly outcome: Outcome;
  /** `undefined` when there was no file, or the answer did not go to the channel. */
  readonly fileAttached?: boolean;
}

/** What a Delivery is built with: the Slack calls' settings (`slackCalls.ts`). */
export type DeliveryOptions = SlackCallOptions;

export interface Delivery {
  /** A slash command's surface: its response URL, and the channel it was typed in. */
  toResponseUrl(where: { responseUrl: string; channel: string; user: string }): Reply;
  /** A channel, or a thread of it (`threadTs`); `user` is who ephemeral messages go to. */
  toChannel(where: { channel: string; threadTs?: string | undefined; user?: string | undefined }): Reply;
  /**
   * A modal: opened with `triggerId` (valid 3 s after the click), or, with `viewId`, the one
   * already open updated. `tellAsker` goes to `channel` when given, else to the user's DM.
   */
  toModal(where: {
    triggerId?: string;
    viewId?: string;
    title: string;
    user: string;
    channel?: string;
  }): Reply;
  /** The answer of a request sent, its file attached, the asker told what was lost, the request counted. */
  deliver(reply: Reply, answer: Deliverable, request: RequestInfo): Promise<DeliveryResult>;
  /**
   * Any Web API method with the same retries and budget (`chat.update` of an approval message,
   * `chat.postMessage` to the approvals channel). The answer's fields are in `response`.
   */
  call(method: string, args: Record<string, unknown>): Promise<Sent & { response?: Record<string, unknown> }>;
}

// ---- the helper ---------------------------------------------------------------------------------

export function createDelivery(options: DeliveryOptions): Delivery {
  const { metrics } = options;
  const { call, postToResponseUrl, upload } = createSlackCalls(options);

  const ephemeral = (channel: string, user: string, message: SlackMessage, threadTs?: string) =>
    call('chat.postEphemeral', {
      channel,
      user,
      text: message.text,
      blocks: message.blocks,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });

  const toResponseUrl: Delivery['toResponseUrl'] = ({ responseUrl, channel, user }) => {
    // Once the response URL has failed for good, the asker is reached through the Web API.
    let failed = false;
    const post = async (body: Record<string, unknown>): Promise<Sent> => {
      const sent = await postToResponseUrl(responseUrl, body);
      if (!sent.ok) failed = true;
      return sent;
    };
    return {
      surface: 'response-url',
      send: (message, audience) =>
        post({
          response_type: audience === 'channel' ? 'in_channel' : 'ephemeral',
          text: message.text,
          blocks: message.blocks,
          unfurl_links: false,
          unfurl_media: false,
        }),
      attach: (file) => upload(file, channel, undefined),
      async tellAsker(message) {
        const body = {
          response_type: 'ephemeral',
          replace_original: false,
          text: message.text,
          blocks: message.blocks,
        };
        const sent = failed ? undefined : await post(body);
        return sent?.ok ? sent : ephemeral(channel, user, message);
      },
    };
  };

  const toChannel: Delivery['toChannel'] = ({ channel, threadTs, user }) => ({
    surface: threadTs ? 'thread' : 'channel',
    send: (message, audience) =>
      audience === 'asker' && user
        ? ephemeral(channel, user, message, threadTs)
        : call('chat.postMessage', {
            channel,
            text: message.text,
            blocks: message.blocks,
            unfurl_links: false,
            unfurl_media: false,
            ...(threadTs ? { thread_ts: threadTs } : {}),
          }),
    attach: (file) => upload(file, channel, threadTs),
    tellAsker: (message) =>
      user ? ephemeral(channel, user, message, threadTs) : Promise.resolve({ ok: false, error: 'no_user' }),
  });

  const toModal: Delivery['toModal'] = ({ triggerId, viewId, title, user, channel }) => ({
    surface: 'modal',
    async send(message) {
      const view = {
        type: 'modal',
        title: { type: 'plain_text', text: title.slice(0, SLACK_LIMITS.modalTitle) },
        close: { type: 'plain_text', text: 'Close' },
        blocks: message.blocks,
      };
      const sent = viewId
        ? await call('views.update', { view_id: viewId, view })
        : await call('views.open', { trigger_id: triggerId, view });
      if (!sent.ok) return sent;
      const id = (sent.response?.view as { id?: unknown } | undefined)?.id;
      return typeof id === 'string' ? { ok: true, viewId: id } : { ok: true };
    },
    attach: () => Promise.resolve({ ok: false, error: 'no_channel' }),
    tellAsker: (message) =>
      channel
        ? ephemeral(channel, user, message)
        : call('chat.postMessage', { channel: user, text: message.text, blocks: message.blocks }),
  });

  async function deliver(reply: Reply, answer: Deliverable, request: RequestInfo): Promise<DeliveryResult> {
    const { via, logger } = request;
    const sent = await reply.send(answer.message, answer.audience);
    let outcome: Outcome = answer.outcome;
    let fileAttached: boolean | undefined;
    if (!sent.ok) {
      outcome = 'lost';
      metrics.deliveryErrors.inc({ via });
      logger.warn({ error: sent.error, surface: reply.surface }, 'Slack did not take the answer');
      // Never after shutdown began: the process is going away, and the asker is better asking again.
      if (sent.error !== 'shutting_down') {
        const told = await reply.tellAsker(answerNotDeliveredView(sent.error, request.requestId));
        if (!told.ok)
          logger.warn({ error: told.error }, 'the asker could not be told that the answer was lost');
      }
    } else if (answer.file && answer.audience === 'channel') {
      const bytes = Buffer.byteLength(answer.file.content);
      const attached = await reply.attach(answer.file);
      fileAttached = attached.ok;
      if (attached.ok) {
        logger.info({ filename: answer.file.filename, bytes }, 'file attached');
      } else {
        metrics.deliveryErrors.inc({ via });
        logger.warn(
          { error: attached.error, filename: answer.file.filename, bytes },
          'Slack did not take the file',
        );
        const told = await reply.tellAsker(fileNotAttachedView(attached.error, answer.file));
        if (!told.ok) logger.warn({ error: told.error }, 'Slack did not take the notice of the missing file');
      }
    }
    const seconds = (performance.now() - request.started) / 1000;
    metrics.requests.inc({ command: request.command, outcome, via });
    metrics.requestSeconds.observe({ command: request.command, via }, seconds);
    logger.info({ command: request.command, outcome, ms: Math.round(seconds * 1000) }, 'request done');
    return { delivered: sent.ok, outcome, ...(fileAttached === undefined ? {} : { fileAttached }) };
  }

  return { toResponseUrl, toChannel, toModal, deliver, call };
}
