/**
 * src/policy/keys.ts, the pure tables: apply-to by version, scopes, the key-type veto, known keys
 * and who may set them, and the operator merge. The tables themselves are proven against the
 * real brokers by test/integration/differential-engine.test.ts and versions.test.ts; this file
 * pins down how they are read.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  acceptedApplyTo,
  isKnownKey,
  KEYS,
  keySpec,
  MIRRORING_KEYS,
  mergeOperatorValue,
  operatorMaySet,
  refusedKeys,
  scopeFits,
  scopesMeet,
  stricterLimit,
  vetoedKeys,
} from '../../src/policy/keys.ts';
import { APPLY_TO_VALUES, type BrokerVersion, OBJECT_KINDS } from '../../src/policy/types.ts';

const v = (major: number, minor: number, patch = 0): BrokerVersion => ({ major, minor, patch });
const V3_10 = v(3, 10, 8);
const V4_0 = v(4, 0, 5);

describe('acceptedApplyTo', () => {
  it('per-queue-type scopes exist from 3.12.0 on', () => {
    expect(acceptedApplyTo(V3_10)).toEqual(['all', 'queues', 'exchanges']);
    expect(acceptedApplyTo(v(3, 11, 99))).toEqual(['all', 'queues', 'exchanges']);
    expect(acceptedApplyTo(v(3, 12, 0))).toEqual(APPLY_TO_VALUES);
  });
});

describe('scopeFits', () => {
  it.each([
    ['all', 'classic', true],
    ['all', 'exchange', true],
    ['queues', 'stream', true],
    ['queues', 'exchange', false],
    ['exchanges', 'exchange', true],
    ['exchanges', 'quorum', false],
    ['quorum_queues', 'quorum', true],
    ['quorum_queues', 'classic', false],
    ['streams', 'stream', true],
    ['classic_queues', 'exchange', false],
    // a queue type this bot does not know: only what reaches every queue
    ['queues', null, true],
    ['classic_queues', null, false],
  ] as const)('%s reaches %s: %s', (applyTo, kind, fits) => {
    expect(scopeFits(applyTo, kind)).toBe(fits);
  });
});

describe('scopesMeet', () => {
  it.each([
    ['queues', 'exchanges', false],
    ['classic_queues', 'quorum_queues', false],
    ['streams', 'exchanges', false],
    ['classic_queues', 'streams', false],
    ['all', 'exchanges', true],
    ['all', 'streams', true],
    ['queues', 'quorum_queues', true],
    ['queues', 'queues', true],
    ['exchanges', 'exchanges', true],
  ] as const)('%s and %s meet: %s', (a, b, meet) => {
    expect(scopesMeet(a, b)).toBe(meet);
    expect(scopesMeet(b, a)).toBe(meet);
  });
  it('is exactly "one kind of object both reach"', () => {
    fc.assert(
      fc.property(fc.constantFrom(...APPLY_TO_VALUES), fc.constantFrom(...APPLY_TO_VALUES), (a, b) => {
        const both = OBJECT_KINDS.filter((k) => scopeFits(a, k) && scopeFits(b, k));
        expect(scopesMeet(a, b)).toBe(both.length > 0);
      }),
    );
  });
});

describe('vetoedKeys and refusedKeys', () => {
  it('exchanges veto nothing, on any version', () => {
    for (const version of [V3_10, V4_0, v(4, 3, 6)]) expect(vetoedKeys('exchange', version).size).toBe(0);
  });

  it('follows the version ranges of the table', () => {
    expect(vetoedKeys('classic', V3_10).has('queue-leader-locator')).toBe(true);
    expect(vetoedKeys('classic', V4_0).has('queue-leader-locator')).toBe(false);
    expect(vetoedKeys('quorum', V4_0).has('single-active-consumer')).toBe(true);
    expect(vetoedKeys('quorum', v(4, 2, 0)).has('single-active-consumer')).toBe(false);
    expect(vetoedKeys('classic', V3_10).has('max-in-memory-length')).toBe(false);
    expect(vetoedKeys('classic', v(3, 12, 7)).has('max-in-memory-length')).toBe(true);
  });

  it('a stream refuses a policy that sets a TTL or a dead-letter target; a classic queue one with max-age', () => {
    const streams = vetoedKeys('stream', V4_0);
    expect(refusedKeys({ 'message-ttl': 1, 'max-age': '1D', 'dead-letter-exchange': 'x' }, streams)).toEqual([
      'message-ttl',
      'dead-letter-exchange',
    ]);
    expect(refusedKeys({ 'max-age': '1D' }, vetoedKeys('classic', V4_0))).toEqual(['max-age']);
    expect(refusedKeys({}, streams)).toEqual([]);
  });

  it('refusedKeys keeps exactly the vetoed keys of any definition, in its order', () => {
    const keyNames = KEYS.map((k) => k.key);
    fc.assert(
      fc.property(
        fc.subarray(keyNames),
        fc.constantFrom(...OBJECT_KINDS),
        fc.constantFrom(V3_10, V4_0),
        (keys, kind, version) => {
          const vetoes = vetoedKeys(kind, version);
          const definition = Object.fromEntries(keys.map((k) => [k, 1]));
          expect(refusedKeys(definition, vetoes)).toEqual(keys.filter((k) => vetoes.has(k)));
        },
      ),
    );
  });
});

describe('known keys', () => {
  it('has one spec per key', () => {
    expect(new Set(KEYS.map((k) => k.key)).size).toBe(KEYS.length);
    for (const k of KEYS) expect(keySpec(k.key)).toBe(k);
    expect(keySpec('no-such-key')).toBeUndefined();
  });

  it('mirroring keys are the ha-* keys, gone in 4.0', () => {
    expect([...MIRRORING_KEYS].every((k) => k.startsWith('ha-'))).toBe(true);
    expect(MIRRORING_KEYS.has('ha-mode')).toBe(true);
    expect(isKnownKey('ha-mode', V3_10, new Set())).toBe(true);
    expect(isKnownKey('ha-mode', V4_0, new Set())).toBe(false);
  });

  it("a plugin's keys are known only when the plugin is on", () => {
    expect(isKnownKey('federation-upstream', V4_0, new Set())).toBe(false);
    expect(isKnownKey('federation-upstream', V4_0, new Set(['federation']))).toBe(true);
    expect(isKnownKey('max-length', V4_0, new Set())).toBe(true);
  });

  it('operator policies may set the limits, never a key without an operator range', () => {
    expect(operatorMaySet('max-length', V3_10)).toBe(true);
    expect(operatorMaySet('federation-upstream', V4_0)).toBe(false);
    expect(operatorMaySet('ha-mode', v(3, 11, 9))).toBe(false);
    expect(operatorMaySet('ha-mode', v(3, 11, 10))).toBe(true);
    expect(operatorMaySet('ha-mode', V4_0)).toBe(false);
  });
});

describe('the operator merge', () => {
  it('stricterLimit is the smaller, but from 4.0 a negative delivery limit (unlimited) loses', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: 0, max: 1e9 }), (a, b) => {
        expect(stricterLimit('max-length', a, b, V4_0)).toBe(Math.min(a, b));
        expect(stricterLimit('delivery-limit', a, b, V4_0)).toBe(Math.min(a, b));
      }),
    );
    expect(stricterLimit('delivery-limit', -1, 5, V4_0)).toBe(5);
    expect(stricterLimit('delivery-limit', -1, 5, V3_10)).toBe(-1);
  });

  it('merges limits to the stricter, max-rules to the larger, the rest to the operator', () => {
    expect(mergeOperatorValue('max-length', 10, 3, V4_0)).toBe(3);
    expect(mergeOperatorValue('max-length', 3, 10, V4_0)).toBe(3);
    expect(mergeOperatorValue('target-group-size', 3, 5, V4_0)).toBe(5);
    expect(mergeOperatorValue('ha-mode', 'all', 'exactly', V3_10)).toBe('exactly');
    // a value that is not a number: the operator's holds
    expect(mergeOperatorValue('max-length', 'x', 3, V4_0)).toBe(3);
  });
});
