import { describe, expect, it } from 'vitest';
import { keySpec, vetoedKeys } from '../../src/policy/keys.ts';
import { RISKS, RISKY_KEYS, riskOf } from '../../src/policy/risks.ts';
import { OBJECT_KINDS, parseVersion } from '../../src/policy/types.ts';

const VERSIONS = ['3.10.8', '3.12.7', '3.13.0', '4.0.5', '4.3.1'].map((t) => {
  const v = parseVersion(t);
  if (!v) throw new Error(`not a version: ${t}`);
  return v;
});

describe('the risk table', () => {
  it('names only keys that keys.ts knows', () => {
    const unknown = Object.keys(RISKY_KEYS).filter((k) => keySpec(k) === undefined);
    expect(unknown).toEqual([]);
  });

  it('gives every risk at least one key, so none of RISKS is dead', () => {
    const used = new Set(Object.values(RISKY_KEYS).map((e) => e.risk));
    expect(RISKS.filter((r) => !used.has(r))).toEqual([]);
  });

  it('says a key hurts exactly the types its entry lists', () => {
    for (const [key, { risk, hurts }] of Object.entries(RISKY_KEYS)) {
      for (const kind of OBJECT_KINDS)
        expect(riskOf(key, kind), `${key} on a ${kind}`).toBe(
          (hurts as readonly string[]).includes(kind) ? risk : undefined,
        );
    }
  });

  it('reports nothing for a key without a risk, nor for an inherited property name', () => {
    expect(riskOf('queue-mode', 'classic')).toBeUndefined();
    expect(riskOf('constructor', 'classic')).toBeUndefined();
    expect(riskOf('toString', 'exchange')).toBeUndefined();
  });

  it('never says a type loses a key that type refuses (a refused key does nothing for it)', () => {
    for (const v of VERSIONS)
      for (const kind of OBJECT_KINDS)
        for (const key of vetoedKeys(kind, v))
          expect(
            riskOf(key, kind),
            `${key} on a ${kind} at ${v.major}.${v.minor}.${v.patch}`,
          ).toBeUndefined();
  });
});
