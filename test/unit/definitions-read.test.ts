import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { MAX_FILE_BYTES, MAX_POLICIES, readDefinitions } from '../../src/definitions/read.ts';

/** The shapes measured on the brokers (test/integration/definitions-read.test.ts proves them). */
const export310 = {
  rabbit_version: '3.10.8',
  parameters: [
    {
      value: { pattern: '^a', definition: { 'max-length': 3 }, priority: 1, 'apply-to': 'queues' },
      vhost: 'v1',
      component: 'operator_policy',
      name: 'opx',
    },
    { value: { uri: 'amqp://x' }, vhost: 'v1', component: 'federation-upstream', name: 'up' },
  ],
  policies: [
    {
      vhost: 'v1',
      name: 'px',
      pattern: '^a',
      'apply-to': 'queues',
      definition: { 'max-length': 3 },
      priority: 1,
    },
  ],
  queues: [{ name: 'a' }, { name: 'b' }],
  exchanges: [],
  bindings: [{}],
};

const export43 = {
  rabbit_version: '4.3.6',
  rabbitmq_definition_format: 'single_virtual_host',
  original_vhost_name: 'v1',
  parameters: [
    {
      component: 'operator_policy',
      name: 'opx',
      value: { 'apply-to': 'queues', definition: { 'max-length': 3 }, pattern: '^a', priority: 1 },
    },
  ],
  policies: [
    { name: 'px', pattern: '^a', 'apply-to': 'queues', definition: { 'max-length': 3 }, priority: 1 },
  ],
  queues: [],
  exchanges: [],
  bindings: [],
  limits: {},
};

const ok = (text: string, vhost?: string) => {
  const r = readDefinitions(text, vhost === undefined ? {} : { vhost });
  if (!r.ok) throw new Error(r.problem);
  return r.file;
};
const problem = (text: string, vhost?: string) => {
  const r = readDefinitions(text, vhost === undefined ? {} : { vhost });
  if (r.ok) throw new Error('read, not refused');
  return r.problem;
};

describe('readDefinitions: exports', () => {
  it('reads a 3.10 one-vhost export: policies and operator policies with their vhost, the rest counted', () => {
    const f = ok(JSON.stringify(export310));
    expect(f.format).toBe('export');
    expect(f.vhosts).toEqual(['v1']);
    expect(
      f.policies.map((p) => [p.layer, p.policy.vhost, p.policy.name, p.policy.applyTo, p.policy.priority]),
    ).toEqual([
      ['user', 'v1', 'px', 'queues', 1],
      ['operator', 'v1', 'opx', 'queues', 1],
    ]);
    expect(f.ignored).toEqual({ queues: 2, bindings: 1, 'parameters (federation-upstream)': 1 });
  });

  it('reads a 4.x one-vhost export: no vhost fields, named by --vhost, else by original_vhost_name', () => {
    expect(ok(JSON.stringify(export43), 'other').policies.map((p) => p.policy.vhost)).toEqual([
      'other',
      'other',
    ]);
    expect(ok(JSON.stringify(export43)).policies.map((p) => p.policy.vhost)).toEqual(['v1', 'v1']);
    const bare = { ...export43, original_vhost_name: undefined };
    expect(ok(JSON.stringify(bare)).vhosts).toEqual(['/']);
  });

  it('with --vhost, keeps only that vhost of a whole export and counts the others', () => {
    const whole = {
      policies: [
        { vhost: 'a', name: 'p', pattern: '^x', definition: {} },
        { vhost: 'b', name: 'p', pattern: '^x', definition: {} },
      ],
    };
    const f = ok(JSON.stringify(whole), 'b');
    expect(f.policies.map((p) => p.policy.vhost)).toEqual(['b']);
    expect(f.ignored).toEqual({ 'policies of other vhosts': 1 });
    expect(ok(JSON.stringify(whole)).vhosts).toEqual(['a', 'b']);
  });

  it('gives an export policy without apply-to or priority the broker defaults', () => {
    const f = ok(
      JSON.stringify({
        policies: [{ vhost: '/', name: 'p', pattern: '^x', definition: { 'max-length': 1 } }],
      }),
    );
    expect(f.policies[0]?.policy).toEqual({
      vhost: '/',
      name: 'p',
      pattern: '^x',
      applyTo: 'all',
      priority: 0,
      definition: { 'max-length': 1 },
    });
  });
});

describe('readDefinitions: the topology operator', () => {
  it('reads Policy and OperatorPolicy with their defaults, and counts the other kinds', () => {
    const yaml = [
      {
        apiVersion: 'rabbitmq.com/v1beta1',
        kind: 'Policy',
        metadata: { name: 'a' },
        spec: { name: 'keep', pattern: '^orders\\.audit$', definition: { 'max-length': 1000 } },
      },
      {
        apiVersion: 'rabbitmq.com/v1beta1',
        kind: 'OperatorPolicy',
        spec: {
          name: 'cap',
          vhost: 'v',
          pattern: '.*',
          applyTo: 'queues',
          priority: 2,
          definition: { 'max-length': 9 },
        },
      },
      { apiVersion: 'rabbitmq.com/v1beta1', kind: 'Queue', spec: { name: 'q' } },
      {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { kind: 'Exchange', spec: {} },
          { kind: 'Policy', spec: { name: 'inner', pattern: '^i', definition: {} } },
        ],
      },
    ]
      .map((d) => stringify(d))
      .join('---\n');
    const f = ok(yaml);
    expect(f.format).toBe('operator-manifests');
    expect(
      f.policies.map((p) => [
        p.layer,
        p.policy.vhost,
        p.policy.name,
        p.policy.applyTo,
        p.policy.priority,
        p.at,
      ]),
    ).toEqual([
      ['user', '/', 'keep', 'all', 0, 'document 1'],
      ['operator', 'v', 'cap', 'queues', 2, 'document 2'],
      ['user', '/', 'inner', 'all', 0, 'document 4, item 2'],
    ]);
    expect(f.ignored).toEqual({ Queue: 1, Exchange: 1 });
  });
});

