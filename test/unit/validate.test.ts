import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BrokerVersion, Policy } from '../../src/policy/types.ts';
import { type ProposedFields, type ValidationInput, validate } from '../../src/policy/validate/validate.ts';

const V310: BrokerVersion = { major: 3, minor: 10, patch: 8 };
const V312: BrokerVersion = { major: 3, minor: 12, patch: 0 };
const V40: BrokerVersion = { major: 4, minor: 0, patch: 5 };
const V43: BrokerVersion = { major: 4, minor: 3, patch: 5 };

const existingUser: Policy = {
  vhost: '/',
  name: 'ttl',
  pattern: '^orders\\.',
  applyTo: 'queues',
  priority: 1,
  definition: { 'message-ttl': 1000 },
};
const existingOp: Policy = {
  vhost: '/',
  name: 'ceiling',
  pattern: '.*',
  applyTo: 'queues',
  priority: 0,
  definition: { 'max-length': 10 },
};

function check(overrides: Partial<ValidationInput> & { fields?: Partial<ProposedFields> }) {
  return validate({
    action: 'create',
    layer: 'user',
    vhost: '/',
    name: 'new',
    existing: { user: [existingUser], operator: [existingOp] },
    version: V310,
    ...overrides,
    fields: {
      pattern: '^x',
      applyTo: 'all',
      priority: 0,
      definition: { 'max-length': 5 },
      ...overrides.fields,
    },
  });
}

const codes = (v: ReturnType<typeof validate>) => v.refusals.map((p) => p.code);

