/** src/core/retry.ts: when a failed call is tried again, and after how long. Pure, no I/O. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffMs, retryDelay, SleepAborted, sleep } from '../../src/core/retry.ts';

describe('backoffMs', () => {
  it('is between half and the whole of baseMs * 2^attempt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 10 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (base, attempt, r) => {
          const step = base * 2 ** attempt;
          const wait = backoffMs(base, attempt, () => r);
          expect(wait).toBeGreaterThanOrEqual(step / 2);
          expect(wait).toBeLessThan(step + 1e-9);
        },
      ),
    );
  });
});

describe('retryDelay', () => {
  const endless = { baseMs: 100, left: () => Number.POSITIVE_INFINITY };

  it('never retries a final failure', () => {
    expect(retryDelay(endless, 0, { retryable: false })).toBeUndefined();
    expect(retryDelay(endless, 0, { retryable: false, retryAfterMs: 5 })).toBeUndefined();
  });

  it('stops once the retries are used up', () => {
    const twice = { ...endless, retries: 2 };
    expect(retryDelay(twice, 0, { retryable: true })).toBeDefined();
    expect(retryDelay(twice, 1, { retryable: true })).toBeDefined();
    expect(retryDelay(twice, 2, { retryable: true })).toBeUndefined();
    expect(retryDelay({ ...endless, retries: 0 }, 0, { retryable: true })).toBeUndefined();
  });

  it("waits the other side's Retry-After when it gave one", () => {
    expect(retryDelay(endless, 3, { retryable: true, retryAfterMs: 1234 })).toBe(1234);
  });

  it('gives up when the retry could not start inside the budget', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (left, after) => {
          const wait = retryDelay({ baseMs: 1, left: () => left }, 0, {
            retryable: true,
            retryAfterMs: after,
          });
          expect(wait).toBe(left - after > 0 ? after : undefined);
        },
      ),
    );
  });
});

describe('sleep', () => {
  it('ends early with SleepAborted when its signal aborts', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(SleepAborted);
    await expect(sleep(1, controller.signal)).rejects.toBeInstanceOf(SleepAborted);
  });
});