describe('readDefinitions: refused whole, saying what to fix', () => {
  it.each([
    ['{"policies": [', /not valid JSON/],
    ['kind: Policy\nspec: [1, 2\n', /neither JSON nor valid YAML/],
    ['', /empty/],
    [
      JSON.stringify({ policies: [{ vhost: '/', pattern: '^x', definition: {} }] }),
      /at policies\[0\] has no name: give it one/,
    ],
    [
      JSON.stringify({ policies: [{ vhost: '/', name: 'p', definition: {} }] }),
      /policy "p" \(policies\[0\]\) has no pattern/,
    ],
    [
      JSON.stringify({ policies: [{ vhost: '/', name: 'p', pattern: '^x', definition: [] }] }),
      /policies\[0\] cannot be read: its definition should be an object/,
    ],
    [
      JSON.stringify({
        policies: [{ vhost: '/', name: 'p', pattern: '^x', priority: 'high', definition: {} }],
      }),
      /its priority should be a number/,
    ],
    [
      JSON.stringify({
        policies: [
          { vhost: '/', name: 'p', pattern: '^x', definition: {} },
          { vhost: '/', name: 'p', pattern: '^y', definition: {} },
        ],
      }),
      /"p" of vhost "\/" is in the file twice \(policies\[0\] and policies\[1\]\): keep one/,
    ],
    [
      stringify({ kind: 'OperatorPolicy', spec: { name: 'o', pattern: '^x' } }),
      /OperatorPolicy at document 1 cannot be read: its definition/,
    ],
    [stringify(['a', 'b']), /not a manifest of the topology operator/],
  ])('%s', (text, words) => {
    expect(problem(text)).toMatch(words);
  });

  it('a policy and an operator policy may share a name; the same policy in two vhosts is two policies', () => {
    const f = ok(
      JSON.stringify({
        policies: [
          { vhost: 'a', name: 'p', pattern: '^x', definition: {} },
          { vhost: 'b', name: 'p', pattern: '^x', definition: {} },
        ],
        parameters: [
          { vhost: 'a', component: 'operator_policy', name: 'p', value: { pattern: '^x', definition: {} } },
        ],
      }),
    );
    expect(f.policies).toHaveLength(3);
  });

  it('over 10 MB, and over 5,000 policies', () => {
    expect(problem(`{"x": "${'a'.repeat(MAX_FILE_BYTES)}"}`)).toMatch(/over the 10 MB/);
    const many = Array.from({ length: MAX_POLICIES + 1 }, (_, i) => ({
      vhost: '/',
      name: `p${i}`,
      pattern: '^x',
      definition: {},
    }));
    expect(problem(JSON.stringify({ policies: many }))).toMatch(/5001 policies, over the 5000/);
    expect(ok(JSON.stringify({ policies: many.slice(1) })).policies).toHaveLength(MAX_POLICIES);
  });
});

describe('readDefinitions: properties', () => {
  const policy = fc.record({
    vhost: fc.constantFrom('/', 'a', 'b'),
    name: fc.string({ minLength: 1, maxLength: 8 }),
    pattern: fc.string({ maxLength: 8 }),
    'apply-to': fc.constantFrom('all', 'queues', 'exchanges'),
    priority: fc.integer({ min: -5, max: 5 }),
    // Values as a JSON file holds them: jsonValue may give -0, which JSON writes as 0 and YAML as -0.
    definition: fc.dictionary(
      fc.string({ minLength: 1, maxLength: 5 }),
      fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown),
      { maxKeys: 3 },
    ),
  });

  it('an export and the same policies as manifests read alike; refused exactly when a policy repeats', () => {
    fc.assert(
      fc.property(fc.array(policy, { maxLength: 8 }), (ps) => {
        const fromJson = readDefinitions(JSON.stringify({ policies: ps }));
        const yaml = ps
          .map((p) =>
            stringify({
              kind: 'Policy',
              spec: {
                name: p.name,
                vhost: p.vhost,
                pattern: p.pattern,
                applyTo: p['apply-to'],
                priority: p.priority,
                definition: p.definition,
              },
            }),
          )
          .join('---\n');
        const fromYaml = readDefinitions(yaml.length ? yaml : 'kind: Namespace\n');
        const repeated = new Set(ps.map((p) => JSON.stringify([p.vhost, p.name]))).size < ps.length;
        expect(fromJson.ok).toBe(!repeated);
        expect(fromYaml.ok).toBe(!repeated);
        if (fromJson.ok && fromYaml.ok) {
          expect(fromYaml.file.policies.map((p) => p.policy)).toEqual(
            fromJson.file.policies.map((p) => p.policy),
          );
        }
      }),
    );
  });
});
