/** src/slack/views/errors.ts refusalView: an InputError's sentence, its hint and its usage line, each shown as what it is. */
import { describe, expect, it } from 'vitest';
import { parsePreview } from '../../src/commands/preview/preview.ts';
import { usageOf } from '../../src/commands/registry.ts';
import { InputError } from '../../src/core/errors.ts';
import { codeBlock } from '../../src/slack/escape.ts';
import { refusalView } from '../../src/slack/views/errors.ts';
import { checkMessage } from '../support/fakeSlack.ts';

const texts = (m: { blocks: unknown[] }) => m.blocks.map((b) => (b as { text: { text: string } }).text.text);

function refusalOf(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('not refused');
}

describe('refusalView', () => {
  it('shows the usage line after the prefix typed, under "Usage:"', () => {
    const m = refusalView(new InputError('which needs a name.', { usage: usageOf('which') }), '/ops');
    expect(texts(m)).toEqual([
      ':warning: which needs a name.',
      `Usage:\n${codeBlock(`/ops ${usageOf('which')}`)}`,
    ]);
    expect(checkMessage({ ...m })).toBeNull();
  });

  it('shows a one-line hint as prose and a hint of several lines as they are', () => {
    expect(texts(refusalView(new InputError('No.', { hint: 'Try another name.' }), '/rmq'))[1]).toBe(
      'Try another name.',
    );
    const lines = texts(
      refusalView(new InputError('Two readings.', { hint: 'read as: a\nor as: b' }), '/rmq'),
    );
    expect(lines[1]).toBe(codeBlock('read as: a\nor as: b'));
    expect(lines).toHaveLength(2);
  });

  it('shows both when there are both, the hint first', () => {
    const m = refusalView(new InputError('Bad.', { hint: 'Do this.', usage: 'which NAME' }), '/rmq');
    expect(texts(m).slice(1)).toEqual(['Do this.', `Usage:\n${codeBlock('/rmq which NAME')}`]);
  });

  it("names a change request's action as typed in Slack, with the request's own usage line", () => {
    const usage = usageOf('edit');
    const err = refusalOf(() => parsePreview(['edit'], {}, { fieldsOptional: true, usage }));
    expect(err.message).toBe('edit needs the name of a policy.');
    expect(err.usage).toBe(usage);
    const asPreview = refusalOf(() => parsePreview(['edit']));
    expect(asPreview.message).toBe('preview edit needs the name of a policy.');
    expect(asPreview.usage).toBe(usageOf('preview'));
  });
});
