/**
 * `npm run try`'s pure parts and its stand-in's guards: the arguments (refused with a sentence,
 * unknown ones named), the trial's own Redis database, and the page's requests taken only from
 * the page itself (its host and origin, JSON), so another site in the same browser cannot act as a
 * user. The whole flow in a browser is test/e2e/try-browser.test.ts.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkspace, type Workspace } from '../../scripts/try/workspace.ts';
import { parseTryArgs, TRY_DEFAULT_PORT, trialRedisUrl } from '../../scripts/try.ts';

describe('parseTryArgs', () => {
  it('reads the defaults and each flag, in both spellings', () => {
    expect(parseTryArgs([])).toEqual({
      kind: 'run',
      port: TRY_DEFAULT_PORT,
      vhost: 'rmq-lab',
      redis: undefined,
      bot: undefined,
    });
    expect(
      parseTryArgs(['--port', '0', '--vhost=mine', '--redis', 'redis://h:1/2', '--bot', 'x.js']),
    ).toEqual({
      kind: 'run',
      port: 0,
      vhost: 'mine',
      redis: 'redis://h:1/2',
      bot: 'x.js',
    });
    expect(parseTryArgs(['--vhost', 'v', '--help'])).toEqual({ kind: 'help' });
  });

  it('refuses bad values and names every unknown argument', () => {
    expect(parseTryArgs(['--port', 'http'])).toMatchObject({ kind: 'refused' });
    expect(parseTryArgs(['--port', '70000'])).toMatchObject({ kind: 'refused' });
    expect(parseTryArgs(['--redis', 'localhost:6379'])).toMatchObject({ kind: 'refused' });
    expect(parseTryArgs(['--vhost'])).toMatchObject({ kind: 'refused' });
    const r = parseTryArgs(['--prot', '1', '--vhost', 'v']);
    expect(r.kind === 'refused' && r.message).toContain('"--prot", "1"');
  });

  it('keeps the trial in a Redis database of its own unless the URL names one', () => {
    expect(trialRedisUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379/13');
    expect(trialRedisUrl('redis://127.0.0.1:6379/')).toBe('redis://127.0.0.1:6379/13');
    expect(trialRedisUrl('redis://127.0.0.1:6379/4')).toBe('redis://127.0.0.1:6379/4');
  });
});

describe("the stand-in's page requests", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await startWorkspace();
  });
  afterAll(() => ws.close());

  const command = (
    headers: Record<string, string>,
    body = '{"as":"U0ALICE","channel":"C0TEAM","text":"hello"}',
  ) => fetch(`${ws.url}/try/command`, { method: 'POST', headers, body });

  it('takes a JSON POST from its own page', async () => {
    const res = await command({ 'content-type': 'application/json', origin: ws.url });
    expect(res.status).toBe(200);
    expect(ws.messages().at(-1)).toMatchObject({ channel: 'C0TEAM', user: 'U0ALICE', text: 'hello' });
  });

  it('refuses another origin, a form post, and the state under another host name', async () => {
    const before = ws.messages().length;
    expect((await command({ 'content-type': 'application/json', origin: 'http://evil.test' })).status).toBe(
      403,
    );
    expect(
      (await command({ 'content-type': 'application/x-www-form-urlencoded' }, 'as=U0ALICE')).status,
    ).toBe(415);
    // A name rebound to 127.0.0.1 (DNS rebinding) arrives with its own Host header.
    const rebound = await new Promise<number>((done, fail) => {
      const u = new URL(ws.url);
      request(
        { host: u.hostname, port: u.port, path: '/try/state?as=U0ALICE', headers: { host: 'evil.test' } },
        (r) => {
          r.resume();
          done(r.statusCode ?? 0);
        },
      )
        .on('error', fail)
        .end();
    });
    expect(rebound).toBe(403);
    expect(ws.messages()).toHaveLength(before);
  });

  it("answers the bot's Web API only with its token, and refuses what Slack would", async () => {
    const api = (method: string, token: string, body: Record<string, unknown>) =>
      fetch(`${ws.apiUrl}${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ ok: boolean; error?: string }>);
    expect(await api('auth.test', 'xoxb-wrong', {})).toMatchObject({ ok: false, error: 'invalid_auth' });
    expect(await api('chat.postMessage', ws.botToken, { channel: 'C0NOPE', text: 'x' })).toMatchObject({
      ok: false,
      error: 'channel_not_found',
    });
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(3001) } }];
    expect(
      await api('chat.postMessage', ws.botToken, { channel: 'C0TEAM', text: 'x', blocks }),
    ).toMatchObject({
      ok: false,
      error: 'invalid_blocks',
    });
    expect(ws.notices().at(-1)?.text).toContain('invalid_blocks');
  });
});
