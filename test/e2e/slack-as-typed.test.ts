import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, mentionEnvelope, renderedText, startHarness } from '../support/harness.ts';

/**
 * Issue 14, end to end: signed requests, the real broker holding the lab, the local Slack fake.
 * Words arrive as typed in Slack (backslashes, JSON, curly quotes); a text read two ways is
 * refused with both readings; a channel's defaults (`/rmq use`) hold in it and its threads and
 * every answer says which vhost and environment it answered for; a typo gets "did you mean".
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});
afterEach(() => {
  expect(h.slack.rejections()).toEqual([]);
});

async function ask(text: string, channelId = 'C0TYPED'): Promise<{ text: string; responseType: unknown }> {
  const { response, responseUrl } = await h.command(text, { channelId });
  expect(response.status).toBe(200);
  const answer = await h.answerTo(responseUrl);
  return { text: renderedText(answer.args), responseType: answer.args.response_type };
}

describe('words as typed in Slack', () => {
  it('a pattern keeps its backslash and a JSON definition its spaces and quotes, shown exactly as they would be written', async () => {
    const a = await ask(
      `preview create typed-14 --pattern ^orders\\.audit$ --priority 50 --definition {"max-length": 7} --vhost ${h.vhost}`,
    );
    expect(a.responseType).toBe('in_channel');
    expect(a.text).toContain('pattern     ^orders\\.audit$\n');
    expect(a.text).toContain('definition  {"max-length":7}\n');
    // The preview itself: only orders.audit is taken over (ordersXaudit would not be).
    expect(a.text).toMatch(/`orders\.audit`/);
  });

  it('curly quotes from a phone are folded in --definition, and the answer says so', async () => {
    const a = await ask(
      `preview create typed-14 --pattern ^orders\\.audit$ --priority 50 --definition {“max-length”: 7} --vhost ${h.vhost}`,
    );
    expect(a.text).toContain('definition  {"max-length":7}\n');
    expect(a.text).toContain('typographic quotes (“ ”) in --definition were read as straight quotes');
  });

  it('a text that reads two ways is refused to the asker with both readings, and nothing is asked', async () => {
    const before = h.proxy.requests.length;
    const a = await ask(`preview create typed-14 --pattern [a b] --definition {} --vhost ${h.vhost}`);
    expect(a.responseType).toBe('ephemeral');
    expect(a.text).toMatch(/can be read two ways/);
    expect(a.text).toContain('read as:  ‹[a b]›');
    expect(a.text).toContain('or as:    ‹[a› ‹b]›');
    expect(h.proxy.requests.length).toBe(before);
  });
});

describe('a channel’s defaults', () => {
  const channel = 'C0DEFAULTS';

  it('use sets them for the channel, which and preview then need no flags, and each answer names vhost and environment', async () => {
    const none = await ask('use', channel);
    expect(none.responseType).toBe('ephemeral');
    expect(none.text).toMatch(/This channel has no defaults/);

    const set = await ask(`use --env lab --vhost ${h.vhost}`, channel);
    expect(set.responseType).toBe('in_channel');
    expect(set.text).toContain(`vhost \`${h.vhost}\` in environment \`lab\``);
    expect(await h.redis.get(`${h.keyPrefix}:channel:${channel}:defaults`)).toContain(h.vhost);

    const shown = await ask('use', channel);
    expect(shown.text).toContain(`This channel's defaults: vhost \`${h.vhost}\` in environment \`lab\``);
    expect(shown.text).toContain('<@U0ONCALL>');

    const which = await ask('which orders.audit', channel);
    expect(which.text).toMatch(/\*In force:\* `audit-retention`/);
    expect(which.text).toContain(
      `Answered for vhost \`${h.vhost}\` in environment \`lab\` · vhost and environment from this channel's defaults`,
    );

    const listed = await ask('policies', channel);
    expect(listed.text).toMatch(/audit-retention/);
    expect(listed.text).toContain(`Answered for vhost \`${h.vhost}\` in environment \`lab\``);

    const preview = await ask('preview delete audit-retention', channel);
    expect(preview.text).toMatch(/orders\.audit/);
    expect(preview.text).toContain(`Answered for vhost \`${h.vhost}\``);
  });

  it('hold in the channel’s threads, through a mention', async () => {
    const threadTs = '1700001414.000100';
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.audit`,
        channel,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    const post = await h.slack.waitForCall(
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs,
    );
    expect(renderedText(post.args)).toMatch(/\*In force:\* `audit-retention`/);
    expect(renderedText(post.args)).toContain(`Answered for vhost \`${h.vhost}\` in environment \`lab\``);
  });

  it('a flag says otherwise; another channel has none', async () => {
    const flagged = await ask('which orders.audit --vhost /', channel);
    expect(flagged.text).toContain(
      "Answered for vhost `/` in environment `lab` · environment from this channel's defaults",
    );
    const elsewhere = await ask('which orders.audit', 'C0ELSEWHERE');
    expect(elsewhere.text).toContain('Answered for vhost `/` in environment `lab`');
    expect(elsewhere.text).not.toContain("this channel's defaults");
  });

  it('an unknown environment or vhost is refused, the vhost with the close names', async () => {
    const env = await ask('use --env nowhere', channel);
    expect(env.responseType).toBe('ephemeral');
    expect(env.text).toMatch(/Unknown environment "nowhere"/);
    const typo = `${h.vhost.slice(0, 9)}${h.vhost.slice(10)}`;
    const vhost = await ask(`use --vhost ${typo}`, channel);
    expect(vhost.responseType).toBe('ephemeral');
    expect(vhost.text).toContain(`No vhost "${typo}" in environment lab; did you mean "${h.vhost}"`);
    // Still the defaults set before.
    expect(await h.redis.get(`${h.keyPrefix}:channel:${channel}:defaults`)).toContain(`"vhost":"${h.vhost}"`);
  });

  it('use --clear removes them', async () => {
    const cleared = await ask('use --clear', channel);
    expect(cleared.responseType).toBe('in_channel');
    expect(cleared.text).toMatch(/defaults were removed/);
    expect(await h.redis.get(`${h.keyPrefix}:channel:${channel}:defaults`)).toBeNull();
    const which = await ask('which orders.audit', channel);
    expect(which.text).toContain('Answered for vhost `/`');
  });
});

describe('did you mean (the real broker)', () => {
  it('a missing object names the closest existing queues and exchanges above the answer', async () => {
    const a = await ask(`which orders.adit --vhost ${h.vhost}`);
    expect(a.text).toContain('No queue or exchange `orders.adit`; did you mean `orders.audit`?');
    expect(a.text.indexOf('did you mean')).toBeLessThan(a.text.indexOf('Which policy governs'));
    const none = await ask(`which zzzzzzzz --vhost ${h.vhost}`);
    expect(none.text).not.toContain('did you mean');
  });

  it('a policy name that names nothing, and a vhost that does not exist', async () => {
    const policy = await ask(`preview delete audit-retentoin --vhost ${h.vhost}`);
    expect(policy.responseType).toBe('ephemeral');
    expect(policy.text).toContain('No policy `audit-retentoin`; did you mean `audit-retention`?');
    // A vhost that does not exist is refused (issue 9), naming the close ones.
    const typo = `${h.vhost}x`;
    const vhost = await ask(`which orders.audit --vhost ${typo}`);
    expect(vhost.responseType).toBe('ephemeral');
    expect(vhost.text).toContain(`Vhost "${typo}" does not exist; did you mean "${h.vhost}"?`);
  });
});
