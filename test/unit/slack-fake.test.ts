import { webApi } from '@slack/bolt';
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

  it('takes a file upload the files.uploadV2 way, and records what it received', async () => {
    const start = await api('files.getUploadURLExternal', { filename: 'a.txt', length: '5' });
    expect(start).toMatchObject({ ok: true });
    expect(String(start.upload_url).startsWith(`${slack.url}/upload/`)).toBe(true);
    const put = await fetch(String(start.upload_url), { method: 'POST', body: 'hello' });
    expect(put.status).toBe(200);
    const done = await api('files.completeUploadExternal', {
      files: JSON.stringify([{ id: String(start.file_id), title: 'a' }]),
      channel_id: 'C1',
      thread_ts: '1700000000.000100',
    });
    expect(done).toMatchObject({ ok: true, files: [{ id: start.file_id, title: 'a' }] });
    expect(slack.uploads().find((u) => u.id === start.file_id)).toMatchObject({
      filename: 'a.txt',
      content: 'hello',
      completed: true,
      channel_id: 'C1',
      thread_ts: '1700000000.000100',
    });
  });

  it('takes what @slack/web-api files.uploadV2 sends (multipart bytes), into a thread', async () => {
    const client = new webApi.WebClient(slack.botToken, {
      slackApiUrl: slack.apiUrl,
      retryConfig: { retries: 0 },
    });
    const content = 'name,kind\nq.é,classic\n';
    await client.files.uploadV2({
      channel_id: 'C2',
      thread_ts: '1700000000.000200',
      content,
      filename: 'list.csv',
      title: 'The list',
    });
    expect(slack.uploads().find((u) => u.filename === 'list.csv')).toMatchObject({
      content,
      length: Buffer.byteLength(content),
      completed: true,
      channel_id: 'C2',
      thread_ts: '1700000000.000200',
      title: 'The list',
    });
  });

  it('refuses an upload Slack would refuse, with Slack’s codes', async () => {
    const noName = await api('files.getUploadURLExternal', { length: '5' });
    expect(noName).toMatchObject({ ok: false, error: 'invalid_arguments' });
    expect(JSON.stringify(noName)).toContain('missing required field: filename');
    const noLength = await api('files.getUploadURLExternal', { filename: 'a.txt' });
    expect(noLength).toMatchObject({ ok: false, error: 'invalid_arguments' });
    expect(JSON.stringify(noLength)).toContain('missing required field: length');
    expect(await api('files.getUploadURLExternal', { filename: 'a.txt', length: '0' })).toMatchObject({
      ok: false,
      error: 'invalid_arguments',
    });

    const start = await api('files.getUploadURLExternal', { filename: 'b.txt', length: '3' });
    const files = JSON.stringify([{ id: String(start.file_id) }]);
    // Completed before the bytes arrived; bytes that do not add up to the length declared.
    expect(await api('files.completeUploadExternal', { files, channel_id: 'C1' })).toMatchObject({
      ok: false,
      error: 'file_not_found',
    });
    expect((await fetch(String(start.upload_url), { method: 'POST', body: 'four' })).status).toBe(400);
    expect((await fetch(String(start.upload_url), { method: 'POST', body: 'abc' })).status).toBe(200);
    expect(await api('files.completeUploadExternal', { files: '[]' })).toMatchObject({
      ok: false,
      error: 'invalid_arguments',
    });
    expect(
      await api('files.completeUploadExternal', { files, thread_ts: '1700000000.000300' }),
    ).toMatchObject({ ok: false, error: 'invalid_arguments' });
    expect(await api('files.completeUploadExternal', { files, channel_id: 'C1' })).toMatchObject({
      ok: true,
    });
    // Slack completes an upload once.
    expect(await api('files.completeUploadExternal', { files, channel_id: 'C1' })).toMatchObject({
      ok: false,
      error: 'file_not_found',
    });
    expect(
      await api('files.completeUploadExternal', { files: JSON.stringify([{ id: 'F_unknown' }]) }),
    ).toMatchObject({ ok: false, error: 'file_not_found' });
  });

  it('fails the next call to a method when asked, without counting it as a rejection', async () => {
    const before = slack.rejections().length;
    slack.failNext('files.completeUploadExternal', 'not_in_channel');
    const start = await api('files.getUploadURLExternal', { filename: 'c.txt', length: '1' });
    await fetch(String(start.upload_url), { method: 'POST', body: 'c' });
    const files = JSON.stringify([{ id: String(start.file_id) }]);
    expect(await api('files.completeUploadExternal', { files, channel_id: 'C1' })).toMatchObject({
      ok: false,
      error: 'not_in_channel',
    });
    expect(slack.rejections()).toHaveLength(before);
    expect(slack.calls.at(-1)).toMatchObject({ ok: false, injected: true, error: 'not_in_channel' });
    expect(await api('files.completeUploadExternal', { files, channel_id: 'C1' })).toMatchObject({
      ok: true,
    });
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
