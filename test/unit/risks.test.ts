import { describe, expect, it } from 'vitest';
import { keySpec, vetoedKeys } from '../../src/policy/keys.ts';
import { keyHasEffect, RISKS, RISKY_KEYS, riskOf } from '../../src/policy/risks.ts';
import {
  atLeast,
  type BrokerVersion,
  formatVersion,
  OBJECT_KINDS,
  parseVersion,
} from '../../src/policy/types.ts';

function version(t: string): BrokerVersion {
  const v = parseVersion(t);
  if (!v) throw new Error(`not a version: ${t}`);
  return v;
}
const VERSIONS = ['3.10.8', '3.12.7', '3.13.0', '4.0.5', '4.3.1'].map(version);
const V = version('3.10.8');

describe('the risk table', () => {
  it('names only keys that keys.ts knows', () => {
    const unknown = Object.keys(RISKY_KEYS).filter((k) => keySpec(k) === undefined);
    expect(unknown).toEqual([]);
  });

  it('gives every risk at least one key, so none of RISKS is dead', () => {
    const used = new Set(Object.values(RISKY_KEYS).map((e) => e.risk));
    expect(RISKS.filter((r) => !used.has(r))).toEqual([]);
  });

  it('says a key hurts exactly the types its entry lists, until the version a type stops using it', () => {
    for (const v of VERSIONS)
      for (const [key, { risk, hurts, hurtsUntil }] of Object.entries(RISKY_KEYS)) {
        for (const kind of OBJECT_KINDS) {
          const until = hurtsUntil?.[kind];
          const used = (hurts as readonly string[]).includes(kind) && !(until && atLeast(v, ...until));
          expect(riskOf(key, kind, v), `${key} on a ${kind} at ${formatVersion(v)}`).toBe(
            used ? risk : undefined,
          );
        }
      }
  });

  it('makes the consumer timeout no risk to a classic queue or a stream from 4.3, and keeps it one to a quorum queue', () => {
    const [v40, v431] = [version('4.0.5'), version('4.3.1')];
    expect(riskOf('consumer-timeout', 'classic', v40)).toBe('consumer-timeout');
    expect(riskOf('consumer-timeout', 'classic', v431)).toBeUndefined();
    expect(riskOf('consumer-timeout', 'quorum', v431)).toBe('consumer-timeout');
    expect(riskOf('consumer-timeout', 'stream', v40)).toBe('consumer-timeout');
    expect(riskOf('consumer-timeout', 'stream', v431)).toBeUndefined();
    expect(riskOf('delayed-retry-min', 'quorum', v431)).toBe('retry-delay');
    expect(riskOf('delayed-retry-min', 'classic', v431)).toBeUndefined();
  });

  it('says whether a type does anything with a key of the table, and nothing of the others', () => {
    const [v40, v431] = [version('4.0.5'), version('4.3.1')];
    expect(keyHasEffect('consumer-timeout', 'classic', v40)).toBe(true);
    expect(keyHasEffect('consumer-timeout', 'classic', v431)).toBe(false);
    expect(keyHasEffect('consumer-timeout', 'stream', v431)).toBe(false);
    expect(keyHasEffect('consumer-timeout', 'quorum', v431)).toBe(true);
    expect(keyHasEffect('alternate-exchange', 'classic', V)).toBe(false);
    expect(keyHasEffect('alternate-exchange', 'exchange', V)).toBe(true);
    expect(keyHasEffect('queue-mode', 'classic', V)).toBeUndefined();
    expect(keyHasEffect('constructor', 'classic', V)).toBeUndefined();
  });

  it('reports nothing for a key without a risk, nor for an inherited property name', () => {
    expect(riskOf('queue-mode', 'classic', V)).toBeUndefined();
    expect(riskOf('constructor', 'classic', V)).toBeUndefined();
    expect(riskOf('toString', 'exchange', V)).toBeUndefined();
  });

  it('never says a type loses a key that type refuses (a refused key does nothing for it)', () => {
    for (const v of VERSIONS)
      for (const kind of OBJECT_KINDS)
        for (const key of vetoedKeys(kind, v))
          expect(
            riskOf(key, kind, v),
            `${key} on a ${kind} at ${v.major}.${v.minor}.${v.patch}`,
          ).toBeUndefined();
  });
});