describe('validation refusals', () => {
  it('accepts a well-formed policy and builds it', () => {
    const v = check({});
    expect(v.ok).toBe(true);
    expect(v.proposed).toEqual({
      vhost: '/',
      name: 'new',
      pattern: '^x',
      applyTo: 'all',
      priority: 0,
      definition: { 'max-length': 5 },
    });
  });

  it('create refuses a name already used by a policy of the same kind in the vhost', () => {
    const v = check({ name: 'ttl' });
    expect(codes(v)).toEqual(['name-taken']);
    expect(v.refusals[0]?.message).toMatch(/already exists.*use edit/);
    // An operator policy of that name is another kind: allowed, with a warning.
    const op = check({ name: 'ceiling' });
    expect(op.ok).toBe(true);
    expect(op.warnings.map((w) => w.code)).toContain('same-name-other-layer');
  });

  it('edit keeps the name: it must exist, in the same layer', () => {
    expect(codes(check({ action: 'edit', name: 'nope', fields: {} }))).toEqual(['no-such-policy']);
    const moving = check({ action: 'edit', layer: 'operator', name: 'ttl', fields: { priority: 3 } });
    expect(codes(moving)).toEqual(['wrong-layer']);
    expect(moving.refusals[0]?.message).toMatch(
      /cannot move between the two: delete it and create an operator policy/,
    );
    expect(codes(check({ action: 'edit', layer: 'user', name: 'ceiling', fields: { priority: 3 } }))).toEqual(
      ['wrong-layer'],
    );
    expect(codes(check({ action: 'delete', layer: 'operator', name: 'ttl', fields: {} }))).toEqual([
      'wrong-layer',
    ]);
  });

  it('edit keeps the fields it does not name', () => {
    const v = validate({
      action: 'edit',
      layer: 'user',
      vhost: '/',
      name: 'ttl',
      fields: { priority: 7 },
      existing: { user: [existingUser], operator: [] },
      version: V310,
    });
    expect(v.ok).toBe(true);
    expect(v.current).toEqual(existingUser);
    expect(v.proposed).toEqual({ ...existingUser, priority: 7 });
    const nothing = validate({
      action: 'edit',
      layer: 'user',
      vhost: '/',
      name: 'ttl',
      fields: {},
      existing: { user: [existingUser], operator: [] },
      version: V310,
    });
    expect(codes(nothing)).toEqual(['nothing-to-change']);
  });

  it('refuses unknown keys, naming the key and a likely intended one', () => {
    const v = check({ fields: { definition: { 'max-lenght': 10 } } });
    expect(v.refusals).toEqual([expect.objectContaining({ code: 'unknown-key', key: 'max-lenght' })]);
    expect(v.refusals[0]?.message).toMatch(/did you mean max-length\?/);
    // Valid in the veto lists but never a policy key.
    expect(codes(check({ fields: { definition: { 'max-priority': 3 } } }))).toEqual(['unknown-key']);
    // Known only from a later version.
    expect(check({ fields: { definition: { 'consumer-timeout': 100 } } }).refusals[0]?.message).toMatch(
      /other versions/,
    );
    expect(check({ version: V40, fields: { definition: { 'consumer-timeout': 100 } } }).ok).toBe(true);
  });

  it('refuses wrong value types with the key named', () => {
    const cases: [string, unknown][] = [
      ['message-ttl', '60000'],
      ['message-ttl', 1.5],
      ['message-ttl', true],
      ['alternate-exchange', 5],
      ['overflow', 'drop-tail'],
      ['queue-version', '2'],
      ['max-age', 5],
      ['max-age', '0D'],
      ['max-age', '1x'],
      ['expires', 0],
      ['stream-max-segment-size-bytes', 3_000_000_001],
    ];
    for (const [key, value] of cases) {
      const v = check({ fields: { definition: { [key]: value } } });
      expect(v.refusals, `${key}=${JSON.stringify(value)}`).toEqual([
        expect.objectContaining({ code: 'bad-value', key }),
      ]);
      expect(v.refusals[0]?.message).toContain(key);
    }
  });

  it('refuses negative limits; 4.x takes a negative delivery-limit as unlimited', () => {
    for (const key of [
      'max-length',
      'max-length-bytes',
      'message-ttl',
      'initial-cluster-size',
      'delivery-limit',
    ]) {
      const v = check({ fields: { definition: { [key]: -1 } } });
      expect(v.refusals, key).toEqual([expect.objectContaining({ code: 'negative-limit', key })]);
    }
    expect(check({ version: V40, fields: { definition: { 'delivery-limit': -1 } } }).ok).toBe(true);
  });

  it('refuses apply-to values the broker version does not accept', () => {
    const old = check({ fields: { applyTo: 'classic_queues' } });
    expect(codes(old)).toEqual(['apply-to-unsupported']);
    expect(old.refusals[0]?.message).toMatch(/3\.10\.8.*all, queues, exchanges.*3\.12/);
    expect(check({ version: V312, fields: { applyTo: 'classic_queues' } }).ok).toBe(true);
    expect(codes(check({ version: V40, fields: { applyTo: 'qos0_queues' } }))).toEqual([
      'apply-to-unsupported',
    ]);
  });

  it('refuses queue-master-locator from 4.3 saying what to use instead, warns about it on 4.0–4.2', () => {
    const qml = { 'queue-master-locator': 'client-local' };
    for (const layer of ['user', 'operator'] as const) {
      const refused = check({ version: V43, layer, fields: { definition: qml } });
      expect(codes(refused)).toEqual(['deprecated-key']);
      expect(refused.refusals[0]?.message).toMatch(
        /queue-master-locator is a deprecated feature that RabbitMQ 4\.3\.5 refuses.*use queue-leader-locator \("client-local" or "balanced"\) instead/,
      );
      const warned = check({ version: V40, layer, fields: { definition: qml } });
      expect(warned.ok).toBe(true);
      expect(warned.warnings.find((w) => w.code === 'deprecated-key')?.message).toMatch(
        /RabbitMQ 4\.3 and later refuse it by default; use queue-leader-locator/,
      );
    }
    // 3.x: a plain key, no word about deprecation.
    expect(check({ fields: { definition: qml } }).warnings.map((w) => w.code)).not.toContain(
      'deprecated-key',
    );
  });

  it('checks the delayed-retry keys against each other as 4.3 does', () => {
    const V431: BrokerVersion = { major: 4, minor: 3, patch: 1 };
    const on = (definition: Record<string, unknown>) => check({ version: V431, fields: { definition } });
    const needsMin = on({ 'delayed-retry-type': 'failed', 'delayed-retry-max': 100 });
    expect(codes(needsMin)).toEqual(['bad-value']);
    expect(needsMin.refusals[0]).toMatchObject({ key: 'delayed-retry-type' });
    expect(needsMin.refusals[0]?.message).toMatch(/"failed" needs delayed-retry-min/);
    const inverted = on({
      'delayed-retry-type': 'disabled',
      'delayed-retry-min': 100,
      'delayed-retry-max': 50,
    });
    expect(inverted.refusals.map((p) => p.message)).toEqual([
      'delayed-retry-max (50) must not be smaller than delayed-retry-min (100).',
    ]);
    expect(on({ 'delayed-retry-type': 'disabled' }).ok).toBe(true);
    expect(on({ 'delayed-retry-type': 'all', 'delayed-retry-min': 100, 'delayed-retry-max': 100 }).ok).toBe(
      true,
    );
    // Before 4.3.1 the keys are unknown: that is the one refusal, not the pairing.
    expect(codes(check({ version: V40, fields: { definition: { 'delayed-retry-type': 'all' } } }))).toEqual([
      'unknown-key',
    ]);
  });

  it('refuses the mirroring keys on 4.x, warns about them on 3.x', () => {
    const four = check({ version: V40, fields: { definition: { 'ha-mode': 'all', 'max-length': 1 } } });
    expect(codes(four)).toEqual(['mirroring-removed']);
    expect(four.refusals[0]?.message).toMatch(/removed in RabbitMQ 4\.0.*configure nothing/);
    const three = check({ fields: { definition: { 'ha-mode': 'all' } } });
    expect(three.ok).toBe(true);
    expect(three.warnings.map((w) => w.code)).toContain('mirroring-deprecated');
    // 3.x's own mirroring rules
    expect(codes(check({ fields: { definition: { 'ha-params': 2 } } }))).toEqual(['mirroring-incomplete']);
    expect(codes(check({ fields: { definition: { 'ha-mode': 'exactly' } } }))).toEqual(['bad-value']);
    expect(codes(check({ fields: { definition: { 'ha-mode': 'all', 'ha-params': 2 } } }))).toEqual([
      'bad-value',
    ]);
    expect(codes(check({ fields: { definition: { 'ha-mode': 'nodes', 'ha-params': [] } } }))).toEqual([
      'bad-value',
    ]);
    expect(check({ fields: { definition: { 'ha-mode': 'nodes', 'ha-params': ['rabbit@a'] } } }).ok).toBe(
      true,
    );
  });

  it('refuses keys an operator policy may not set, by version', () => {
    const v = check({
      layer: 'operator',
      fields: { definition: { overflow: 'drop-head', 'max-length': 3 } },
    });
    expect(v.refusals).toEqual([expect.objectContaining({ code: 'operator-key', key: 'overflow' })]);
    expect(v.refusals[0]?.message).toMatch(/operator policies may set .*max-length/);
    expect(
      check({ layer: 'operator', version: V40, fields: { definition: { overflow: 'drop-head' } } }).ok,
    ).toBe(true);
    expect(
      codes(
        check({ layer: 'operator', version: V40, fields: { definition: { 'dead-letter-exchange': 'x' } } }),
      ),
    ).toEqual(['operator-key']);
  });

  it('refuses a pattern the broker would refuse, with the reason', () => {
    const v = check({ fields: { pattern: 'orders.(' } });
    expect(codes(v)).toEqual(['pattern-invalid']);
    expect(v.refusals[0]?.message).toMatch(/missing \)/);
    expect(codes(check({ fields: { pattern: 5 } }))).toEqual(['pattern-invalid']);
  });

  it('refuses patterns over 1024 bytes on brokers that cap them (4.2.8+, 4.3.2+)', () => {
    const long = `^${'a'.repeat(1100)}`;
    expect(check({ fields: { pattern: long } }).ok).toBe(true);
    expect(codes(check({ version: V43, fields: { pattern: long } }))).toEqual(['pattern-too-long']);
  });

  it('marks, and does not refuse, a pattern the broker accepts but this bot cannot read', () => {
    const v = check({ fields: { pattern: '^orders(?>\\.)' } });
    expect(v.ok).toBe(true);
    expect(v.warnings.map((w) => w.code)).toContain('pattern-unreadable');
  });

  it('refuses a definition number JSON cannot carry exactly, at any depth; accepts every safe one (property)', () => {
    // As typed, 12345678901234567890 is already 12345678901234567000 once read.
    const big = check({ fields: { definition: JSON.parse('{"max-length": 12345678901234567890}') } });
    expect(big.refusals).toEqual([expect.objectContaining({ code: 'number-inexact', key: 'max-length' })]);
    expect(big.refusals[0]?.message).toMatch(/written as 12345678901234567000/);
    expect(codes(check({ fields: { definition: { 'message-ttl': Number.POSITIVE_INFINITY } } }))).toEqual([
      'number-inexact',
    ]);
    fc.assert(
      fc.property(
        fc.oneof(fc.double({ min: 2 ** 53, noNaN: true }), fc.double({ max: -(2 ** 53), noNaN: true })),
        (n) => {
          expect(codes(check({ fields: { definition: { 'max-length': n } } }))).toEqual(['number-inexact']);
          expect(codes(check({ fields: { definition: { 'federation-upstream': [[{ a: n }]] } } }))).toContain(
            'number-inexact',
          );
        },
      ),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(codes(check({ fields: { definition: { 'max-length': n } } }))).toEqual([]);
      }),
    );
  });

  it('refuses an empty or non-object definition, a non-numeric priority, at most one federation key', () => {
    expect(codes(check({ fields: { definition: {} } }))).toEqual(['definition-empty']);
    expect(codes(check({ fields: { definition: [1] } }))).toEqual(['definition-not-object']);
    expect(codes(check({ fields: { priority: '10' } }))).toEqual(['priority-not-number']);
    // 2^53 + 1 as typed is already 2^53 once read: refused, never stored as another number.
    expect(codes(check({ fields: { priority: Number('9007199254740993') } }))).toEqual([
      'priority-not-number',
    ]);
    expect(codes(check({ fields: { priority: -(2 ** 60) } }))).toEqual(['priority-not-number']);
    expect(codes(check({ fields: { priority: Number.MAX_SAFE_INTEGER } }))).toEqual([]);
    expect(
      codes(
        check({ fields: { definition: { 'federation-upstream': 'a', 'federation-upstream-set': 'all' } } }),
      ),
    ).toEqual(['federation-conflict']);
  });

  it('warns about an unanchored pattern and a policy no object type could take', () => {
    const v = check({
      version: V40,
      fields: { pattern: 'orders', applyTo: 'streams', definition: { 'message-ttl': 5 } },
    });
    expect(v.ok).toBe(true);
    expect(v.warnings.map((w) => w.code).sort()).toEqual(['pattern-unanchored', 'vetoed-everywhere']);
  });

  it('reports every problem at once, each with its field or key', () => {
    const v = check({
      name: 'ttl',
      fields: { pattern: '(', applyTo: 'streams', definition: { 'max-lenght': 1, 'message-ttl': -1 } },
    });
    expect(codes(v).sort()).toEqual([
      'apply-to-unsupported',
      'name-taken',
      'negative-limit',
      'pattern-invalid',
      'unknown-key',
    ]);
  });
});

