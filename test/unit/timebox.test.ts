import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImportBody, parseImport } from '../../src/commands/import/import.ts';
import { formatDuration, parseDuration } from '../../src/core/duration.ts';
import { InputError } from '../../src/core/errors.ts';
import { createLogger } from '../../src/log/log.ts';
import type { Policy } from '../../src/policy/types.ts';
import type { WorkflowBroker } from '../../src/workflow/broker.ts';
import type { PolicySetStep } from '../../src/workflow/changeSet.ts';
import { revertWayRefusal } from '../../src/workflow/rules.ts';
import {
  parseTimeBox,
  revertChanges,
  revertDecision,
  revertOf,
  revertSteps,
  scheduleOf,
  setRevertDecision,
} from '../../src/workflow/timebox/timebox.ts';
import { timeBoxHandlers } from '../../src/workflow/timebox/timeboxDeadline.ts';
import type { ChangeRequest } from '../../src/workflow/types.ts';

const p = (definition: Record<string, unknown>, priority = 1): Policy => ({
  vhost: '/',
  name: 'orders-limit',
  pattern: '^orders\\.',
  applyTo: 'queues',
  priority,
  definition,
});

describe('durations', () => {
  it.each([
    ['20s', 20_000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['7d', 604_800_000],
    ['500ms', 500],
    ['2H', 7_200_000],
  ])('%s is %i ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '5', 'h', '2 h', '2x', '-1h', '1h-'])('%j is not a duration', (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );

  it('formats whole seconds back to what parses to the same value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 * 86_400 }), (s) => {
        expect(parseDuration(formatDuration(s * 1000).replaceAll(' ', ''))).toBe(s * 1000);
      }),
    );
  });
});

describe('--for', () => {
  it.each([
    ['30m', 'create', 1_800_000],
    ['2h', 'edit', 7_200_000],
    ['7d', 'edit', 604_800_000],
    ['20s', 'edit', 20_000],
  ])('--for %s on %s', (text, action, ms) => expect(parseTimeBox(text, action)).toBe(ms));

  it.each([
    ['2h', 'delete', /--for is for create and edit/],
    ['8d', 'edit', /at most a week/],
    ['5s', 'create', /too short: at least 10s/],
    ['soon', 'create', /duration such as 30m or 2h, got "soon"/],
  ])('--for %s on %s is refused, saying what to type', (text, action, message) => {
    expect(() => parseTimeBox(text, action)).toThrow(InputError);
    expect(() => parseTimeBox(text, action)).toThrow(message);
  });
});

describe('the revert at the deadline', () => {
  it('of a create deletes it; of an edit writes the old definition back', () => {
    expect(revertOf(null, p({ 'max-length': 9 }))).toEqual({
      action: 'delete',
      applied: p({ 'max-length': 9 }),
      restore: null,
    });
    expect(revertOf(p({ 'max-length': 1 }), p({ 'max-length': 9 }))).toMatchObject({
      action: 'edit',
      restore: p({ 'max-length': 1 }),
    });
  });

  it('reverts only a policy still as the change left it; asks otherwise; does nothing when it is back', () => {
    const r = revertOf(p({ 'max-length': 1 }), p({ 'max-length': 9 }));
    expect(revertDecision(r, p({ 'max-length': 9 })).kind).toBe('revert');
    expect(revertDecision(r, p({ 'max-length': 10 }))).toEqual({
      kind: 'ask',
      why: 'the policy was changed again since the change',
    });
    expect(revertDecision(r, p({ 'max-length': 9 }, 2)).kind).toBe('ask');
    expect(revertDecision(r, null)).toEqual({ kind: 'ask', why: 'the policy was deleted since the change' });
    expect(revertDecision(r, p({ 'max-length': 1 })).kind).toBe('done');
    const created = revertOf(null, p({ 'max-length': 9 }));
    expect(revertDecision(created, null).kind).toBe('done');
  });

  it('warns 10 minutes before the deadline, not when the box is shorter', () => {
    const at = new Date('2026-11-30T12:00:00Z');
    expect(scheduleOf(at, 2 * 3_600_000)).toEqual({
      deadline: new Date('2026-11-30T14:00:00Z'),
      warnAt: new Date('2026-11-30T13:50:00Z'),
    });
    expect(scheduleOf(at, 20_000).warnAt).toBeNull();
    expect(scheduleOf(at, 10 * 60_000).warnAt).toBeNull();
  });
});

