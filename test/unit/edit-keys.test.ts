/** `edit --set KEY=JSON --unset KEY`: the words read, the patch applied to the current definition. */
import { describe, expect, it } from 'vitest';
import { parsePreview } from '../../src/commands/preview/preview.ts';
import type { Policy } from '../../src/policy/types.ts';
import { validate } from '../../src/policy/validate/validate.ts';

const current: Policy = {
  vhost: '/',
  name: 'limits',
  pattern: '^orders\\.',
  applyTo: 'queues',
  priority: 1,
  definition: { 'max-length': 1000, 'message-ttl': 60000 },
};

const edit = (fields: Parameters<typeof validate>[0]['fields']) =>
  validate({
    action: 'edit',
    layer: 'user',
    vhost: '/',
    name: 'limits',
    fields,
    existing: { user: [current], operator: [] },
    version: { major: 4, minor: 0, patch: 5 },
  });

describe('edit --set/--unset', () => {
  it('reads every --set as KEY=JSON and every --unset, in order, repeatable', () => {
    const input = parsePreview([
      'edit',
      'limits',
      '--set',
      'max-length=5',
      '--set=dead-letter-exchange="dlx"',
      '--set',
      'x={"a":[1]}',
      '--unset',
      'message-ttl',
      '--unset=expires',
    ]);
    expect(input.fields).toEqual({
      definitionPatch: {
        set: { 'max-length': 5, 'dead-letter-exchange': 'dlx', x: { a: [1] } },
        unset: ['message-ttl', 'expires'],
      },
    });
  });

  it.each([
    [['--set', 'max-length'], /--set takes KEY=JSON/],
    [['--set', '=5'], /--set takes KEY=JSON/],
    [
      ['--set', 'dead-letter-exchange=dlx'],
      /not JSON \(a string needs its double quotes: dead-letter-exchange="dlx"\)/,
    ],
    [['--set', 'a=1', '--set', 'a=2'], /--set a is given twice/],
    [['--set', 'a=1', '--unset', 'a'], /both name a/],
    [['--unset', ''], /--unset needs the key/],
    [['--set', 'a=1', '--definition', '{"b":2}'], /without --definition/],
    [['--unset'], /--unset needs a value/],
  ])('%j is refused with what to fix', (words, message) => {
    expect(() => parsePreview(['edit', 'limits', ...words])).toThrow(message);
  });

  it('is for an edit only', () => {
    expect(() => parsePreview(['create', 'x', '--pattern', '^x', '--set', 'a=1'])).toThrow(
      /create takes no --set/,
    );
    expect(() => parsePreview(['delete', 'x', '--unset', 'a'])).toThrow(/delete takes no --set or --unset/);
  });

  it('keeps the keys it does not name and every other field', () => {
    const v = edit({
      definitionPatch: { set: { 'max-length': 5, overflow: 'reject-publish' }, unset: ['message-ttl'] },
    });
    expect(v.refusals).toEqual([]);
    expect(v.proposed).toEqual({ ...current, definition: { 'max-length': 5, overflow: 'reject-publish' } });
  });

  it('refuses to unset a key the definition does not have, naming the keys it has', () => {
    const v = edit({ definitionPatch: { set: {}, unset: ['expires'] } });
    expect(v.refusals).toEqual([
      expect.objectContaining({
        code: 'unset-missing-key',
        key: 'expires',
        message: expect.stringContaining('it has max-length, message-ttl'),
      }),
    ]);
  });

  it.each(['constructor', '__proto__', 'toString'])(
    'refuses to unset %s, a name every object inherits but no definition has',
    (key) => {
      const v = edit({ definitionPatch: { set: {}, unset: [key] } });
      expect(v.refusals).toEqual([expect.objectContaining({ code: 'unset-missing-key', key })]);
    },
  );

  it('checks the patched definition as any other: an empty one and a bad value are refused', () => {
    expect(edit({ definitionPatch: { set: {}, unset: ['max-length', 'message-ttl'] } }).refusals).toEqual([
      expect.objectContaining({ code: 'definition-empty' }),
    ]);
    expect(edit({ definitionPatch: { set: { 'max-length': 'many' }, unset: [] } }).ok).toBe(false);
  });
});
