/**
 * The replay of the audit trail (src/audit/replay.ts), pure: the state at an instant is the
 * snapshot's, then every change made after it and by then, in the order made; a change found by
 * comparing counts at the end of its span, and inside that span the vhost is unknown. A property
 * test replays random histories against the state kept alongside as they were made.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { madeAt, replay, stateAt, unknownSpan } from '../../src/audit/replay.ts';
import type { AuditRecord, ChangeRecord, GapRecord, SnapshotRecord } from '../../src/audit/types.ts';
import { changesAround } from '../../src/commands/at/whichAt.ts';
import type { Policy } from '../../src/policy/types.ts';

const T0 = Date.parse('2026-12-04T03:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

const snapshot = (at: number, policies: Policy[], operator: Policy[] = []): SnapshotRecord => ({
  id: `s-lab-${at}`,
  at: iso(at),
  env: 'lab',
  prev: '',
  hash: '',
  action: 'snapshot',
  why: 'first',
  vhosts: null,
  version: '3.13.7',
  policies: policies.map((p) => ({ ...p })),
  operatorPolicies: operator.map((p) => ({ ...p })),
});

const fields = (p: Policy | null) =>
  p && { pattern: p.pattern, applyTo: p.applyTo, priority: p.priority, definition: p.definition };

const change = (
  at: number,
  name: string,
  before: Policy | null,
  after: Policy | null,
  extra: Partial<ChangeRecord> = {},
): ChangeRecord => ({
  id: `o-${at}-${name}`,
  at: iso(at + 1500),
  env: 'lab',
  prev: '',
  hash: '',
  vhost: '/',
  policy: name,
  operator: false,
  action: 'outside',
  appliedAt: iso(at),
  before: fields(before),
  after: fields(after),
  objects: [],
  unpredictable: 0,
  ...extra,
});

const policy = (name: string, priority: number, max = 1): Policy => ({
  vhost: '/',
  name,
  pattern: '^a',
  applyTo: 'queues',
  priority,
  definition: { 'max-length': max },
});

const names = (ps: readonly Policy[]) => ps.map((p) => `${p.name}:${p.priority}`).sort();

describe('replay', () => {
  it('starts from the snapshot and applies the changes made after it and by the instant', () => {
    const a = policy('a', 1);
    const b = policy('b', 2);
    const records = [change(T0 + 10_000, 'b', null, b), change(T0 + 20_000, 'a', a, null)];
    const s = snapshot(T0, [a]);
    expect(names(replay(s, records, '/', T0 + 5_000).user)).toEqual(['a:1']);
    expect(names(replay(s, records, '/', T0 + 10_000).user)).toEqual(['a:1', 'b:2']);
    expect(names(replay(s, records, '/', T0 + 25_000).user)).toEqual(['b:2']);
  });

  it('skips a change already in the snapshot (made by its instant, recorded after it)', () => {
    const a = policy('a', 1, 9);
    const s = snapshot(T0, [a]);
    const late = change(T0 - 1000, 'a', policy('a', 1, 1), a);
    expect(replay(s, [late], '/', T0 + 1).user[0]?.definition).toEqual({ 'max-length': 9 });
  });

  it('counts a change found by comparing at the end of its span, and says the span is unknown', () => {
    const a = policy('a', 1);
    const between = { from: iso(T0 + 1000), to: iso(T0 + 9000) };
    const found = change(T0 + 9000, 'a', null, a, { between, detectedBy: 'start' });
    expect(madeAt(found)).toBe(T0 + 9000);
    expect(replay(snapshot(T0, []), [found], '/', T0 + 5000).user).toEqual([]);
    expect(unknownSpan([found], 'lab', '/', T0 + 5000)).toEqual(between);
    expect(unknownSpan([found], 'lab', '/', T0 + 9000)).toBeUndefined();
    expect(unknownSpan([found], 'lab', 'other', T0 + 5000)).toBeUndefined();
  });

  it('keeps the layers and vhosts apart, and another environment out', () => {
    const op = { ...policy('cap', 0), name: 'cap' };
    const s = snapshot(T0, [policy('a', 1), { ...policy('x', 1), vhost: 'other' }], [op]);
    const elsewhere = { ...change(T0 + 1, 'a', policy('a', 1), null), env: 'prod' };
    const r = replay(s, [elsewhere], '/', T0 + 10);
    expect(names(r.user)).toEqual(['a:1']);
    expect(names(r.operator)).toEqual(['cap:0']);
    expect(r.version).toBe('3.13.7');
  });

  it("leaves a federation upstream's change out: one named like a policy deletes no policy", () => {
    const s = snapshot(T0, [policy('up1', 1)]);
    const upstream = change(T0 + 1, 'up1', null, null, {
      action: 'delete',
      component: 'federation-upstream',
      value: { before: { uri: 'amqp://u:***@h' }, after: null },
    });
    expect(names(replay(s, [upstream], '/', T0 + 10).user)).toEqual(['up1:1']);
  });

  it('replays any history to the state kept as it was made (property)', () => {
    const step = fc.record({
      dt: fc.integer({ min: 2, max: 5000 }),
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      priority: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.nat(), (steps, pick) => {
        const state = new Map<string, Policy>();
        const timeline: { at: number; state: string[] }[] = [{ at: T0, state: [] }];
        const records: ChangeRecord[] = [];
        let t = T0;
        for (const s of steps) {
          t += s.dt;
          const before = state.get(s.name) ?? null;
          const after = s.priority === null ? null : policy(s.name, s.priority);
          if (after) state.set(s.name, after);
          else state.delete(s.name);
          records.push(change(t, s.name, before, after));
          timeline.push({ at: t, state: names([...state.values()]) });
        }
        // Recorded out of order within a burst: the replay orders by when each was made.
        const shuffled = [...records].sort((x, y) => (x.policy < y.policy ? -1 : 1));
        const moment = timeline[pick % timeline.length] as { at: number; state: string[] };
        const ms = moment.at + (pick % 2);
        expect(names(replay(snapshot(T0, []), shuffled, '/', ms).user)).toEqual(moment.state);
      }),
    );
  });
});

describe('stateAt', () => {
  const a = policy('a', 1);
  const first = snapshot(T0, [a]);
  const second = { ...snapshot(T0 + 60_000, []), why: 'gap' as const };
  const gap: GapRecord = {
    id: 'g',
    at: iso(T0 + 60_000),
    env: 'lab',
    prev: '',
    hash: '',
    action: 'gap',
    from: iso(T0 + 30_000),
    to: iso(T0 + 60_000),
  };
  const source = {
    async snapshotNear(_env: string, ms: number, side: 'before' | 'after') {
      const list = [
        { sid: '1-0', record: first },
        { sid: '3-0', record: second },
      ];
      const found =
        side === 'before'
          ? list.filter((s) => Date.parse(s.record.at) <= ms).pop()
          : list.find((s) => Date.parse(s.record.at) > ms);
      return found;
    },
    async gapAt(_env: string, ms: number) {
      return Date.parse(gap.from) <= ms && ms < Date.parse(gap.to) ? gap : undefined;
    },
    async after(sid: string): Promise<AuditRecord[]> {
      return sid === '1-0' ? [gap, second] : [];
    },
  };

  it('is unknown before the first snapshot, naming when the watch began', async () => {
    expect(await stateAt(source, 'lab', '/', T0 - 1)).toEqual({
      known: false,
      why: 'not-watching',
      gap: null,
      watchedSince: first.at,
    });
  });

  it('is unknown inside a gap, known at its edges', async () => {
    expect(await stateAt(source, 'lab', '/', T0 + 45_000)).toMatchObject({
      known: false,
      why: 'gap',
      gap: { from: gap.from, to: gap.to },
    });
    expect(await stateAt(source, 'lab', '/', T0 + 30_000 - 1)).toMatchObject({
      known: true,
      snapshotAt: first.at,
    });
    const after = await stateAt(source, 'lab', '/', T0 + 60_000);
    expect(after).toMatchObject({ known: true, snapshotAt: second.at });
    expect(after.known && after.state.user).toEqual([]);
  });

  it('is unknown for a vhost the snapshot did not watch', async () => {
    const only = { ...first, vhosts: ['other'] };
    const s = await stateAt(
      { ...source, snapshotNear: async () => ({ sid: '1-0', record: only }) },
      'lab',
      '/',
      T0 + 1,
    );
    expect(s).toMatchObject({ known: false, why: 'not-watching' });
  });
});

describe('changesAround', () => {
  it("lists the vhost's policy changes an hour either side, never a federation upstream's named like one", async () => {
    const a = policy('a', 1);
    const records: AuditRecord[] = [
      change(T0 - 30 * 60_000, 'a', null, a),
      change(T0 + 10 * 60_000, 'a', a, null, {
        component: 'federation-upstream',
        before: null,
        after: null,
        value: { before: {}, after: null },
      }),
      change(T0 + 2 * 3_600_000, 'a', a, null),
    ];
    const trail = {
      snapshotNear: async () => undefined,
      gapAt: async () => undefined,
      after: async () => [],
      scan: async () => ({ entries: records, unreadable: 0 }),
    };
    const around = await changesAround(trail, 'lab', '/', T0);
    expect(around.map((r) => r.id)).toEqual([records[0]?.id]);
  });
});
