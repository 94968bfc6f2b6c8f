import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  commandForm,
  type Harness,
  mentionEnvelope,
  renderedText,
  signed,
  startHarness,
} from '../support/harness.ts';

/**
 * Every Slack request is checked with the signing secret: unsigned, wrongly signed, older than
 * five minutes, or changed after signing gets 401 and changes nothing — no broker call, no post.
 */

const FORM = 'application/x-www-form-urlencoded';
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

type Forge = (body: string) => { body: string; headers: Record<string, string> };

const now = () => Math.floor(Date.now() / 1000);

const forgeries = (contentType: string): [string, Forge][] => [
  ['unsigned', (body) => ({ body, headers: { 'content-type': contentType } })],
  [
    'signed without a timestamp',
    (body) => {
      const { headers } = signed(h.signingSecret, body, contentType);
      return {
        body,
        headers: { 'content-type': contentType, 'x-slack-signature': headers['x-slack-signature'] ?? '' },
      };
    },
  ],
  ['signed with another secret', (body) => signed('not-the-signing-secret', body, contentType)],
  [
    'signed with a timestamp older than five minutes',
    (body) => signed(h.signingSecret, body, contentType, { timestamp: now() - 5 * 60 - 1 }),
  ],
  [
    'signed with a timestamp more than five minutes ahead',
    (body) => signed(h.signingSecret, body, contentType, { timestamp: now() + 5 * 60 + 30 }),
  ],
  [
    'changed after signing',
    (body) => {
      const original = signed(h.signingSecret, body, contentType);
      return { body: body.replace('sig-', 'sig-changed-'), headers: original.headers };
    },
  ],
];

describe('a slash command that Slack did not sign', () => {
  it.each(forgeries(FORM))('%s: 401, no broker call, no answer', async (what, forge) => {
    const name = `sig-${what.replaceAll(' ', '-')}`;
    const responseUrl = h.slack.responseUrl();
    const brokerCallsBefore = h.proxy.requests.length;
    const slackCallsBefore = h.slack.calls.length;

    const res = await h.post(
      '/slack/events',
      forge(commandForm({ text: `which ${name} --vhost ${h.vhost}`, responseUrl })),
    );

    expect(res.status).toBe(401);
    // The 401 is the end of that request: nothing of it can still be on its way.
    expect(h.proxy.requests.length).toBe(brokerCallsBefore);
    expect(h.slack.calls.length).toBe(slackCallsBefore);
    expect(h.proxy.requests.some((r) => r.url.includes('sig-'))).toBe(false);
  });
});

describe('an event that Slack did not sign', () => {
  it.each(forgeries('application/json'))('%s: 401, no broker call, no post', async (_what, forge) => {
    const brokerCallsBefore = h.proxy.requests.length;
    const envelope = mentionEnvelope({
      text: `<@${h.slack.botUserId}> which sig-event --vhost ${h.vhost}`,
      botUserId: h.slack.botUserId,
    });
    const res = await h.post('/slack/events', forge(JSON.stringify(envelope)));
    expect(res.status).toBe(401);
    expect(h.proxy.requests.length).toBe(brokerCallsBefore);
    expect(h.slack.posts()).toHaveLength(0);
  });
});

describe('a correctly signed request, for contrast', () => {
  it('is answered, so the refusals above are not a broken pipeline', async () => {
    const { response, responseUrl } = await h.command(`which orders.audit --vhost ${h.vhost}`);
    expect(response.status).toBe(200);
    const answer = await h.answerTo(responseUrl);
    expect(renderedText(answer.args)).toMatch(/In force:\* `audit-retention`/);
    expect(h.proxy.requests.some((r) => r.url.includes('sig-'))).toBe(false);
    expect(h.slack.responsesTo(responseUrl)).toHaveLength(1);
    expect(h.slack.rejections()).toEqual([]);
  });

  it('answers Slack’s url_verification challenge only when signed', async () => {
    const body = JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 'x' });
    const ok = await h.post('/slack/events', signed(h.signingSecret, body, 'application/json'));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ challenge: 'c-123' });
    const forged = await h.post('/slack/events', signed('wrong', body, 'application/json'));
    expect(forged.status).toBe(401);
  });
});
