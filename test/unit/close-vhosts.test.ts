import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closeVhosts } from '../../src/core/vhosts.ts';

describe('closeVhosts', () => {
  it.each([
    ['ordres', ['orders', 'billing'], ['orders']],
    ['Orders', ['orders', 'billing'], ['orders']],
    ['orders-missing', ['orders', 'o'], ['orders']],
    ['/', ['/', 'a'], []],
    ['zzz', ['orders'], []],
  ])('%s among %j -> %j', (typed, known, expected) => {
    expect(closeVhosts(typed, known)).toEqual(expected);
  });

  it('never names the vhost typed, nor more than five, and only names it was given', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 12 }),
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 20 }),
        (typed, known) => {
          const close = closeVhosts(typed, known);
          expect(close.length).toBeLessThanOrEqual(5);
          for (const v of close) {
            expect(known).toContain(v);
            expect(v).not.toBe(typed);
          }
        },
      ),
    );
  });
});
