import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DigestFinding, diffFindings, findingId } from '../../src/policy/lint/lintDigest.ts';

const f = (over: Partial<DigestFinding> = {}): DigestFinding => ({
  kind: 'tie',
  severity: 'error',
  policy: 'billing-a',
  operator: false,
  objects: ['billing.invoices'],
  why: 'a sentence',
  ...over,
});

describe('the lint digest: new, fixed and the rest since the last digest', () => {
  it('a finding is the same finding when its kind, layer, policy and objects are, whatever its sentence says now', () => {
    expect(findingId(f({ why: 'other words', severity: 'warning' }))).toBe(findingId(f()));
    expect(findingId(f({ objects: ['b', 'a'] }))).toBe(findingId(f({ objects: ['a', 'b'] })));
    expect(findingId(f({ operator: true }))).not.toBe(findingId(f()));
    expect(findingId(f({ kind: 'shadowed' }))).not.toBe(findingId(f()));
    expect(findingId(f({ policy: 'billing-b' }))).not.toBe(findingId(f()));
    expect(findingId(f({ objects: ['billing.invoices', 'x'] }))).not.toBe(findingId(f()));
  });

  it('new first (the worst first), then fixed, then the rest', () => {
    const kept = f({
      kind: 'unanchored',
      severity: 'warning',
      policy: 'orders-cap',
      objects: ['retry.orders.dlq'],
    });
    const gone = f({ kind: 'missing-target', policy: 'audit-retention', objects: ['audit.q'] });
    const newInfo = f({ kind: 'shadowed', severity: 'info', policy: 'old', objects: ['q'] });
    const newError = f();
    const d = diffFindings([kept, gone], [newInfo, { ...kept, why: 'reworded' }, newError]);
    expect(d.new).toEqual([newError, newInfo]);
    expect(d.fixed).toEqual([gone]);
    expect(d.rest).toEqual([{ ...kept, why: 'reworded' }]);
  });

  it('no last digest: every finding is new, nothing fixed', () => {
    const d = diffFindings(undefined, [f({ severity: 'info', kind: 'shadowed' }), f()]);
    expect(d.new.map((x) => x.severity)).toEqual(['error', 'info']);
    expect(d.fixed).toEqual([]);
    expect(d.rest).toEqual([]);
  });

  const finding = fc.record({
    kind: fc.constantFrom('tie', 'shadowed', 'unanchored'),
    severity: fc.constantFrom('error' as const, 'warning' as const, 'info' as const),
    policy: fc.constantFrom('a', 'b', 'c'),
    operator: fc.boolean(),
    objects: fc.uniqueArray(fc.constantFrom('q1', 'q2', 'q3'), { maxLength: 3 }),
    why: fc.string(),
  });

  it('each finding of now is new or still there, each of before is fixed or still there, never both', () => {
    fc.assert(
      fc.property(fc.array(finding, { maxLength: 8 }), fc.array(finding, { maxLength: 8 }), (before, now) => {
        const d = diffFindings(before, now);
        expect(d.new.length + d.rest.length).toBe(now.length);
        const beforeIds = new Set(before.map(findingId));
        const nowIds = new Set(now.map(findingId));
        for (const x of d.new) expect(beforeIds.has(findingId(x))).toBe(false);
        for (const x of d.rest) expect(beforeIds.has(findingId(x))).toBe(true);
        for (const x of d.fixed) expect(nowIds.has(findingId(x))).toBe(false);
        expect(d.fixed.length).toBe(before.filter((x) => !nowIds.has(findingId(x))).length);
        // The same findings twice: nothing new, nothing fixed.
        const again = diffFindings(now, now);
        expect([again.new.length, again.fixed.length, again.rest.length]).toEqual([0, 0, now.length]);
      }),
    );
  });
});
