/**
 * Slack's interaction payloads as the e2e tests and the benches send them: a button click and a
 * modal's submission with values typed in.
 */
import { randomBytes } from 'node:crypto';

const triggerId = () => `${Date.now()}.${randomBytes(4).toString('hex')}`;

export interface ClickWhere {
  readonly channel: string;
  readonly ts: string;
  readonly threadTs?: string;
}

/** A button click (block_actions) by `user` on the message at `where`, as Slack posts it. */
export function clickPayload(
  user: string,
  action: { action_id: string; value: string },
  where: ClickWhere,
  responseUrl: string,
): Record<string, unknown> {
  return {
    type: 'block_actions',
    user: { id: user, username: user.toLowerCase(), team_id: 'T0TEST' },
    api_app_id: 'A0RMQ',
    token: 'deprecated-verification-token',
    team: { id: 'T0TEST', domain: 'test' },
    container: {
      type: 'message',
      message_ts: where.ts,
      channel_id: where.channel,
      is_ephemeral: false,
      ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
    },
    trigger_id: triggerId(),
    channel: { id: where.channel, name: 'approvals' },
    message: { type: 'message', ts: where.ts, text: '' },
    response_url: responseUrl,
    actions: [
      { type: 'button', block_id: 'b', text: { type: 'plain_text', text: 'x' }, action_ts: '1', ...action },
    ],
  };
}

export type OpenedView = { callback_id: string; private_metadata: string; blocks: { block_id?: string }[] };

/** A view_submission of `view` (as the bot opened it) with `values` typed in, by block id. */
export function submission(
  user: string,
  view: OpenedView,
  values: Record<string, string>,
): Record<string, unknown> {
  const state: Record<string, Record<string, unknown>> = {};
  for (const [block, value] of Object.entries(values)) {
    state[block] =
      block === 'apply_to'
        ? {
            value: {
              type: 'static_select',
              selected_option: { text: { type: 'plain_text', text: value }, value },
            },
          }
        : { [block === 'pattern' ? 'rmq_pattern_typed' : 'value']: { type: 'plain_text_input', value } };
  }
  return {
    type: 'view_submission',
    team: { id: 'T0TEST', domain: 'test' },
    user: { id: user, username: user.toLowerCase(), team_id: 'T0TEST' },
    api_app_id: 'A0RMQ',
    token: 'deprecated-verification-token',
    trigger_id: triggerId(),
    view: {
      id: `V${randomBytes(4).toString('hex')}`,
      team_id: 'T0TEST',
      type: 'modal',
      callback_id: view.callback_id,
      private_metadata: view.private_metadata,
      hash: '1.abc',
      blocks: view.blocks,
      title: { type: 'plain_text', text: 'x' },
      state: { values: state },
    },
    response_urls: [],
  };
}

/** The value of a message's button with this action id (a request's Approve button carries its id). */
export function buttonValue(blocks: unknown, actionId: string): string | undefined {
  return ((blocks ?? []) as { elements?: { action_id?: string; value?: string }[] }[])
    .flatMap((b) => b.elements ?? [])
    .find((e) => e.action_id === actionId)?.value;
}

/**
 * Submits `view` with `values` through `interact` (the harness's signed POST) and returns the
 * bot's answer to the submission: `{}` when it closed the form, else its `response_action`.
 */
export async function submitView(
  interact: (payload: Record<string, unknown>) => Promise<Response>,
  user: string,
  view: OpenedView,
  values: Record<string, string>,
): Promise<Record<string, unknown>> {
  const res = await interact(submission(user, view, values));
  if (res.status !== 200) throw new Error(`the submission got HTTP ${res.status}`);
  const text = await res.text();
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}
