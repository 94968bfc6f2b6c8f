import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachedRefs, fileDownloader } from '../../src/slack/attachments.ts';
import { type FakeSlack, startFakeSlack } from '../support/fakeSlack.ts';

/**
 * Reading a file attached to a mention, against the fake of Slack (files.info, the private URL
 * that answers the bytes only with the bot token, else Slack's sign-in page as HTML).
 */
let slack: FakeSlack;

beforeAll(async () => {
  slack = await startFakeSlack();
});
afterAll(() => slack.close());

/** `files.info` as the delivery calls it: with the bot token, the answer's fields in `response`. */
function callWith(token: string) {
  return async (method: string, args: Record<string, unknown>) => {
    const res = await fetch(`${slack.apiUrl}${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(args),
    });
    const body = (await res.json()) as { ok: boolean; error?: string };
    return body.ok
      ? { ok: true as const, response: body }
      : { ok: false as const, error: body.error ?? 'unknown' };
  };
}

describe('a file attached to a mention', () => {
  it('the event names its files; anything malformed names none', () => {
    expect(attachedRefs({ files: [{ id: 'F1', name: 'a.json', size: 3 }] })).toEqual([
      { id: 'F1', name: 'a.json' },
    ]);
    expect(attachedRefs({})).toEqual([]);
    expect(attachedRefs({ files: [{ name: 'no id' }] })).toEqual([]);
  });

  it('downloaded with the bot token: the bytes as shared', async () => {
    const f = slack.shareFile({ name: 'defs.yaml', content: 'kind: Policy\n' });
    const read = fileDownloader({ token: slack.botToken, call: callWith(slack.botToken) });
    const got = await read({ id: f.id });
    expect(got).toMatchObject({ ok: true, name: 'defs.yaml' });
    expect(got.ok && got.bytes.toString()).toBe('kind: Policy\n');
  });

  it("Slack's sign-in page instead of the file (a token without files:read) is refused, never read as the file", async () => {
    const f = slack.shareFile({ name: 'defs.json', content: '{}' });
    const read = fileDownloader({ token: 'xoxb-not-the-bot', call: callWith(slack.botToken) });
    const got = await read({ id: f.id, name: 'defs.json' });
    expect(got).toEqual({ ok: false, why: expect.stringContaining('its sign-in page instead') });
  });

  it('over the limit: by the size Slack reports, before a byte is fetched; by the bytes, when the size understates them', async () => {
    const read = fileDownloader({ token: slack.botToken, call: callWith(slack.botToken), maxBytes: 100 });
    const declared = slack.shareFile({ name: 'big.json', content: '{}', size: 101 });
    const downloads = slack.downloads().length;
    expect(await read({ id: declared.id })).toEqual({ ok: false, why: expect.stringContaining('over the') });
    expect(slack.downloads().length).toBe(downloads);
    const understated = slack.shareFile({ name: 'lies.json', content: 'x'.repeat(500), size: 10 });
    expect(await read({ id: understated.id })).toEqual({
      ok: false,
      why: expect.stringContaining('runs over'),
    });
  });

  it('a file Slack does not describe (deleted, not shared with the bot): the sentence names files:read', async () => {
    const read = fileDownloader({ token: slack.botToken, call: callWith(slack.botToken) });
    expect(await read({ id: 'F_GONE', name: 'gone.json' })).toEqual({
      ok: false,
      why: expect.stringContaining('files:read'),
    });
  });
});
