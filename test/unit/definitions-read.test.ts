import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { jsonErrorOffset, lineAndColumn } from '../../src/definitions/jsonSyntax.ts';
import {
  MAX_DEPTH,
  MAX_FILE_BYTES,
  MAX_POLICIES,
  readDefinitions,
  readDefinitionsFolder,
  withDeclared,
} from '../../src/definitions/read.ts';

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
const ok2 = (text: string, options: Parameters<typeof readDefinitions>[1]) => {
  const r = readDefinitions(text, options);
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
    // Its federation upstream is planned with its policies (a parameter), not counted.
    expect(f.ignored).toEqual({ queues: 2, bindings: 1 });
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
      /OperatorPolicy at document 1 cannot be read: it has no definition \(under spec\)/,
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

describe('readDefinitions: the topology operator, as its CRDs read', () => {
  it('an OperatorPolicy without applyTo applies to queues; all and exchanges are refused; a Policy keeps all', () => {
    const op = (spec: object) =>
      stringify({
        kind: 'OperatorPolicy',
        spec: { name: 'o', pattern: '.*', definition: { 'max-length': 1 }, ...spec },
      });
    expect(ok(op({})).policies[0]?.policy.applyTo).toBe('queues');
    for (const applyTo of ['classic_queues', 'quorum_queues', 'streams'])
      expect(ok(op({ applyTo })).policies[0]?.policy.applyTo).toBe(applyTo);
    expect(problem(op({ applyTo: 'all' }))).toMatch(
      /applyTo "all": the topology operator takes queues, classic_queues, quorum_queues, streams/,
    );
    expect(problem(op({ applyTo: 'exchanges' }))).toMatch(/applyTo "exchanges"/);
    expect(
      ok(stringify({ kind: 'Policy', spec: { name: 'p', pattern: '.*', definition: { 'max-length': 1 } } }))
        .policies[0]?.policy.applyTo,
    ).toBe('all');
  });

  it('an empty spec is said in words', () => {
    expect(problem('kind: Policy\nspec:\n')).toBe(
      'The Policy at document 1 has an empty spec: a Policy needs its name, pattern and definition under spec (and may give vhost, applyTo and priority).',
    );
    expect(problem('kind: OperatorPolicy\nspec: {}\n')).toMatch(
      /^The OperatorPolicy at document 1 has an empty spec/,
    );
  });
});

describe('readDefinitions: the vhosts of the file', () => {
  const whole = JSON.stringify({
    policies: [
      { vhost: 'staging', name: 'p', pattern: '^x', definition: {} },
      { vhost: 'other', name: 'q', pattern: '^x', definition: {} },
    ],
  });

  it('--vhost-map reads a vhost of the file as another, and says where each vhost came from', () => {
    const f = ok2(whole, { vhostMap: new Map([['staging', 'production']]) });
    expect(f.policies.map((p) => p.policy.vhost)).toEqual(['production', 'other']);
    expect(f.vhosts).toEqual(['other', 'production']);
    expect(f.origins).toEqual({ production: { by: '--vhost-map', from: 'staging' }, other: { by: 'file' } });
    expect(
      ok2(whole, { vhost: 'production', vhostMap: new Map([['staging', 'production']]) }).policies,
    ).toHaveLength(1);
    expect(ok(JSON.stringify(export43)).origins).toEqual({ v1: { by: 'export' } });
    expect(
      ok(stringify({ kind: 'Policy', spec: { name: 'p', pattern: 'x', definition: {} } })).origins,
    ).toEqual({ '/': { by: 'file' } });
    expect(ok(JSON.stringify({ policies: [{ name: 'p', pattern: 'x', definition: {} }] })).origins).toEqual({
      '/': { by: 'default' },
    });
    expect(ok(JSON.stringify(export43), 'v9').origins).toEqual({ v9: { by: '--vhost' } });
  });

  it('a --vhost-map whose FROM the file does not name is refused, naming those it does', () => {
    const r = readDefinitions(whole, { vhostMap: new Map([['stagin', 'production']]) });
    expect(r.ok ? '' : r.problem).toBe(
      '--vhost-map stagin=production: the file names no vhost "stagin" (it names "other", "staging").',
    );
  });

  it("the federation upstreams it declares (an export's parameters, the operator's Federation) join the broker's", () => {
    const f = ok(JSON.stringify(export310));
    expect(f.declared).toEqual([{ key: 'federation-upstream', vhost: 'v1', name: 'up' }]);
    const names = { upstreams: new Set(['there']), upstreamSets: null, links: null };
    expect(withDeclared(f, 'v1', names)).toEqual({
      upstreams: new Set(['there', 'up']),
      upstreamSets: null,
      links: null,
    });
    expect(withDeclared(f, 'v2', names)).toBe(names);
    // Not read from the broker: still unknown.
    expect(withDeclared(f, 'v1', { upstreams: null, upstreamSets: null }).upstreams).toBeNull();
    const manifests = ok(
      [
        stringify({ kind: 'Federation', spec: { name: 'origin', vhost: 'v', uriSecret: { name: 's' } } }),
        stringify({ kind: 'Federation', spec: { name: 'root', uriSecret: { name: 't' } } }),
      ].join('---\n'),
    );
    expect(manifests.declared).toEqual([
      { key: 'federation-upstream', vhost: 'v', name: 'origin' },
      { key: 'federation-upstream', vhost: '/', name: 'root' },
    ]);
    expect(manifests.ignored).toEqual({});
    // The operator requires the Secret of its URIs: a manifest without one is refused, saying so.
    const bare = readDefinitions(stringify({ kind: 'Federation', spec: { name: 'root' } }));
    expect(bare.ok ? '' : bare.problem).toBe(
      'The Federation at document 1 has no uriSecret (the Kubernetes Secret holding its URIs): the topology operator requires one.',
    );
  });
});

describe('readDefinitionsFolder', () => {
  const manifest = (name: string, vhost = '/') =>
    `apiVersion: rabbitmq.com/v1beta1\nkind: Policy\nspec: {name: ${name}, vhost: ${vhost}, pattern: ^x, definition: {max-length: 1}}\n`;

  it('reads each file on its own (none starts with ---) as one set; an empty file is nothing', () => {
    const r = readDefinitionsFolder('k8s', [
      { name: 'k8s/a.yaml', bytes: manifest('a') },
      { name: 'k8s/b.yaml', bytes: Buffer.from(manifest('b', 'v')) },
      {
        name: 'k8s/c.json',
        bytes: JSON.stringify({ policies: [{ vhost: 'v', name: 'c', pattern: '^c', definition: {} }] }),
      },
      { name: 'k8s/empty.yaml', bytes: '# nothing yet\n' },
    ]);
    if (!r.ok) throw new Error(r.problem);
    expect(r.file.format).toBe('folder');
    expect(r.file.policies.map((p) => [p.policy.vhost, p.policy.name, p.at])).toEqual([
      ['/', 'a', '"k8s/a.yaml" document 1'],
      ['v', 'b', '"k8s/b.yaml" document 1'],
      ['v', 'c', '"k8s/c.json" policies[0]'],
    ]);
  });

  it('refuses the whole at the first file it cannot use, naming it; the same policy in two files; none at all', () => {
    const no = (sources: Parameters<typeof readDefinitionsFolder>[1]) => {
      const r = readDefinitionsFolder('k8s', sources);
      return r.ok ? '' : r.problem;
    };
    expect(
      no([
        { name: 'k8s/a.yaml', bytes: manifest('a') },
        { name: 'k8s/b.yaml', bytes: 'kind: Policy\nspec: [1\n' },
      ]),
    ).toMatch(/^The file "k8s\/b.yaml" is neither JSON nor valid YAML/);
    expect(no([{ name: 'k8s/a.json', bytes: '{"policies": [' }])).toMatch(
      /^The file "k8s\/a.json" is not valid JSON/,
    );
    expect(
      no([
        { name: 'k8s/a.yaml', bytes: manifest('a') },
        { name: 'k8s/b.yaml', bytes: manifest('a') },
      ]),
    ).toBe(
      'The policy "a" of vhost "/" is in the folder twice ("k8s/a.yaml" document 1 and "k8s/b.yaml" document 1): keep one.',
    );
    expect(no([])).toMatch(/^The folder "k8s" holds no .json, .yaml or .yml file/);
  });
});

describe('readDefinitions: what it must not choke on', () => {
  it('a YAML alias bomb, and nesting past MAX_DEPTH (JSON and YAML), refused with a sentence', () => {
    const bomb = [
      'a0: &a0 [x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(9).fill(`*a${i}`).join(', ')}]`),
    ].join('\n');
    expect(problem(bomb)).toMatch(
      /YAML document 1 expands its aliases \(\*name\) into more than the bot reads/,
    );
    const nested = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const file = (n: number) =>
      `{"policies": [{"vhost": "/", "name": "p", "pattern": "^x", "definition": {"x": ${nested(n)}}}]}`;
    // The definition is at depth 4 (the file, policies, the policy, the definition): a value of
    // it may nest 60 more.
    expect(ok(file(MAX_DEPTH - 4)).policies).toHaveLength(1);
    expect(problem(file(MAX_DEPTH - 3))).toBe(
      `The file is nested more than ${MAX_DEPTH} levels deep (under policies[0]): no definitions export or manifest is; is it the right file?`,
    );
    expect(problem(file(3000))).toMatch(/nested more than 64 levels deep/);
    expect(
      problem(
        `kind: Policy\nspec: {name: p, pattern: x, definition: {x: ${'['.repeat(3000)}${']'.repeat(3000)}}}\n`,
      ),
    ).toMatch(/nested more than 64 levels deep/);
  });

  it('__proto__, constructor and prototype in a definition are kept as keys (for the validation to refuse), never dropped', () => {
    const f = ok(
      '{"policies": [{"vhost": "/", "name": "p", "pattern": "^x", "definition": {"__proto__": {"max-length": 1}, "constructor": 2, "message-ttl": 60000}}]}',
    );
    const d = f.policies[0]?.policy.definition ?? {};
    expect(Object.keys(d)).toEqual(['__proto__', 'constructor', 'message-ttl']);
    expect(Object.getPrototypeOf(d)).toBe(Object.prototype);
    const y = ok(
      'kind: Policy\nspec:\n  name: p\n  pattern: x\n  definition:\n    __proto__: {max-length: 1}\n',
    );
    expect(Object.keys(y.policies[0]?.policy.definition ?? {})).toEqual(['__proto__']);
  });

  it('a JSON error at its line and column', () => {
    expect(problem('{\n  "policies": [\n    {"name": "p",}\n  ]\n}')).toBe(
      'The file is not valid JSON: Expected double-quoted property name, at line 3, column 18. Export it again, or fix it there.',
    );
    expect(problem('{"policies": [')).toMatch(
      /not valid JSON: Unexpected end of the file, at line 1, column 15\./,
    );
    expect(problem('{"a": tru}')).toMatch(/not valid JSON: Unexpected token '}', at line 1, column 10\./);
  });
});

describe('jsonErrorOffset', () => {
  it('finds an error exactly where JSON.parse does: none for JSON, one for anything JSON.parse refuses', () => {
    const jsonish = fc.oneof(
      fc.json(),
      fc.json().map((t) => t.slice(0, Math.max(0, t.length - 1))),
      fc
        .tuple(fc.json(), fc.nat(), fc.constantFrom(',', '}', ']', '"', ':', 'x', '\n', '\\', '-', '0'))
        .map(([t, at, c]) => `${t.slice(0, at % (t.length + 1))}${c}${t.slice(at % (t.length + 1))}`),
    );
    fc.assert(
      fc.property(jsonish, (text) => {
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        const at = jsonErrorOffset(text);
        expect(at === -1).toBe(parses);
        if (!parses) expect(at).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 2000 },
    );
  });

  it('line and column count from 1', () => {
    expect(lineAndColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn('ab', 0)).toEqual({ line: 1, column: 1 });
  });
});
