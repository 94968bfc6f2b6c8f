import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskUrisIn } from '../../src/core/uri.ts';
import { type FileParameter, readDefinitions } from '../../src/definitions/index.ts';
import {
  parameterChangesOf,
  parameterOrder,
  parameterRefusals,
  withoutDeleted,
} from '../../src/plan/parameters.ts';
import { linksInvolved, stepLinks } from '../../src/plan/stepLinks.ts';
import type { Parameter, ParameterTransition, Policy, Transition } from '../../src/policy/index.ts';
import { PatternCache } from '../../src/policy/pattern/index.ts';

/**
 * The parameters a definitions file plans beside its policies (src/plan/parameters.ts), the links
 * each step starts and stops (src/plan/stepLinks.ts), and a broker's refusal of one, masked
 * (src/core/uri.ts `maskUrisIn`). The same on real brokers: test/e2e/import-parameters.test.ts.
 */

const V = 'v';
const upstream = (name: string, value: object = { uri: `amqp://u:pw@h/${name}` }): Parameter => ({
  component: 'federation-upstream',
  vhost: V,
  name,
  value,
});
const set = (name: string, members: string[]): Parameter => ({
  component: 'federation-upstream-set',
  vhost: V,
  name,
  value: members.map((upstream) => ({ upstream })),
});
const shovel = (name: string): Parameter => ({
  component: 'shovel',
  vhost: V,
  name,
  value: { 'src-uri': 'amqp://', 'src-queue': 'a', 'dest-uri': 'amqp://', 'dest-queue': 'b' },
});
const inFile = (p: Parameter, extra: Partial<FileParameter> = {}): FileParameter => ({
  ...p,
  at: 'x',
  ...extra,
});
const policy = (name: string, definition: Record<string, unknown>, priority = 0): Policy => ({
  vhost: V,
  name,
  pattern: '^fed\\.',
  applyTo: 'exchanges',
  priority,
  definition,
});

describe('the parameters of a file against the broker', () => {
  it('creates, edits, leaves the same alone (keys in any order), deletes with --prune only what the file holds the component of', () => {
    const live = [upstream('same', { a: 1, b: 2 }), upstream('old'), upstream('gone'), shovel('kept')];
    const file = [
      inFile(upstream('same', { b: 2, a: 1 })),
      inFile(upstream('old', { uri: 'amqp://x' })),
      inFile(upstream('new')),
    ];
    const plain = parameterChangesOf(file, live, false);
    expect(plain.unchanged).toBe(1);
    expect(plain.changes.map((c) => [c.name, c.before ? 'before' : '-', c.after ? 'after' : '-'])).toEqual([
      ['old', 'before', 'after'],
      ['new', '-', 'after'],
    ]);
    // --prune: the upstream the file lacks goes; the shovel stays (the file holds no shovel).
    const pruned = parameterChangesOf(file, live, true);
    expect(pruned.changes.filter((c) => c.after === null).map((c) => c.name)).toEqual(['gone']);
  });

  it("a manifest's URIs are the broker's (said so); one the broker lacks is not planned, saying why", () => {
    const live = [upstream('there', { uri: 'amqp://u:pw@h', 'ack-mode': 'on-publish' })];
    const file = [
      inFile(upstream('there', { 'ack-mode': 'on-confirm' }), { uriSecret: 's1' }),
      inFile(upstream('absent', { 'ack-mode': 'on-confirm' }), { uriSecret: 's2' }),
    ];
    const { changes, notes } = parameterChangesOf(file, live, true);
    expect(changes).toHaveLength(1);
    expect(changes[0]?.after?.value).toEqual({ uri: 'amqp://u:pw@h', 'ack-mode': 'on-confirm' });
    expect(notes).toEqual([
      'The federation upstream "there" of vhost "v" (x): its URIs are in the Kubernetes Secret "s1" (uriSecret), which the bot cannot read from a file; compared and written with the URIs the broker has.',
      'The federation upstream "absent" of vhost "v" (x) is not planned: its URIs are in the Kubernetes Secret "s2" (uriSecret), which the bot cannot read from a file, and the broker has none to keep. Create it with the topology operator, or plan a definitions export that holds it.',
    ]);
  });

  it('orders creates and edits first (upstreams, sets, shovels), deletes last (the reverse)', () => {
    const t = (p: Parameter, kind: 'create' | 'delete'): ParameterTransition => ({
      component: p.component,
      vhost: V,
      name: p.name,
      before: kind === 'delete' ? p : null,
      after: kind === 'create' ? p : null,
    });
    const { first, last } = parameterOrder([
      t(shovel('s'), 'create'),
      t(upstream('u2'), 'delete'),
      t(set('set', []), 'create'),
      t(set('old', []), 'delete'),
      t(upstream('u'), 'create'),
      t(shovel('s2'), 'delete'),
    ]);
    expect(first.map((c) => c.name)).toEqual(['u', 'set', 's']);
    expect(last.map((c) => c.name)).toEqual(['s2', 'old', 'u2']);
  });

  it('refuses an upstream or set written where the federation plugin is known off; a shovel, a delete or plugins not known pass', () => {
    const changes: ParameterTransition[] = [
      { component: 'federation-upstream', vhost: V, name: 'u', before: null, after: upstream('u') },
      { component: 'federation-upstream', vhost: V, name: 'old', before: upstream('old'), after: null },
      { component: 'shovel', vhost: V, name: 's', before: null, after: shovel('s') },
    ];
    const mine = [inFile(upstream('u'), { at: 'parameters[0]' })];
    expect(parameterRefusals(changes, mine, new Set(), '3.10.8')).toEqual([
      'The federation upstream "u" of vhost "v" (parameters[0]): federation-upstream is accepted only while the federation plugin is enabled on the broker, and RabbitMQ 3.10.8 here has not enabled it: the broker refuses it. Enable rabbitmq_federation there, or leave it out.',
    ]);
    expect(parameterRefusals(changes, mine, new Set(['federation']), '4.3.6')).toEqual([]);
    expect(parameterRefusals(changes, mine, undefined, '4.3.6')).toEqual([]);
  });

  it('the upstreams and sets the set deletes are missing targets once it is written', () => {
    const names = { upstreams: new Set(['a', 'b']), upstreamSets: new Set(['s']) };
    const deleted: ParameterTransition[] = [
      { component: 'federation-upstream', vhost: V, name: 'a', before: upstream('a'), after: null },
    ];
    expect(withoutDeleted(names, deleted)).toEqual({
      upstreams: new Set(['b']),
      upstreamSets: new Set(['s']),
    });
  });
});

