import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMessage, FAKE_SLACK_LIMITS, type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';

/** The fake Slack refuses what Slack refuses; if it did not, the end-to-end tests would prove nothing. */

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

describe('checkMessage', () => {
  it.each([
    ['51 blocks', { text: 't', blocks: Array.from({ length: 51 }, () => section('x')) }, 'invalid_blocks'],
    ['a section of 3001 characters', { text: 't', blocks: [section('x'.repeat(3001))] }, 'invalid_blocks'],
    ['an empty section text', { text: 't', blocks: [section('')] }, 'invalid_blocks'],
    [
      '11 fields',
      {
        text: 't',
        blocks: [
          { type: 'section', fields: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'f' })) },
        ],
      },
      'invalid_blocks',
    ],
    [
      'a header of 151 characters',
      { text: 't', blocks: [{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }] },
      'invalid_blocks',
    ],
    [
      'a mrkdwn header',
      { text: 't', blocks: [{ type: 'header', text: { type: 'mrkdwn', text: 'h' } }] },
      'invalid_blocks',
    ],
    [
      'a button value of 2001',
      {
        text: 't',
        blocks: [
          {
            type: 'actions',
            elements: [
              {
                type: 'button',
                text: { type: 'plain_text', text: 'b' },
                action_id: 'a',
                value: 'v'.repeat(2001),
              },
            ],
          },
        ],
      },
      'invalid_blocks',
    ],
    [
      'a button text of 76',
      {
        text: 't',
        blocks: [
          {
            type: 'actions',
            elements: [
              { type: 'button', text: { type: 'plain_text', text: 'b'.repeat(76) }, action_id: 'a' },
            ],
          },
        ],
      },
      'invalid_blocks',
    ],
    [
      'an unknown block type',
      { text: 't', blocks: [{ type: 'sectoin', text: { type: 'mrkdwn', text: 'x' } }] },
      'invalid_blocks',
    ],
    ['an unknown property', { text: 't', blocks: [{ type: 'divider', text: 'x' }] }, 'invalid_blocks'],
    [
      'a repeated block_id',
      {
        text: 't',
        blocks: [
          { type: 'divider', block_id: 'a' },
          { type: 'divider', block_id: 'a' },
        ],
      },
      'invalid_blocks',
    ],
    [
      '11 context elements',
      {
        text: 't',
        blocks: [
          { type: 'context', elements: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'c' })) },
        ],
      },
      'invalid_blocks',
    ],
    ['blocks that are not an array', { text: 't', blocks: { type: 'divider' } }, 'invalid_blocks'],
    ['text over 40,000', { text: 'x'.repeat(40_001) }, 'msg_too_long'],
    ['nothing to show', {}, 'no_text'],
    [
      'more block text than Slack takes',
      { text: 't', blocks: Array.from({ length: 5 }, () => section('x'.repeat(2900))) },
      'msg_blocks_too_long',
    ],
  ])('refuses %s', (_what, message, error) => {
    expect(checkMessage(message)?.error).toBe(error);
  });

  it('takes a message at the limits', () => {
    const blocks = [
      ...Array.from({ length: 4 }, () => section('x'.repeat(3000))),
      ...Array.from({ length: 46 }, () => ({ type: 'divider' })),
    ];
    expect(blocks).toHaveLength(FAKE_SLACK_LIMITS.messageBlocks);
    expect(checkMessage({ text: 'x'.repeat(40_000), blocks })).toBeNull();
  });
});

describe('the fake Slack server', () => {
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = await startFakeSlack();
  });
  afterAll(async () => {
    await slack.close();
  });

  const api = (method: string, body: Record<string, string>, token = slack.botToken) =>
    fetch(`${slack.apiUrl}${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);

  it('answers auth.test with the bot’s ids, and refuses another token', async () => {
    expect(await api('auth.test', {})).toMatchObject({
      ok: true,
      user_id: slack.botUserId,
      bot_id: slack.botId,
    });
    expect(await api('auth.test', {}, 'xoxb-wrong')).toMatchObject({ ok: false, error: 'invalid_auth' });
  });

  it('answers chat.postMessage like Slack, and refuses bad blocks with pointers', async () => {
    expect(await api('chat.postMessage', { channel: 'C1', text: 'hi' })).toMatchObject({
      ok: true,
      channel: 'C1',
    });
    expect(await api('chat.postMessage', { text: 'hi' })).toMatchObject({
      ok: false,
      error: 'channel_not_found',
    });
    const bad = await api('chat.postMessage', {
      channel: 'C1',
      text: 'hi',
      blocks: JSON.stringify([section('x'.repeat(3001))]),
    });
    expect(bad).toMatchObject({ ok: false, error: 'invalid_blocks' });
    expect(JSON.stringify(bad)).toContain('json-pointer:/blocks/0/text');
    expect(await api('chat.postMessage', { channel: 'C1', blocks: '[{' })).toMatchObject({
      ok: false,
      error: 'invalid_blocks_format',
    });
    expect(await api('chat.nonsense', {})).toMatchObject({ ok: false, error: 'unknown_method' });
  });

  it('lets a response URL be used five times, and refuses bad blocks with HTTP 400', async () => {
    const url = slack.responseUrl();
    const post = (body: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ text: 'x', blocks: [section('y'.repeat(3001))] })).status).toBe(400);
    for (let i = 0; i < 4; i++) expect((await post({ text: `answer ${i}` })).status).toBe(200);
    expect((await post({ text: 'sixth' })).status).toBe(404);
    expect(slack.responsesTo(url)).toHaveLength(4);
    expect((await fetch(`${slack.url}/response/unknown`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('takes a file upload the files.uploadV2 way', async () => {
    const start = await api('files.getUploadURLExternal', { filename: 'a.txt', length: '5' });
    expect(start).toMatchObject({ ok: true });
    const put = await fetch(String(start.upload_url), { method: 'POST', body: 'hello' });
    expect(put.status).toBe(200);
    const done = await api('files.completeUploadExternal', {
      files: JSON.stringify([{ id: String(start.file_id), title: 'a' }]),
    });
    expect(done).toMatchObject({ ok: true });
  });

  it('checks views.open', async () => {
    const view = {
      type: 'modal',
      title: { type: 'plain_text', text: 'A title longer than 24 chars' },
      blocks: [],
    };
    expect(await api('views.open', { trigger_id: 't', view: JSON.stringify(view) })).toMatchObject({
      ok: false,
      error: 'invalid_arguments',
    });
    expect(
      await api('views.open', {
        trigger_id: 't',
        view: JSON.stringify({ ...view, title: { type: 'plain_text', text: 'Reason' } }),
      }),
    ).toMatchObject({ ok: true });
  });
});
