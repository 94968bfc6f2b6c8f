import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, waitFor } from '../support/broker.ts';
import { mentionEnvelope, renderedText } from '../support/harness.ts';
import { type ProcessHarness, startProcessHarness } from '../support/processHarness.ts';

/**
 * Names from users and the broker reach Slack as characters: a queue named `<!channel>` pings
 * nobody, `<https://evil|click>` links nowhere, and the longest name RabbitMQ accepts, or 500
 * matching policies, still make an answer Slack takes.
 */

let h: ProcessHarness;
const admin = adminClient();

/** 253 bytes of characters Slack would otherwise parse, then two more: exactly 255 bytes. */
const LONGEST = `${'<!channel>&'.repeat(23)}zz`;
const HOSTILE_POLICY = '<!here> & <@U0ADMIN> <https://evil.example|policy>';
const HOSTILE = [
  '<!channel>',
  '<!here|here>',
  '<https://evil.example|click>',
  '<@U0ADMIN>',
  'a&b *bold* _it_ ~s~ `tick`',
  LONGEST,
];

/** What Slack puts in the command text for what the user typed: `&`, `<`, `>` as entities. */
const typed = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** Shell-quoted for the bot's word splitting. */
const quoted = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Anything Slack would turn into a mention or a link: a raw `<` or `>` anywhere in what is shown. */
function expectInert(shown: string): void {
  expect(shown).not.toMatch(/<|>/);
  expect(shown).not.toMatch(/&(?!amp;|lt;|gt;)/);
}

beforeAll(async () => {
  h = await startProcessHarness();
  expect(Buffer.byteLength(LONGEST)).toBe(255);
  for (const name of HOSTILE) await admin.putQueue(h.vhost, name, { kind: 'classic' });
  await admin.putPolicy('user', {
    vhost: h.vhost,
    name: HOSTILE_POLICY,
    pattern: '^[<a]',
    applyTo: 'queues',
    priority: 7,
    definition: { 'max-length': 10, 'dead-letter-exchange': '<!everyone>' },
  });
  // 500 policies matching one queue, with long names.
  await admin.putQueue(h.vhost, 'bulk.q', { kind: 'classic' });
  const names = Array.from(
    { length: 500 },
    (_, i) => `bulk-${String(i).padStart(3, '0')}-${'<&>'.repeat(30)}`,
  );
  for (let i = 0; i < names.length; i += 25) {
    await Promise.all(
      names.slice(i, i + 25).map((name, j) =>
        admin.putPolicy('user', {
          vhost: h.vhost,
          name,
          pattern: '^bulk\\.',
          applyTo: 'queues',
          priority: i + j,
          definition: { 'max-length': i + j },
        }),
      ),
    );
  }
  await waitFor(
    async () => {
      // The broker's statistics trail a policy change: wait until they name the policies just made.
      for (const name of HOSTILE) {
        if ((await admin.getQueue(h.vhost, name))?.policy !== HOSTILE_POLICY) return false;
      }
      return (await admin.getQueue(h.vhost, 'bulk.q'))?.policy?.startsWith('bulk-499-') ?? false;
    },
    { deadlineMs: 60_000, intervalMs: 500, what: 'the broker to report the hostile queues’ policies' },
  );
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await admin.close();
});
afterEach(() => {
  expect(h.slack.rejections()).toEqual([]);
});

describe('hostile queue names', () => {
  it.each(
    HOSTILE.map((name) => [
      name.length > 40 ? `${name.slice(0, 40)}… (${Buffer.byteLength(name)} bytes)` : name,
      name,
    ]),
  )('%s is shown as those characters, pinging and linking nobody', async (_label, name) => {
    const { responseUrl } = await h.command(`which ${quoted(typed(name))} --vhost ${h.vhost}`);
    const answer = await h.answerTo(responseUrl);
    const shown = renderedText(answer.args);
    expectInert(shown);
    expect(answer.args.response_type).toBe('in_channel');
    // The broker found the queue by that exact name: the bot read what the user typed.
    expect(shown).toMatch(/\*In force:\*/);
    const escaped = name
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replaceAll('`', '\u02cb');
    expect(shown).toContain(escaped);
    // The policy's hostile name and value are inert too.
    expect(shown).toContain('&lt;!here&gt; &amp; &lt;@U0ADMIN&gt;');
    expect(shown).toContain('&lt;!everyone&gt;');
  });

  it('as typed with Slack’s own mention markup (@channel arrives as <!channel>)', async () => {
    const { responseUrl } = await h.command(`which <!channel> --vhost ${h.vhost}`);
    const shown = renderedText((await h.answerTo(responseUrl)).args);
    expectInert(shown);
    expect(shown).toContain('`&lt;!channel&gt;`');
  });

  it('in a mention, answered in the thread, inert', async () => {
    const threadTs = '1700000000.000777';
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which ${typed('<https://evil.example|click>')} --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    const post = await h.slack.waitForCall(
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs,
    );
    const shown = renderedText(post.args);
    expectInert(shown);
    expect(shown).toContain('&lt;https://evil.example|click&gt;');
  });

  it('a user’s own words echoed back (an unknown command) are inert too', async () => {
    const { responseUrl } = await h.command('<!channel> hello');
    const shown = renderedText((await h.answerTo(responseUrl)).args);
    expectInert(shown);
    expect(shown).toContain('&lt;!channel&gt;');
  });

  it('a name one byte over 255 is refused before any pattern runs, with a sentence', async () => {
    const { responseUrl } = await h.command(`which ${quoted(typed(`${LONGEST}z`))} --vhost ${h.vhost}`);
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe('ephemeral');
    expect(renderedText(answer.args)).toMatch(/256 bytes.*at most 255 bytes/);
  });
});

describe('a long answer', () => {
  it('500 matching policies are summarised with "and N more", and Slack takes the message', async () => {
    const { responseUrl } = await h.command(`which bulk.q --vhost ${h.vhost}`);
    const answer = await h.answerTo(responseUrl);
    const shown = renderedText(answer.args);
    expect(shown).toMatch(/\*In force:\* `bulk-499-/);
    expect(shown).toMatch(/_…and (\d+) more_/);
    const more = Number(/_…and (\d+) more_/.exec(shown)?.[1]);
    const listed = (shown.match(/^• `bulk-/gm) ?? []).length;
    expect(listed + more).toBe(499);
    expectInert(shown);
  });
});