describe('the links each step starts and stops', () => {
  const version = { major: 4, minor: 3, patch: 6 };
  const objects = [
    { name: 'fed.x', kind: 'exchange' as const },
    { name: 'plain', kind: 'exchange' as const },
  ];
  const run = (user: Policy[], parameters: Parameter[], steps: (Transition | ParameterTransition)[]) =>
    stepLinks({ vhost: V, version, cache: new PatternCache(), user, parameters, steps, objects }).map(
      (l) => ({
        start: l.start.map((x) => `${x.object}<-${x.upstream ?? ''}${x.kind === 'shovel' ? 'shovel' : ''}`),
        stop: l.stop.map((x) => `${x.object}<-${x.upstream ?? ''}`),
      }),
    );
  const param = (p: Parameter, before: Parameter | null = null): ParameterTransition => ({
    component: p.component,
    vhost: V,
    name: p.name,
    before,
    after: p,
  });
  const gone = (p: Parameter): ParameterTransition => ({ ...param(p, p), after: null });
  const edit = (before: Policy | null, after: Policy | null): Transition => ({
    layer: 'user',
    vhost: V,
    name: (after ?? before)?.name ?? '',
    before,
    after,
  });

  it("the planner's order, an upstream before the policy that names it, starts the link once and stops none", () => {
    const fed = policy('fed', { 'federation-upstream': 'u' });
    expect(run([], [], [param(upstream('u')), edit(null, fed), param(shovel('s'))])).toEqual([
      { start: [], stop: [] },
      { start: ['fed.x<-u'], stop: [] },
      { start: ['s<-shovel'], stop: [] },
    ]);
  });

  it('moving a policy to a new set before the old one goes stops nothing the end keeps; the other way round would', () => {
    const now = [policy('fed', { 'federation-upstream-set': 'old' })];
    const live = [upstream('u1'), set('old', ['u1'])];
    const moved = policy('fed', { 'federation-upstream-set': 'new' });
    const right = run(now, live, [
      param(upstream('u2')),
      param(set('new', ['u1', 'u2'])),
      edit(now[0] ?? null, moved),
      gone(set('old', ['u1'])),
    ]);
    expect(right.flatMap((s) => s.stop)).toEqual([]);
    expect(right.flatMap((s) => s.start)).toEqual(['fed.x<-u2']);
    // The old set deleted first: its link stops, to start again once the policy names the new set.
    const wrong = run(now, live, [
      param(upstream('u2')),
      param(set('new', ['u1', 'u2'])),
      gone(set('old', ['u1'])),
      edit(now[0] ?? null, moved),
    ]);
    expect(wrong.flatMap((s) => s.stop)).toEqual(['fed.x<-u1']);
  });

  it('a policy without a federation key taking an object from one with it stops its links', () => {
    const fed = policy('fed', { 'federation-upstream-set': 'all' });
    const over = policy('over', { 'max-length': 1 }, 5);
    const steps = [edit(null, over)];
    expect(linksInvolved([fed], steps)).toBe(true);
    expect(run([fed], [upstream('a'), upstream('b')], steps)).toEqual([
      { start: [], stop: ['fed.x<-a', 'fed.x<-b'] },
    ]);
    expect(linksInvolved([], steps)).toBe(false);
  });
});

