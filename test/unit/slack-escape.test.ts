import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  code,
  codeBlock,
  decodeSlackText,
  escapeMrkdwn,
  fitRendered,
  prose,
  truncate,
} from '../../src/slack/escape.ts';
import { mentionText } from '../../src/slack/listeners/appMention.ts';
import { clampMrkdwn } from '../../src/slack/views/message.ts';

/** Outside entities, a rendered string must hold no `<`, `>` or bare `&`: nothing Slack would parse. */
function inert(s: string): boolean {
  return !/[<>]/.test(s) && !/&(?!amp;|lt;|gt;)/.test(s);
}

describe('escaping for mrkdwn', () => {
  it.each([
    ['<!channel>', '&lt;!channel&gt;'],
    ['<!here>', '&lt;!here&gt;'],
    ['<@U123>', '&lt;@U123&gt;'],
    ['<https://evil|click>', '&lt;https://evil|click&gt;'],
    ['a & b', 'a &amp; b'],
    ['&lt;', '&amp;lt;'],
    ['*bold* _it_ ~s~', '*bold* _it_ ~s~'],
  ])('escapeMrkdwn(%j) = %j', (input, expected) => {
    expect(escapeMrkdwn(input)).toBe(expected);
  });

  it('shows a name as code: mentions and links inert, a backtick cannot close the span', () => {
    expect(code('<!channel>')).toBe('`&lt;!channel&gt;`');
    expect(code('<https://evil|click>')).toBe('`&lt;https://evil|click&gt;`');
    expect(code('a`b')).toBe('`a\u02cbb`');
    expect(code('')).toBe('_(empty)_');
  });

  it('shows invisible and direction-changing characters instead of obeying them', () => {
    expect(code('a\nb')).toBe('`a\\nb`');
    expect(code('evil\u202Egnp.exe')).toBe('`evil\\u202egnp.exe`');
    expect(prose('x\u200by')).toBe('x\\u200by');
  });

  it('keeps code blocks closed', () => {
    expect(codeBlock('a ``` b <x>')).toBe('```\na \u02cb\u02cb\u02cb b &lt;x&gt;\n```');
  });

  it('never lets a user string through unescaped (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
        for (const out of [escapeMrkdwn(s), code(s), prose(s), codeBlock(s)]) expect(inert(out)).toBe(true);
        const c = code(s);
        if (s !== '') expect(c.match(/`/g)?.length).toBe(2);
      }),
    );
  });

  it('cuts rendered text without breaking an entity or leaving a code span open (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 60 }), { maxLength: 40 }),
        fc.integer({ min: 10, max: 400 }),
        (names, max) => {
          const text = names.map((n) => `• ${code(n)} and ${prose(n)}`).join('\n');
          const out = clampMrkdwn(text, max);
          expect(out.length).toBeLessThanOrEqual(Math.max(max, text.length <= max ? text.length : 0));
          expect(inert(out)).toBe(true);
          expect((out.match(/`/g)?.length ?? 0) % 2).toBe(0);
        },
      ),
    );
  });

  it('fits a rendering by cutting the raw string', () => {
    const out = fitRendered('&'.repeat(100), 50, code);
    expect(out.length).toBeLessThanOrEqual(50);
    expect(out).toMatch(/^`(&amp;)+…`$/);
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('😀😀😀', 4)).toBe('😀…');
  });
});

describe('reading what Slack sent', () => {
  it.each([
    ['which a&amp;b', 'which a&b'],
    ['which &lt;x&gt;', 'which <x>'],
    ['which &amp;lt;', 'which &lt;'],
    ['which <http://orders.com|orders.com>', 'which orders.com'],
    ['which <https://example.com>', 'which https://example.com'],
    ['which <mailto:a@b.c|a@b.c>', 'which a@b.c'],
    ['which <#C123|general>', 'which #general'],
    ['which <!channel>', 'which <!channel>'],
  ])('decodeSlackText(%j) = %j', (input, expected) => {
    expect(decodeSlackText(input)).toBe(expected);
  });

  it.each([
    ['<@U0BOT> which orders.audit', 'which orders.audit'],
    ['<@U0BOT|rmq> which orders.audit --vhost /', 'which orders.audit --vhost /'],
    ['hey <@U0BOT> which x', 'which x'],
    ['which orders.audit <@U0BOT>', 'which orders.audit'],
    ['<@U0BOT> which <@U0OTHER>', 'which <@U0OTHER>'],
  ])('mentionText(%j) = %j', (input, expected) => {
    expect(mentionText(input, 'U0BOT')).toBe(expected);
  });
});