describe('a time-boxed set (import --for)', () => {
  const f = (max: number) => ({
    pattern: '^orders\\.',
    applyTo: 'queues',
    priority: 1,
    definition: { 'max-length': max },
  });
  const steps: PolicySetStep[] = [
    { layer: 'user', vhost: 'v', name: 'new', before: null, after: f(1), verify: [] },
    { layer: 'user', vhost: 'v', name: 'old', before: f(2), after: null },
    { layer: 'user', vhost: 'v', name: 'edited', before: f(3), after: f(4) },
  ];
  const whole = (s: PolicySetStep, fields: PolicySetStep['after']): Policy | null =>
    fields && { vhost: s.vhost, name: s.name, ...fields };

  it('import takes --for as create and edit do; delete still does not', () => {
    expect(parseTimeBox('2h', 'import')).toBe(7_200_000);
    expect(() => parseTimeBox('2h', 'delete')).toThrow(InputError);
    expect(parseImport(['f.json', '--reason', 'r', '--for', '30m']).body.timeBoxMs).toBe(1_800_000);
    expect(() => parseImport(['f.json', '--reason', 'r', '--for', 'soon'])).toThrow(/--for takes a duration/);
    expect(parseImport(['f.json', '--reason', 'r']).body).not.toHaveProperty('timeBoxMs');
  });

  it("the bot's API takes timeBoxMs within the same bounds", () => {
    const body = { source: 'f.json', file: '{}', reason: 'r' };
    expect(ImportBody.safeParse({ ...body, timeBoxMs: 60_000 }).success).toBe(true);
    expect(ImportBody.safeParse({ ...body, timeBoxMs: 1_000 }).success).toBe(false);
    expect(ImportBody.safeParse({ ...body, timeBoxMs: 8 * 86_400_000 }).success).toBe(false);
  });

  it('the revert, for the planner: each policy from where it stands back to its before state; those back already left out', () => {
    const asLeft = revertChanges(steps, (s) => whole(s, s.after));
    expect(asLeft.map((t) => [t.name, t.before?.definition ?? null, t.after?.definition ?? null])).toEqual([
      ['new', f(1).definition, null],
      ['old', null, f(2).definition],
      ['edited', f(4).definition, f(3).definition],
    ]);
    // Asked for from the broker now: `edited` changed since (from 9), `new` deleted already.
    const now = revertChanges(steps, (s) =>
      s.name === 'edited' ? whole(s, f(9)) : s.name === 'new' ? null : whole(s, s.after),
    );
    expect(now.map((t) => [t.name, t.before?.definition ?? null])).toEqual([
      ['old', null],
      ['edited', f(9).definition],
    ]);
  });

  it("the revert's steps as planned, in the planner's order, each naming the record of the step it undoes", () => {
    const planned: PolicySetStep[] = [
      { layer: 'user', vhost: 'v', name: 'old', before: null, after: f(2), verify: [] },
      { layer: 'user', vhost: 'v', name: 'new', before: f(1), after: null, verify: [] },
      { layer: 'user', vhost: 'v', name: 'edited', before: f(4), after: f(3), verify: [] },
    ];
    expect(revertSteps({ id: 'r-1', steps }, planned).map((s) => [s.name, s.revertOf])).toEqual([
      ['old', 'a-r-1-1'],
      ['new', 'a-r-1-0'],
      ['edited', 'a-r-1-2'],
    ]);
  });

  it('a revert approved with its set is written only if its way harms nothing; else it asks, saying the loss', () => {
    const none = { messagesDeadLettered: 0, messagesLost: 0, queuesDeleted: 0, queuesRefusingPublishes: 0 };
    expect(revertWayRefusal({ objects: 0, totals: none })).toBeNull();
    expect(revertWayRefusal({ objects: 1, totals: { ...none, messagesLost: 25 } })).toEqual({
      code: 'revert-loss-on-the-way',
      loss: '25 messages lost',
    });
    // A dead-letter target missing for a step removes nothing counted, and is still not approved blind.
    expect(revertWayRefusal({ objects: 2, totals: none })).toEqual({
      code: 'revert-loss-on-the-way',
      loss: 'a dead-letter or alternate target missing for 2 objects',
    });
  });

  it('at the deadline: all as the set left them, revert; all as before, nothing; else ask, naming the policy', () => {
    const at = (pick: (s: PolicySetStep) => PolicySetStep['after']) => (s: PolicySetStep) =>
      whole(s, pick(s));
    expect(
      setRevertDecision(
        steps,
        at((s) => s.after),
      ),
    ).toEqual({ kind: 'revert' });
    expect(
      setRevertDecision(
        steps,
        at((s) => s.before),
      ),
    ).toEqual({ kind: 'done' });
    expect(
      setRevertDecision(
        steps,
        at((s) => (s.name === 'edited' ? f(9) : s.after)),
      ),
    ).toEqual({ kind: 'ask', why: 'policy edited of the set (vhost v) was changed again since the change' });
    expect(
      setRevertDecision(
        steps,
        at((s) => (s.name === 'new' ? null : s.after)),
      ),
    ).toEqual({ kind: 'ask', why: 'policy new of the set (vhost v) was deleted since the change' });
  });
});

