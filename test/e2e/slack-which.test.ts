import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mentionEnvelope, renderedText } from '../support/harness.ts';
import { type ProcessHarness, startProcessHarness } from '../support/processHarness.ts';

/**
 * `/rmq which` against the real broker holding the policies lab, as Slack calls it: a signed
 * command, an immediate ack, the answer at the response URL, accepted by the fake Slack.
 */

let h: ProcessHarness;

beforeAll(async () => {
  h = await startProcessHarness({ withDownEnvironment: true });
});
afterAll(async () => {
  await h?.stop();
});
afterEach(() => {
  expect(h.slack.rejections()).toEqual([]);
});

describe('the lab’s cases', () => {
  const cases: { case: string; ask: string; audience: string; shows: RegExp[]; hides?: RegExp[] }[] = [
    {
      case: 'in force',
      ask: 'which orders.audit',
      audience: 'in_channel',
      shows: [
        /\*In force:\* `audit-retention` · priority 10/,
        /`audit-fallback` · priority 1 — lower priority than the one in force/,
      ],
      hides: [/did not report/],
    },
    {
      case: 'operator ceiling',
      ask: 'which orders.processing',
      audience: 'in_channel',
      shows: [
        /the quorum queue `orders.processing`/,
        /\*In force:\* `audit-fallback`/,
        /\*Operator policy:\* `orders-ceiling`/,
        /for limits both set, the stricter value holds/,
        /`message-ttl` = `600000` _\(both: the stricter value\)_/,
      ],
    },
    {
      case: 'stream governed by nothing',
      ask: 'which orders.events',
      audience: 'in_channel',
      shows: [
        /the stream `orders.events`/,
        /\*Nothing governs this object:\*/,
        /sets a key a stream refuses/,
      ],
      hides: [/\*In force:\*/],
    },
    {
      case: 'unanchored',
      ask: 'which retry.orders.dlq',
      audience: 'in_channel',
      shows: [/\*In force:\* `orders-cap`/, /unanchored: it matches every name that contains it/],
    },
    {
      case: 'tie',
      ask: 'which billing.invoices',
      audience: 'in_channel',
      shows: [/:warning: \*Ambiguous:\* `billing-a`, `billing-b` share priority 5/],
    },
    {
      case: 'exchange',
      ask: 'which orders.topic --kind exchange',
      audience: 'in_channel',
      shows: [/the exchange `orders.topic`/, /\*In force:\* `orders-ae`/],
    },
    {
      case: 'not reported',
      ask: 'which orders.new',
      audience: 'in_channel',
      shows: [
        /The broker did not report which policy is in force on this object\* \(it does not exist\)/,
        /not a statement about which one applies/,
        /1\. `audit-fallback`/,
      ],
      hides: [/\*In force:\*/],
    },
    {
      case: 'not asked',
      ask: 'which orders.audit --env down',
      audience: 'in_channel',
      shows: [/Could not ask the broker/, /Nothing is claimed about this object/],
      hides: [/In force|Matches|Nothing governs/],
    },
    {
      case: 'usage for an unknown command',
      ask: 'whihc orders.audit',
      audience: 'ephemeral',
      shows: [/I don't know the command `whihc`/, /\/rmq which NAME/],
    },
    {
      case: 'a refused flag',
      ask: 'which orders.audit --kind topic',
      audience: 'ephemeral',
      shows: [/:warning:/, /--kind/],
      hides: [/Error:|at .*\.ts:\d+/],
    },
  ];

  it.each(cases)('$case: /rmq $ask', async (c) => {
    const { response, responseUrl } = await h.command(`${c.ask} --vhost ${h.vhost}`);
    expect(response.status).toBe(200);
    const answer = await h.answerTo(responseUrl);
    expect(answer.args.response_type).toBe(c.audience);
    expect(typeof answer.args.text).toBe('string');
    expect(String(answer.args.text).length).toBeGreaterThan(0);
    const shown = renderedText(answer.args).replaceAll(h.vhost, 'VHOST');
    for (const re of c.shows) expect(shown).toMatch(re);
    for (const re of c.hides ?? []) expect(shown).not.toMatch(re);
    expect(h.slack.responsesTo(responseUrl)).toHaveLength(1);
  });

  it('answers /rmq alone and /rmq help with usage, to the asker', async () => {
    for (const text of ['', 'help']) {
      const { responseUrl } = await h.command(text);
      const answer = await h.answerTo(responseUrl);
      expect(answer.args.response_type).toBe('ephemeral');
      expect(renderedText(answer.args)).toMatch(
        /\/rmq which NAME \[--kind classic\|quorum\|stream\|exchange\]/,
      );
    }
  });

  it('answers the same question asked by mention with the same blocks', async () => {
    const { responseUrl } = await h.command(`which orders.processing --vhost ${h.vhost}`);
    const byCommand = await h.answerTo(responseUrl);
    const threadTs = '1700000000.000301';
    await h.mention(
      mentionEnvelope({
        text: `<@${h.slack.botUserId}> which orders.processing --vhost ${h.vhost}`,
        threadTs,
        botUserId: h.slack.botUserId,
      }),
    );
    const byMention = await h.slack.waitForCall(
      (c) => c.method === 'chat.postMessage' && c.args.thread_ts === threadTs,
    );
    // The same blocks but for the second the statistics were read at (the two asks may straddle one).
    const timeless = (blocks: unknown) => JSON.stringify(blocks).replace(/\d\d:\d\d:\d\d UTC/g, '<clock>');
    expect(timeless(byMention.args.blocks)).toEqual(timeless(byCommand.args.blocks));
  });
});
