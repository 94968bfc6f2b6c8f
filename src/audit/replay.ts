import type { Policy, PolicyLayer } from '../policy/index.ts';
import type { AuditTrail } from './trail.ts';
import { type AuditRecord, type ChangeRecord, isChange, type SnapshotRecord } from './types.ts';

/**
 * The policies of a vhost at a past instant, replayed from the trail: the environment's nearest
 * snapshot at or before it, then every change recorded after that snapshot and made by then.
 * `replay` is pure; `stateAt` reads what it needs (the snapshot found through the trail's index,
 * the records after it), never the trail whole.
 *
 * When a change counts: a change caught by comparing, which cannot say when it was made, counts
 * at the end of its `between` span, and inside that span the vhost's state is not known; an event's
 * change at the broker's time (`appliedAt`); the bot's own at its write (`appliedAt`).
 */

/** A span in which the state is not known. */
export interface Span {
  readonly from: string;
  readonly to: string;
}

/** The instant a change counts from, in ms. */
export function madeAt(r: ChangeRecord): number {
  return Date.parse(r.between?.to ?? r.appliedAt ?? r.at);
}

export interface Replayed {
  readonly user: Policy[];
  readonly operator: Policy[];
  /** The broker's version the snapshot read (absent: not read). */
  readonly version?: string;
}

const key = (layer: PolicyLayer, vhost: string, name: string) => JSON.stringify([layer, vhost, name]);

/**
 * The vhost's policies at `ms`: the snapshot's, then the changes of the snapshot's environment and
 * that vhost made after the snapshot and by `ms`, in the order they were made (ties: as recorded).
 * A change made by the snapshot's instant is in the snapshot already.
 */
export function replay(
  snapshot: SnapshotRecord,
  records: readonly AuditRecord[],
  vhost: string,
  ms: number,
): Replayed {
  const state = new Map<string, Policy>();
  for (const [layer, list] of [
    ['user', snapshot.policies],
    ['operator', snapshot.operatorPolicies],
  ] as const)
    for (const p of list) if (p.vhost === vhost) state.set(key(layer, p.vhost, p.name), { ...p });
  const start = Date.parse(snapshot.at);
  const changes = records
    .filter(isChange)
    .filter((r) => r.env === snapshot.env && r.vhost === vhost)
    .map((r, i) => ({ r, i, at: madeAt(r) }))
    .filter((c) => c.at > start && c.at <= ms)
    .sort((a, b) => a.at - b.at || a.i - b.i);
  for (const { r } of changes) {
    const k = key(r.operator ? 'operator' : 'user', r.vhost, r.policy);
    if (r.after) state.set(k, { vhost: r.vhost, name: r.policy, ...r.after });
    else state.delete(k);
  }
  const user: Policy[] = [];
  const operator: Policy[] = [];
  for (const [k, p] of state) (JSON.parse(k)[0] === 'operator' ? operator : user).push(p);
  return { user, operator, ...(snapshot.version ? { version: snapshot.version } : {}) };
}

/** A change of the vhost whose `between` span holds `ms`: then the state at `ms` is not known. */
export function unknownSpan(
  records: readonly AuditRecord[],
  env: string,
  vhost: string,
  ms: number,
): Span | undefined {
  for (const r of records) {
    if (!isChange(r) || r.env !== env || r.vhost !== vhost || !r.between) continue;
    if (Date.parse(r.between.from) <= ms && ms < Date.parse(r.between.to)) return r.between;
  }
  return undefined;
}

/** The state of a vhost at an instant, or why it is not known. */
export type StateAt =
  | {
      readonly known: true;
      readonly state: Replayed;
      /** The snapshot replayed from. */
      readonly snapshotAt: string;
    }
  | {
      readonly known: false;
      /** `not-watching`: before the environment's first snapshot (or the vhost not watched); `gap`: inside a span not watched. */
      readonly why: 'not-watching' | 'gap';
      readonly gap: Span | null;
      /** The first snapshot, when there is one after the instant. */
      readonly watchedSince?: string;
    };

/** What the replay reads of the trail. AuditTrail satisfies it. */
export type ReplaySource = Pick<AuditTrail, 'snapshotNear' | 'gapAt' | 'after'>;

const watches = (s: SnapshotRecord, vhost: string) => s.vhosts === null || s.vhosts.includes(vhost);

/** The vhost's policies at `ms` in environment `env`, replayed from the trail. */
export async function stateAt(
  source: ReplaySource,
  env: string,
  vhost: string,
  ms: number,
): Promise<StateAt> {
  const [near, gap] = await Promise.all([source.snapshotNear(env, ms, 'before'), source.gapAt(env, ms)]);
  if (gap) return { known: false, why: 'gap', gap: { from: gap.from, to: gap.to } };
  if (!near || !watches(near.record, vhost)) {
    const next = await source.snapshotNear(env, ms, 'after');
    return {
      known: false,
      why: 'not-watching',
      gap: null,
      ...(next && watches(next.record, vhost) ? { watchedSince: next.record.at } : {}),
    };
  }
  const records = await source.after(near.sid, ms);
  const span = unknownSpan(records, env, vhost, ms);
  if (span) return { known: false, why: 'gap', gap: span };
  return { known: true, state: replay(near.record, records, vhost, ms), snapshotAt: near.record.at };
}
