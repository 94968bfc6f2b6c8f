import { describe, expect, it } from 'vitest';
import type { FilePolicy } from '../../src/definitions/read.ts';
import { changesOf } from '../../src/plan/changes.ts';
import { V310 } from '../support/policies.ts';

/**
 * src/plan/changes.ts: a file's policies against the broker's, validated as `preview` validates one
 * change, with what the plan knows of the broker's plugins (the broker's own refusals:
 * test/e2e/cli-validation.test.ts).
 */

const fed: FilePolicy = {
  layer: 'user',
  at: 'document 1',
  policy: {
    vhost: 'v',
    name: 'federation-policy',
    pattern: '^fed\\.',
    applyTo: 'exchanges',
    priority: 0,
    definition: { 'federation-upstream': 'origin' },
  },
};
const none = { user: [], operator: [] };

describe('changesOf', () => {
  it("a plugin's key: refused where the plugin is off, a note where that is not known, a change where it is on", () => {
    const off = changesOf([fed], { ...none, plugins: new Set() }, V310, 'v', false);
    expect(off.changes).toEqual([]);
    expect(off.problems).toEqual([
      'The policy "federation-policy" of vhost "v" (document 1): federation-upstream is accepted only while the federation plugin is enabled on the broker, and RabbitMQ 3.10.8 here has not enabled it: the broker refuses the definition. Enable rabbitmq_federation there, or leave federation-upstream out.',
    ]);
    const unknown = changesOf([fed], none, V310, 'v', false);
    expect(unknown.problems).toEqual([]);
    expect(unknown.notes).toEqual([
      'The policy "federation-policy" of vhost "v" (document 1): federation-upstream is accepted only while the federation plugin is enabled on the broker.',
    ]);
    const on = changesOf([fed], { ...none, plugins: new Set(['federation']) }, V310, 'v', false);
    expect(on.changes.map((c) => c.name)).toEqual(['federation-policy']);
    expect(on.notes).toBeUndefined();
  });

  it('a policy the broker already holds as written is not validated again: unchanged', () => {
    const held = changesOf([fed], { user: [fed.policy], operator: [], plugins: new Set() }, V310, 'v', false);
    expect(held).toEqual({ changes: [], unchanged: 1, problems: [] });
  });
});