describe('the warning before a time-boxed set’s deadline', () => {
  const f = (max: number) => ({
    pattern: '^o\\.',
    applyTo: 'queues',
    priority: 1,
    definition: { 'max-length': max },
  });
  const steps: PolicySetStep[] = [
    { layer: 'user', vhost: 'v', name: 'a', before: null, after: f(1) },
    { layer: 'user', vhost: 'v', name: 'b', before: f(2), after: f(3) },
  ];
  const applied = {
    id: 'r-set',
    state: 'applied',
    env: 'lab',
    vhost: 'v',
    layer: 'user',
    policy: 'definitions.json',
    before: null,
    after: f(1),
    set: { steps, source: 'definitions.json' },
    timeBoxMs: 3_600_000,
    auditId: 'a-r-set-1',
    appliedAt: '2026-12-02T10:00:00.000Z',
    updatedAt: '2026-12-02T10:00:00.000Z',
  } as unknown as ChangeRequest;

  async function warned(onBroker: Record<string, PolicySetStep['after']>) {
    const told: { deadline: Date; willRevert: boolean }[] = [];
    const handlers = timeBoxHandlers({
      workflow: {
        get: async () => applied,
        approveTimeBoxRevert: async () => {
          throw new Error('not at a warning');
        },
        revertSetFor: async () => {
          throw new Error('not at a warning');
        },
      },
      redis: { set: async () => 'OK', get: async () => null },
      keyPrefix: 'k',
      revertRequest: async () => {
        throw new Error('not at a warning');
      },
      brokerFor: () =>
        ({
          getPolicy: async (_layer: string, vhost: string, name: string) => {
            const fields = onBroker[name];
            return fields ? { vhost, name, ...fields } : null;
          },
        }) as unknown as WorkflowBroker,
      notifier: {
        timeBoxWarning: async (_r, deadline, willRevert) => {
          told.push({ deadline, willRevert });
        },
        timeBoxAsk: async () => {},
        timeBoxNothing: async () => {},
      },
      log: createLogger('silent'),
    });
    await handlers.warn('r-set');
    return told;
  }

  it('every policy of the set as it left them: told the whole set will be reverted at the deadline', async () => {
    expect(await warned({ a: f(1), b: f(3) })).toEqual([
      { deadline: new Date('2026-12-02T11:00:00.000Z'), willRevert: true },
    ]);
  });

  it('one policy of the set changed since: told it will not be reverted without a new approval', async () => {
    expect((await warned({ a: f(1), b: f(9) }))[0]?.willRevert).toBe(false);
  });

  it('a retried deadline whose revert was asked for already approves none beside it, even with the way clear now', async () => {
    const calls: string[] = [];
    const handlers = timeBoxHandlers({
      workflow: {
        get: async () => applied,
        approveTimeBoxRevert: async () => {
          calls.push('approve');
          return applied;
        },
        revertSetFor: async () => {
          calls.push('ask');
          return applied;
        },
      },
      redis: {
        set: async () => 'OK',
        get: async (key) => (key === 'k:timebox:r-set:asked' ? 'r-asked' : null),
      },
      keyPrefix: 'k',
      revertRequest: async () => applied,
      // Every policy as the set left it: without the asked revert, this deadline would approve one.
      brokerFor: () =>
        ({
          getPolicy: async (_layer: string, vhost: string, name: string) => {
            const fields = { a: f(1), b: f(3) }[name];
            return fields ? { vhost, name, ...fields } : null;
          },
        }) as unknown as WorkflowBroker,
      notifier: {
        timeBoxWarning: async () => {},
        timeBoxAsk: async () => {},
        timeBoxNothing: async () => {},
      },
      log: createLogger('silent'),
    });
    await handlers.revert('r-set');
    expect(calls).toEqual([]);
  });
});