describe('one validation for every path: what the broker refuses at PUT', () => {
  const OTP25: BrokerVersion = { ...V310, erlang: 25 };
  const OTP29: BrokerVersion = { ...V43, erlang: 29 };

  it('a plugin key: refused where the broker has not enabled the plugin, warned where that is not known, taken where it has', () => {
    const fed = { definition: { 'federation-upstream': 'origin' } };
    const off = check({ fields: fed, plugins: new Set() });
    expect(codes(off)).toEqual(['plugin-disabled']);
    expect(off.refusals[0]?.message).toBe(
      'federation-upstream is accepted only while the federation plugin is enabled on the broker, and RabbitMQ 3.10.8 here has not enabled it: the broker refuses the definition. Enable rabbitmq_federation there, or leave federation-upstream out.',
    );
    const unknown = check({ fields: fed });
    expect(unknown.ok).toBe(true);
    expect(unknown.warnings.map((w) => w.message)).toContain(
      'federation-upstream is accepted only while the federation plugin is enabled on the broker.',
    );
    expect(
      check({ fields: fed, plugins: new Set(['federation']) }).warnings.map((w) => w.code),
    ).not.toContain('federation-plugin');
  });

  it('federation-upstream-pattern is compiled as the broker compiles it', () => {
    const with_ = (value: string, version: BrokerVersion) =>
      codes(
        check({
          version,
          plugins: new Set(['federation']),
          fields: { definition: { 'federation-upstream-pattern': value } },
        }),
      );
    expect(with_('(?<n>a)(?<n>b)', OTP29)).toEqual(['bad-value']);
    expect(with_('(?R)', OTP25)).toEqual(['bad-value']);
    expect(with_('(?R)', OTP29)).toEqual([]);
    expect(with_('^dc-', OTP25)).toEqual([]);
  });

  it("patterns by the broker's engine: PCRE 8 up to OTP 27, PCRE2 from 28; without it, what both refuse", () => {
    const pattern = (p: string, version: BrokerVersion) => codes(check({ version, fields: { pattern: p } }));
    expect(pattern('(?<n>a)(?<n>b)', OTP25)).toEqual(['pattern-invalid']);
    expect(pattern('(?<n>a)(?<n>b)', OTP29)).toEqual(['pattern-invalid']);
    expect(pattern('(?R)', OTP25)).toEqual(['pattern-invalid']);
    expect(pattern('(?R)', OTP29)).toEqual([]);
    expect(pattern('(?R)', V310)).toEqual([]);
    expect(pattern('(?<=a{1,3})b', OTP25)).toEqual(['pattern-invalid']);
    expect(pattern('(?<=a{1,3})b', OTP29)).toEqual([]);
  });

  it('a name over 255 bytes: refused for a create, wherever it comes from; an existing one is edited and deleted', () => {
    const long = 'n'.repeat(256);
    const created = check({ name: long });
    expect(codes(created)).toEqual(['name-too-long']);
    expect(created.refusals[0]?.message).toBe('The policy name is 256 bytes; names are at most 255 bytes.');
    expect(codes(check({ name: 'é'.repeat(128) }))).toEqual(['name-too-long']);
    expect(codes(check({ name: 'n'.repeat(255) }))).toEqual([]);
    const there = { ...existingUser, name: long };
    const existing = { user: [there], operator: [existingOp] };
    expect(check({ action: 'edit', name: long, existing, fields: { priority: 3 } }).ok).toBe(true);
    expect(check({ action: 'delete', name: long, existing }).ok).toBe(true);
  });
});
