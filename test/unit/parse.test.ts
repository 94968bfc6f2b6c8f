import { describe, expect, it } from 'vitest';
import { parseWhich } from '../../src/commands/parse.ts';

describe('parseWhich', () => {
  it('reads the name and flags, with the vhost defaulting to /', () => {
    expect(parseWhich(['orders.audit'])).toMatchObject({ name: 'orders.audit', vhost: '/', kind: undefined });
    expect(parseWhich(['q', '--kind=stream', '--vhost', 'v1'])).toMatchObject({
      name: 'q',
      kind: 'stream',
      vhost: 'v1',
    });
  });

  it.each([
    [[], /needs the name/],
    [['a', 'b'], /one name/],
    [['a', '--kind', 'topic'], /--kind/],
    [['a', '--nope'], /Unknown flag --nope/],
    [['a', '--vhost'], /needs a value/],
    [['a', '--vhost', 'x', '--vhost', 'y'], /twice/],
    [['a', '--vhost', ''], /vhost/],
    [['é'.repeat(128)], /256 bytes/],
  ])('%j is refused with what to fix', (words, message) => {
    expect(() => parseWhich(words)).toThrow(message);
  });

  it('takes exactly 255 bytes', () => {
    expect(parseWhich(['a'.repeat(255)]).name).toHaveLength(255);
  });
});
