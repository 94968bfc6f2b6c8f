import { describe, expect, it } from 'vitest';
import { auditObjects, diffDefinition, policyDiff } from '../../src/policy/diff.ts';
import type { ObjectOutcome } from '../../src/policy/simulate/simulate.ts';
import type { Policy } from '../../src/policy/types.ts';

/** src/policy/diff.ts: a change field by field for the audit, and the objects it moves. */

const ttl: Policy = {
  vhost: '/',
  name: 'ttl',
  pattern: '^orders\\.',
  applyTo: 'queues',
  priority: 1,
  definition: { 'message-ttl': 1000, 'max-length': 10 },
};

describe('policyDiff', () => {
  it('an edit shows exactly the fields and keys it replaces', () => {
    const after = { ...ttl, priority: 2, definition: { 'message-ttl': 1000, expires: 60_000 } };
    expect(policyDiff({ action: 'edit', layer: 'user', before: ttl, after })).toEqual({
      action: 'edit',
      layer: 'user',
      vhost: '/',
      name: 'ttl',
      fields: { priority: { before: 1, after: 2 } },
      definition: {
        expires: { before: null, after: 60_000 },
        'max-length': { before: 10, after: null },
      },
      unchanged: false,
    });
  });

  it('a delete shows everything the policy was, a create everything it is', () => {
    const gone = policyDiff({ action: 'delete', layer: 'operator', before: ttl, after: null });
    expect(gone.fields).toEqual({
      pattern: { before: '^orders\\.', after: null },
      applyTo: { before: 'queues', after: null },
      priority: { before: 1, after: null },
    });
    expect(Object.keys(gone.definition)).toEqual(['max-length', 'message-ttl']);
    const made = policyDiff({ action: 'create', layer: 'user', before: null, after: ttl });
    expect(made.name).toBe('ttl');
    expect(made.definition['message-ttl']).toEqual({ before: null, after: 1000 });
  });

  it('an edit that writes the same policy again, keys in another order, is unchanged', () => {
    const again = { ...ttl, definition: { 'max-length': 10, 'message-ttl': 1000 } };
    expect(policyDiff({ action: 'edit', layer: 'user', before: ttl, after: again }).unchanged).toBe(true);
  });
});

describe('diffDefinition', () => {
  it('lists differing keys in sorted order, equal values by JSON', () => {
    expect(diffDefinition({ b: [1, 2], a: 1, c: 'x' }, { c: 'y', b: [1, 2] })).toEqual({
      a: { before: 1, after: null },
      c: { before: 'x', after: 'y' },
    });
    expect(diffDefinition(undefined, undefined)).toEqual({});
  });
});

describe('auditObjects', () => {
  const outcome = (name: string, o: Partial<ObjectOutcome>): ObjectOutcome => ({
    name,
    kind: 'classic',
    before: { policy: 'ttl' },
    after: { policy: 'ttl' },
    unchangedLayer: { layer: 'operator', policy: null, source: 'broker' },
    heldBy: {},
    inUse: { before: {}, after: {} },
    risks: [],
    lost: {},
    gained: {},
    changed: {},
    ...o,
  });

  it('keeps the objects the change moves, and only those', () => {
    const lines = auditObjects([
      outcome('untouched', {}),
      outcome('moved', { after: { policy: 'other' } }),
      outcome('tied', { after: { policy: null, candidates: ['a', 'b'] } }),
      outcome('lost', { lost: { 'message-ttl': 1000 } }),
      outcome('changed', { changed: { 'max-length': [10, 20] } }),
    ]);
    expect(lines.map((l) => l.name)).toEqual(['moved', 'tied', 'lost', 'changed']);
    expect(lines[1]?.candidates).toEqual(['a', 'b']);
    expect(lines[3]?.changed).toEqual({ 'max-length': { before: 10, after: 20 } });
  });
});