describe("the topology operator's Federation and Shovel manifests as parameters", () => {
  it("takes the broker's names for the spec's fields, leaves out what the operator does (empty), keeps the Secret's name", () => {
    const read = readDefinitions(
      [
        'kind: Federation',
        'spec: { name: up, uriSecret: { name: s }, ackMode: on-confirm, messageTTL: 5000, maxHops: 1, trustUserId: false, prefetch-count: 10, rabbitmqClusterReference: { name: c } }',
        '---',
        'kind: Shovel',
        'spec: { name: sh, vhost: v, uriSecret: { name: t }, srcQueue: a, destExchangeKey: k, destApplicationProperties: {}, deleteAfter: never }',
      ].join('\n'),
    );
    if (!read.ok) throw new Error(read.problem);
    expect(read.file.parameters).toEqual([
      {
        component: 'federation-upstream',
        vhost: '/',
        name: 'up',
        value: { 'ack-mode': 'on-confirm', 'message-ttl': 5000, 'max-hops': 1, 'prefetch-count': 10 },
        at: 'document 1',
        uriSecret: 's',
      },
      {
        component: 'shovel',
        vhost: 'v',
        name: 'sh',
        value: { 'src-queue': 'a', 'dest-exchange-key': 'k', 'delete-after': 'never' },
        at: 'document 2',
        uriSecret: 't',
      },
    ]);
    expect(read.file.vhosts).toEqual(['/', 'v']);
  });

  it('refuses a parameter twice, one without a name, and a set that is not a list of upstreams', () => {
    const refused = (parameters: object[]) => {
      const r = readDefinitions(JSON.stringify({ parameters }));
      return r.ok ? '' : r.problem;
    };
    const up = { component: 'federation-upstream', vhost: 'v', name: 'u', value: { uri: 'amqp://' } };
    expect(refused([up, up])).toBe(
      'The federation upstream "u" of vhost "v" is in the file twice (parameters[0] and parameters[1]): keep one.',
    );
    expect(refused([{ ...up, name: '' }])).toBe(
      'The federation upstream at parameters[0] has no name: give it one.',
    );
    expect(refused([{ component: 'federation-upstream-set', vhost: 'v', name: 's', value: ['u'] }])).toBe(
      'The federation upstream set "s" (parameters[0]) has a value that is not a list of upstreams: a federation upstream set is [{"upstream": NAME}, …].',
    );
  });
});

describe("a broker's refusal of a parameter, masked", () => {
  it('hides every URI of the text and every password of the value written, however the broker quoted it', () => {
    // As 4.3.6 answers a shovel whose URI it cannot parse (test/e2e/import-parameters.test.ts).
    const uri = 'amqp://bob:s3cretPW@nohost:bad:port';
    const text = `Validation failed\n\n"${uri}" not a valid URI: {{unable_to_parse_uri,{malformed_uri,\\"${uri}\\",{'EXIT',badarg}}}}`;
    const masked = maskUrisIn(text, { 'dest-uri': uri });
    expect(masked).not.toContain('s3cretPW');
    expect(masked).toContain('amqp://bob:***@nohost:bad:port');
  });

  it('never shows the password, whatever it holds', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z]{1,8}$/),
        fc.string({ minLength: 4, maxLength: 30 }),
        fc.constantFrom('"', '\\"', '<<"', ' '),
        (user, password, quote) => {
          const uri = `amqp://${user}:${password}@upstream.example:5672/v`;
          const text = `Validation failed ${quote}${uri}${quote} not a valid URI: {${quote}${uri}${quote}}`;
          fc.pre(
            !`Validation failed ${quote}amqp://${user}:***@upstream.example:5672/v not a valid URI: {}`.includes(
              password,
            ),
          );
          expect(maskUrisIn(text, { uri: [uri] })).not.toContain(password);
        },
      ),
    );
  });
});
