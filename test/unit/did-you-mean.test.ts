import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  boundedDistance,
  CloseNames,
  closeNames,
  MAX_SUGGESTIONS,
  maxDistance,
} from '../../src/core/didYouMean.ts';

/** The textbook recurrence, unbounded: the reference the bounded one is checked against. */
function levenshtein(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      row[j] = Math.min(
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (up[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
  return (d[a.length] as number[])[b.length] as number;
}

const short = fc.string({ unit: fc.constantFrom(...'abcde.-'.split('')), maxLength: 10 });

describe('boundedDistance', () => {
  it('is the Levenshtein distance when within the bound, and over the bound otherwise', () => {
    fc.assert(
      fc.property(short, short, fc.integer({ min: 0, max: 4 }), (a, b, max) => {
        const exact = levenshtein(a, b);
        const d = boundedDistance(a, b, max);
        if (exact <= max) expect(d).toBe(exact);
        else expect(d).toBe(max + 1);
      }),
    );
  });
});

describe('CloseNames', () => {
  it.each([
    ['orders.adit', ['orders.audit', 'orders.events', 'billing.audit'], ['orders.audit']],
    ['Orders.Audit', ['orders.audit', 'orders.aud', 'orders'], ['orders.audit', 'orders.aud', 'orders']],
    ['orders-eu', ['orders', 'billing', 'or'], ['orders']],
    ['orders.audit', ['orders.audit', 'payments'], []],
    ['q', ['a', 'b', 'Q', 'qq', 'long-name'], ['Q']],
    ['ordrs', ['a', 'b', 'orders', 'ords', 'oders', 'order'], ['orders', 'ords', 'oders']],
    [
      'audit-retention',
      ['audit-retentoin', 'audit_retention', 'tight', 'audit'],
      ['audit_retention', 'audit-retentoin', 'audit'],
    ],
    ['x', [], []],
  ])('%s among %j -> %j', (typed, names, expected) => {
    expect(closeNames(typed, names)).toEqual(expected);
  });

  it('offers at most three, each a typo away or a start of the other, the closest first, never the typed name', () => {
    fc.assert(
      fc.property(short, fc.array(short, { maxLength: 40 }), (typed, names) => {
        const got = closeNames(typed, names);
        expect(got.length).toBeLessThanOrEqual(MAX_SUGGESTIONS);
        expect(got).not.toContain(typed);
        const max = maxDistance(typed);
        const t = typed.toLowerCase();
        // The ranking: a typo's distance, then a name that starts the other (max + 1), else never.
        const dist = (n: string) => {
          const d = levenshtein(t, n.toLowerCase());
          if (d <= max) return d;
          const l = n.toLowerCase();
          return Math.min(l.length, t.length) >= 3 && (l.startsWith(t) || t.startsWith(l))
            ? max + 1
            : Number.POSITIVE_INFINITY;
        };
        for (const n of got) expect(dist(n)).toBeLessThanOrEqual(max + 1);
        const ds = got.map(dist);
        expect(ds).toEqual([...ds].sort((a, b) => a - b));
        // Nothing left out is closer than the last one offered.
        if (got.length === MAX_SUGGESTIONS) {
          const last = ds[ds.length - 1] as number;
          for (const n of names)
            if (n !== typed && !got.includes(n)) expect(dist(n)).toBeGreaterThanOrEqual(last);
        }
        // The order of the listing does not matter.
        expect(new CloseNames(typed).addAll([...names].reverse()).names()).toEqual(got);
      }),
    );
  });
});
