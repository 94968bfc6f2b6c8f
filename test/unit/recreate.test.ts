import { describe, expect, it } from 'vitest';
import { type LinkFacts, recreateCommand, recreatePolicyOf } from '../../src/links/index.ts';
import type { Policy } from '../../src/policy/index.ts';
import { setStandings } from '../../src/workflow/apply/stepGuard.ts';
import { type PolicySetStep, recreatedPolicy, type SetStep } from '../../src/workflow/changeSet.ts';
import { recreateSteps } from '../../src/workflow/filing/recreate.ts';
import { revertChanges } from '../../src/workflow/timebox/timebox.ts';

/**
 * Re-creating a policy (deleted, then created again as it is): which links it is the runbook's step
 * for, how its set is told from any other, and where each of its two steps stands before each write
 * (the apply reads one policy for both: src/workflow/apply/stepGuard.ts `setStandings`).
 */

const link = (over: Partial<LinkFacts>): LinkFacts => ({
  kind: 'exchange',
  vhost: '/',
  state: 'missing',
  policy: 'fed',
  reason: 'missing, no reason reported',
  ...over,
});

describe('recreatePolicyOf', () => {
  it.each([
    ['an exchange link missing for no reason the broker gives', link({}), 'fed'],
    ['a queue link missing for no reason', link({ kind: 'queue' }), 'fed'],
    ['a federation link stopped', link({ state: 'stopped', reason: 'econnrefused' }), 'fed'],
    ['a link whose upstream does not exist', link({ reason: 'the upstream "u" does not exist' }), null],
    ['a link whose set does not exist', link({ reason: 'the upstream set "s" does not exist' }), null],
    ['the plugin not enabled', link({ reason: 'the federation plugin is not enabled' }), null],
    ['a shovel', link({ kind: 'shovel', policy: null }), null],
    ['a link stuck starting', link({ state: 'stuck' }), null],
    ['a link running', link({ state: 'running' }), null],
  ])('%s', (_what, l, want) => {
    expect(recreatePolicyOf(l)).toBe(want);
  });

  it('says the command as typed in Slack, the vhost when not /', () => {
    expect(recreateCommand('fed', '/')).toBe('recreate "fed"');
    expect(recreateCommand('a b', 'prod')).toBe('recreate "a b" --vhost "prod"');
  });
});

const P: Policy = {
  vhost: 'v',
  name: 'fed',
  pattern: '^fed\\.',
  applyTo: 'exchanges',
  priority: 1,
  definition: { 'federation-upstream': 'u' },
};
const fields = (p: Policy | null) =>
  p && { pattern: p.pattern, applyTo: p.applyTo, priority: p.priority, definition: p.definition };
const STEPS: PolicySetStep[] = recreateSteps('user', 'v', P).map((t) => ({
  layer: t.layer,
  vhost: t.vhost,
  name: t.name,
  before: fields(t.before),
  after: fields(t.after),
}));

describe('a re-created policy as a set', () => {
  it('is told from any other set by its two steps', () => {
    expect(recreatedPolicy({ steps: STEPS })?.name).toBe('fed');
    expect(recreatedPolicy({ steps: STEPS.slice(0, 1) })).toBeNull();
    expect(recreatedPolicy({ steps: [...STEPS].reverse() })).toBeNull();
    const edited = { ...STEPS[1], after: { ...fields(P), priority: 2 } } as SetStep;
    expect(recreatedPolicy({ steps: [STEPS[0] as SetStep, edited] })).toBeNull();
  });

  it.each([
    // [cursor, what the broker holds, where each step stands]
    [0, P, ['as-planned', 'as-planned']],
    [0, null, ['written', 'as-planned']],
    [1, null, ['written', 'as-planned']],
    // A try that wrote the create and stopped before it saved the cursor: not written again.
    [1, P, ['written', 'written']],
    [0, { ...P, priority: 5 }, ['changed', 'as-planned']],
    [1, { ...P, priority: 5 }, ['written', 'changed']],
  ] as const)('before step %i, the broker holding %j: %j', (k, held, want) => {
    expect(setStandings(STEPS, k, () => held)).toEqual(want);
  });

  it('reverted, it has nothing to undo: the policy is as before the first write', () => {
    expect(revertChanges(STEPS, () => P)).toEqual([]);
    const edited = { ...P, priority: 5 };
    expect(revertChanges(STEPS, () => edited)).toEqual([
      { layer: 'user', vhost: 'v', name: 'fed', before: edited, after: { ...P } },
    ]);
  });

  it('reads every other set step by step, as before', () => {
    const other: SetStep = { ...(STEPS[1] as SetStep), name: 'other' };
    expect(setStandings([STEPS[0] as SetStep, other], 0, (s) => (s.name === 'fed' ? P : null))).toEqual([
      'as-planned',
      'as-planned',
    ]);
  });
});
