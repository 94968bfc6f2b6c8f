/**
 * The `upgrade` kind of lint (`--target-version`) and `upgradeNotes`, path's line: each cause on
 * the smallest world that holds it and not on its clean twin; the governance that moves with a
 * type's vetoes against resolve() read at both versions, for random worlds; the shared reading
 * against `unshared`; the flag and the views. Against the brokers, by moving a vhost's
 * definitions: test/e2e/lint-upgrade.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type LintResult, parseLint, whyOf } from '../../src/commands/lint/lint.ts';
import { buildPolicySet, resolve } from '../../src/policy/index.ts';
import { keysDroppedBy } from '../../src/policy/keys.ts';
import { type Finding, Linter, type LintObject } from '../../src/policy/lint/lint.ts';
import type { LintContext } from '../../src/policy/lint/lintTypes.ts';
import { PatternCache } from '../../src/policy/pattern/pattern.ts';
import type { ObjectKind, Policy } from '../../src/policy/types.ts';
import { targetBrokerVersion, upgradeNotes } from '../../src/policy/upgrade.ts';
import { lintView } from '../../src/slack/views/lint.ts';
import { lintText } from '../../src/terminal/lint.ts';
import { checkMessage } from '../support/fakeSlack.ts';
import { policyIn, V40, V310 } from '../support/policies.ts';

const pol = policyIn('v');

const q = (
  name: string,
  kind: ObjectKind | null = 'classic',
  more: Partial<LintObject> = {},
): LintObject => ({
  name,
  kind,
  arguments: {},
  ...more,
});

function lint(
  user: Policy[],
  objects: LintObject[],
  context: LintContext,
  opts: { version?: typeof V310; operator?: Policy[]; unshared?: boolean } = {},
): Finding[] {
  const cache = new PatternCache();
  const set = buildPolicySet(user, opts.operator ?? [], opts.version ?? V310, cache);
  const linter = new Linter(set, cache, { context, unshared: opts.unshared === true });
  for (const o of objects) linter.add(o);
  linter.settle();
  return linter.findings(new Map(), {}, 0);
}

const upgrades = (fs: Finding[]) =>
  fs.flatMap((f) =>
    f.kind === 'upgrade' ? [[f.severity, f.cause, f.policy, f.objects, f.keys, f.other]] : [],
  );

describe('each cause, and its clean twin', () => {
  it('refused-keys: ha-* from 4.0, queue-master-locator from 4.3 (4.0 takes it); reported if it governs nothing', () => {
    const ha = pol('ha', '^m\\.', 1, { 'ha-mode': 'all', 'message-ttl': 5 }, 'queues');
    const qml = pol('qml', '^l\\.', 1, { 'queue-master-locator': 'min-masters' }, 'queues');
    const idle = pol('idle', '^none\\.', 1, { 'ha-sync-mode': 'automatic' }, 'queues');
    const objects = [q('m.1'), q('l.1')];
    expect(upgrades(lint([ha, qml, idle], objects, { target: '4.0' }))).toEqual([
      ['error', 'refused-keys', 'ha', ['m.1'], ['ha-mode'], null],
      ['error', 'refused-keys', 'idle', [], ['ha-sync-mode'], null],
    ]);
    expect(upgrades(lint([ha, qml], objects, { target: '4.3' }))).toEqual([
      ['error', 'refused-keys', 'ha', ['m.1'], ['ha-mode'], null],
      ['error', 'refused-keys', 'qml', ['l.1'], ['queue-master-locator'], null],
    ]);
    // No target: no upgrade finding; a broker already on the target's minor: nothing to cross.
    expect(upgrades(lint([ha, qml], objects, {}))).toEqual([]);
    expect(upgrades(lint([qml], objects, { target: '4.0' }, { version: V40 }))).toEqual([]);
    const f = lint([ha], objects, { target: '4.0' }).find((x) => x.kind === 'upgrade');
    expect(f && whyOf(f)).toMatch(
      /^4\.0 refuses "ha-mode" of Policy "ha" \(not recognised policy settings there\): it would refuse the policy whole, and an import of these definitions would stop at it/,
    );
  });

  it('governs / stops-governing: a veto the target lifts or adds moves the queue to another policy', () => {
    const qll = pol('qll', '^a\\.', 2, { 'queue-leader-locator': 'balanced', 'max-length': 7 }, 'queues');
    const low = pol('low', '^a\\.', 1, { 'max-length': 99 }, 'queues');
    const mem = pol('mem', '^b\\.', 2, { 'max-in-memory-length': 10 }, 'queues');
    const memLow = pol('mem-low', '^b\\.', 1, { 'max-length': 50 }, 'queues');
    const objects = [q('a.1'), q('b.1')];
    expect(upgrades(lint([qll, low, mem, memLow], objects, { target: '4.0' }))).toEqual([
      ['warning', 'stops-governing', 'mem', ['b.1'], ['max-in-memory-length'], 'mem-low'],
      ['warning', 'governs', 'qll', ['a.1'], ['queue-leader-locator'], 'low'],
    ]);
    // Under a tie on the target, which one governs is the broker's pick: not claimed.
    const tied = pol('tied', '^a\\.', 2, { 'max-length': 3 }, 'queues');
    expect(upgrades(lint([qll, tied], [q('a.1')], { target: '4.0' }))).toEqual([]);
  });

  it('delivery-limit: a quorum queue with no limit and no dead-letter target; with a target, info', () => {
    const dlx = pol('dlx', '^d\\.', 1, { 'dead-letter-exchange': 'x' }, 'queues');
    const limit = pol('limit', '^l\\.', 1, { 'delivery-limit': 3 }, 'queues');
    const objects = [
      q('n.1', 'quorum'),
      q('d.1', 'quorum'),
      q('l.1', 'quorum'),
      q('a.1', 'quorum', { arguments: { 'x-delivery-limit': 2 } }),
      q('n.c'),
    ];
    expect(upgrades(lint([dlx, limit], objects, { target: '4.0' }))).toEqual([
      ['warning', 'delivery-limit', '', ['n.1'], [], null],
      ['info', 'delivery-limit-dead-letter', 'dlx', ['d.1'], [], null],
    ]);
    expect(upgrades(lint([dlx, limit], objects, { target: '4.3' }, { version: V40 }))).toEqual([]);
  });

  it('refused-argument: x-queue-version 1 on 4.3, not on 4.0', () => {
    const objects = [
      q('v1', 'classic', { arguments: { 'x-queue-version': 1 } }),
      q('v2', 'classic', { arguments: { 'x-queue-version': 2 } }),
    ];
    expect(upgrades(lint([], objects, { target: '4.3' }))).toEqual([
      ['error', 'refused-argument', '', ['v1'], ['x-queue-version'], null],
    ]);
    expect(upgrades(lint([], objects, { target: '4.0' }))).toEqual([]);
  });

  it('transient queues: predicted where the broker reports no deprecated features, else its own report with its phase', () => {
    const objects = [
      q('t.1', 'classic', { durable: false, exclusive: false }),
      q('t.x', 'classic', { durable: false, exclusive: true }),
      q('d.1', 'classic', { durable: true, exclusive: false }),
      q('u.1'),
    ];
    expect(upgrades(lint([], objects, { target: '4.0', deprecated: null }))).toEqual([
      ['info', 'transient-queue', '', ['t.1'], [], null],
    ]);
    const reported = lint([], objects, {
      target: '4.3',
      deprecated: [
        { name: 'transient_nonexcl_queues', phase: 'permitted_by_default' },
        { name: 'global_qos', phase: 'denied_by_default' },
      ],
    }).filter((f) => f.kind === 'upgrade');
    expect(reported.map((f) => [f.severity, f.objects, f.kind === 'upgrade' && f.feature?.name])).toEqual([
      ['warning', [], 'global_qos'],
      ['info', ['t.1'], 'transient_nonexcl_queues'],
    ]);
    expect(whyOf(reported[1] as Finding)).toContain('in phase "permitted_by_default" on this version');
  });
});

describe('the governance that moves with the version, against resolve() at both', () => {
  const keys = fc.constantFrom(
    { 'max-length': 1 },
    { 'queue-leader-locator': 'balanced' },
    { 'max-in-memory-length': 3 },
    { 'max-in-memory-bytes': 3, 'max-length': 2 },
    { 'ha-mode': 'all' },
    { 'queue-master-locator': 'min-masters' },
    { 'queue-mode': 'lazy' },
    { 'delivery-limit': 4 },
    { 'max-priority': 3 },
    { 'target-group-size': 2 },
  );
  const policyArb = fc.record({
    pattern: fc.constantFrom('^a', '^a\\.', '^b', '.', 'a'),
    priority: fc.integer({ min: 0, max: 2 }),
    definition: keys,
  });
  const objectArb = fc.tuple(
    fc.constantFrom('a', 'a.1', 'b', 'ab', 'xa'),
    fc.constantFrom<ObjectKind>('classic', 'quorum', 'stream'),
  );

  it('governs and stops-governing name exactly the objects whose winner moves by a veto', () => {
    fc.assert(
      fc.property(
        fc.array(policyArb, { maxLength: 6 }),
        fc.array(objectArb, { minLength: 1, maxLength: 12 }),
        fc.constantFrom('4.0', '4.3' as const),
        (ps, os, target) => {
          const user = ps.map((p, i) => pol(`p${i}`, p.pattern, p.priority, p.definition, 'queues'));
          const objects = os.map(([n, kind], i) => q(`${n}${i}`, kind));
          const to = targetBrokerVersion(target);
          const kept = user.filter((p) => keysDroppedBy(p.definition, false, V310, to).length === 0);
          const now = buildPolicySet(user, [], V310, new PatternCache());
          const then = buildPolicySet(kept, [], to, new PatternCache());
          const expected = new Map<string, string[]>();
          for (const o of objects) {
            const a = resolve(now, o.name, o.kind).user.candidates;
            const b = resolve(then, o.name, o.kind).user.candidates;
            if (a.length > 1 || b.length > 1) continue;
            const [was] = a;
            const [will] = b;
            if (was === will || (was && !kept.includes(was))) continue;
            const id =
              will &&
              !resolve(now, o.name, o.kind).user.matches.some(
                (m) => m.policy === will && m.refused.length === 0,
              )
                ? `governs ${will.name} ${was?.name ?? null} ${o.kind}`
                : `stops-governing ${was?.name} ${will?.name ?? null} ${o.kind}`;
            expected.set(id, [...(expected.get(id) ?? []), o.name]);
          }
          // path's line, from the same matches resolve() gives: the same moves, object by object.
          const noted = new Map<string, string[]>();
          for (const o of objects) {
            const r = resolve(now, o.name, o.kind).user;
            if (r.candidates.length > 1) continue;
            const facts = { kind: o.kind, arguments: {}, user: r.candidates[0] ?? null, operator: null };
            const matches = { user: r.matches.map((m) => m.policy), operator: [] };
            for (const n of upgradeNotes(facts, V310, target, { name: (x) => x }, null, matches)) {
              if (n.cause !== 'governs' && n.cause !== 'stops-governing') continue;
              const id =
                [...expected].find(([, names]) => names.includes(o.name))?.[0] ?? `unexpected ${n.why}`;
              noted.set(id, [...(noted.get(id) ?? []), o.name]);
            }
          }
          expect(noted).toEqual(expected);
          const found = new Map<string, string[]>();
          for (const shared of [false, true]) {
            found.clear();
            for (const f of lint(user, objects, { target }, { unshared: shared }))
              if (f.kind === 'upgrade' && (f.cause === 'governs' || f.cause === 'stops-governing'))
                found.set(`${f.cause} ${f.policy} ${f.other} ${f.type}`, [...f.objects]);
            expect(new Map([...found].map(([k, v]) => [k, [...v].sort()]))).toEqual(
              new Map([...expected].map(([k, v]) => [k, [...v].sort()])),
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("upgradeNotes: path's line for one object", () => {
  const words = { name: (s: string) => `"${s}"` };
  it("its policy refused, a delivery limit, a transient queue; the broker's own report where it has one", () => {
    const ha = pol('ha', '^m', 1, { 'ha-mode': 'all' }, 'queues');
    const notes = upgradeNotes(
      { kind: 'classic', durable: false, exclusive: false, arguments: {}, user: ha, operator: null },
      V310,
      '4.0',
      words,
    );
    expect(notes.map((n) => [n.cause, n.severity])).toEqual([
      ['refused-keys', 'error'],
      ['transient-queue', 'info'],
    ]);
    const qll = pol('qll', '^a', 2, { 'queue-leader-locator': 'balanced' }, 'queues');
    const low = pol('low', '^a', 1, { 'max-length': 99 }, 'queues');
    const moved = upgradeNotes(
      { kind: 'classic', arguments: {}, user: low, operator: null },
      V310,
      '4.0',
      words,
      null,
      { user: [qll, low], operator: [] },
    );
    expect(moved).toMatchObject([{ cause: 'governs', severity: 'warning' }]);
    expect(moved[0]?.why).toBe(
      'On 4.0 Policy "qll" would govern 1 classic queue it does not govern now (that type refuses its "queue-leader-locator" here and takes it there), in place of policy "low".',
    );
    const quorum = upgradeNotes(
      { kind: 'quorum', arguments: {}, user: null, operator: null },
      V310,
      '4.3',
      words,
    );
    expect(quorum).toMatchObject([{ cause: 'delivery-limit', severity: 'warning' }]);
    expect(quorum[0]?.why).toMatch(
      /^On 4\.3 this quorum queue \(governed by no policy\) would get a delivery limit of 20/,
    );
    const reported = upgradeNotes(
      { kind: 'classic', durable: false, exclusive: false, arguments: {}, user: null, operator: null },
      V40,
      '4.3',
      words,
      [{ name: 'transient_nonexcl_queues', phase: 'permitted_by_default' }],
    );
    expect(reported).toMatchObject([{ cause: 'deprecated-feature', severity: 'info' }]);
    expect(
      upgradeNotes(
        { kind: 'classic', durable: true, exclusive: false, arguments: {}, user: null, operator: null },
        V40,
        '4.3',
        words,
        [],
      ),
    ).toEqual([]);
  });
});

describe('the flag and the views', () => {
  it('--target-version takes 4.0 or 4.3', () => {
    expect(parseLint(['--vhost', 'v', '--target-version', '4.3'])).toMatchObject({ targetVersion: '4.3' });
    expect(parseLint(['--vhost', 'v']).targetVersion).toBeUndefined();
    expect(() => parseLint(['--target-version', '3.13'])).toThrow(
      /--target-version takes 4\.0 or 4\.3, got "3\.13"/,
    );
  });

  const result = (findings: Finding[], deprecatedFeatures: LintResult['deprecatedFeatures']): LintResult => ({
    env: 'prod',
    vhost: 'v',
    answer: 'linted',
    brokerVersion: '3.10.8',
    targetVersion: '4.0',
    deprecatedFeatures,
    findings: findings.map((f) => ({ ...f, why: whyOf(f) })),
    policies: 1,
    objects: 1,
    notRead: [],
  });
  const found = lint([pol('ha', '^m', 1, { 'ha-mode': 'all' }, 'queues')], [q('m.1')], { target: '4.0' });

  it('Slack: the target in the heading, the finding, and what the broker reports of deprecated features', () => {
    const m = lintView(result(found, null));
    expect(checkMessage({ ...m })).toBeNull();
    const text = JSON.stringify(m.blocks);
    expect(text).toContain('(upgrade to 4.0 read)');
    expect(text).toContain('upgrade');
    expect(text).toContain('not reported by this version of the broker');
    expect(JSON.stringify(lintView(result(found, [])).blocks)).toContain('none, the broker reports');
  });

  it('terminal: the same', () => {
    const t = lintText(result(found, null));
    expect(t.split('\n')[0]).toContain('(broker 3.10.8, upgrade to 4.0 read)');
    expect(t).toMatch(/ERROR {2}upgrade {2}4\.0 refuses "ha-mode" of Policy "ha"/);
    expect(t).toContain('Deprecated features in use: not reported by this version');
  });
});
