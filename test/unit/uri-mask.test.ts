import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskUri, maskUris } from '../../src/core/uri.ts';

/** A broker URI as it may be shown anywhere: src/core/uri.ts. */

describe('maskUri', () => {
  it.each([
    ['amqp://fed:s3cret@upstream.example:5672/prod', 'amqp://fed:***@upstream.example:5672/prod'],
    ['amqps://fed:s3cret@upstream.example/%2F', 'amqps://fed:***@upstream.example/%2F'],
    ['amqp://fed@upstream.example', 'amqp://fed@upstream.example'],
    ['amqp://upstream.example:5672/v', 'amqp://upstream.example:5672/v'],
    ['amqp://', 'amqp://'],
    ['amqp://u:p%40ss@h/v', 'amqp://u:***@h/v'],
    // A password written without percent-encoding: a slash or an at sign inside it.
    ['amqp://u:pa/ss@h/v', 'amqp://u:***@h/v'],
    ['amqp://u:p@ss@h/v', 'amqp://u:***@h/v'],
    ['amqp://u:@h', 'amqp://u:***@h'],
    ['amqp://u:p#w?d@h/v', 'amqp://u:***@h/v'],
    // A port, then a path holding an at sign: hidden as if it were a password (the safe reading).
    ['amqp://h:5672/v@x', 'amqp://h:***@x'],
    ['amqp://h:5672/v', 'amqp://h:5672/v'],
    ['amqp://u@h:5672/v', 'amqp://u@h:5672/v'],
    [
      'amqps://u:p@h?cacertfile=/c.pem&password=pw&verify=verify_peer',
      'amqps://u:***@h?cacertfile=/c.pem&password=***&verify=verify_peer',
    ],
    ['not a uri with u:p@h', '<unreadable URI>'],
  ])('%s -> %s', (uri, shown) => {
    expect(maskUri(uri)).toBe(shown);
  });

  it('never shows the password, whatever it holds', () => {
    const password = fc.string({ minLength: 4, maxLength: 30 }).filter((p) => p.trim() === p);
    fc.assert(
      fc.property(
        fc.constantFrom('amqp', 'amqps'),
        fc.stringMatching(/^[a-z]{1,8}$/),
        password,
        (scheme, user, pw) => {
          const uri = `${scheme}://${user}:${pw}@broker.example:5671/v`;
          const shown = maskUri(uri);
          expect(shown).not.toContain(pw);
          expect(shown.startsWith(`${scheme}://${user}:***@`)).toBe(true);
        },
      ),
    );
  });
});

describe('maskUris', () => {
  it('masks every URI of a federation upstream or a shovel, at any depth, and nothing else', () => {
    const shovel = {
      'src-uri': 'amqp://a:pw1@h1',
      'dest-uri': ['amqp://b:pw2@h2', 'amqps://b:pw3@h3'],
      'src-queue': 'u:pw4@q',
      nested: { uri: 'amqp://c:pw5@h4' },
    };
    expect(maskUris(shovel)).toEqual({
      'src-uri': 'amqp://a:***@h1',
      'dest-uri': ['amqp://b:***@h2', 'amqps://b:***@h3'],
      'src-queue': 'u:pw4@q',
      nested: { uri: 'amqp://c:***@h4' },
    });
  });
});
