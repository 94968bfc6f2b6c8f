import {
  type Impact,
  type ImpactTotals,
  impactOf,
  impactTotals,
  type LiveQueue,
  type Loss,
  losingQueues,
  readsFederation,
  type World,
} from '../policy/impact/index.ts';
import { type BrokerVersion, defaultDeliveryLimit, type ObjectKind } from '../policy/index.ts';
import type { ObjectOutcome } from '../policy/simulate/index.ts';
import type { LiveReading } from '../rabbit/index.ts';

/**
 * The preview's live impact: each object the change touches, joined with what the broker says is
 * there now (the live reading, src/rabbit/inventory.ts), through the rules of immediate effect
 * (src/policy/impact/impact.ts); and the totals an approver accepts.
 */

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A queue's numbers as the preview shows them (docs/json.md, `preview … --json`: `objects[].now`). */
export interface LiveNow extends LiveQueue {
  readonly sampledAt: string;
}

export interface PreviewObject extends ObjectOutcome {
  /** null for exchanges, and for a queue the broker has no statistics for (unknown, not zero). */
  readonly now: LiveNow | null;
  /** `now` is null because the queue's cluster node is down (docs/cluster.md: `nodeDown`). */
  readonly nodeDown?: true;
  readonly impact: Impact[];
}

/** Kept with the summary (and so with a change request): enough to say and to bind the loss. */
export interface ImpactSummary extends Loss {
  readonly totals: ImpactTotals;
  /** When the statistics were read; null when they could not be. */
  readonly sampledAt: string | null;
  /** The numbers are the broker's samples from just before this time (a change already made), not as read. */
  readonly asOf?: string;
  /** The objects with something to fear, worst first (at most `SUMMARY_NAMES`). */
  readonly objects: { name: string; kind: ObjectKind; now: LiveNow | null; impact: Impact[] }[];
  /** How many objects have something to fear. */
  readonly count: number;
  /** Queues touched by the change whose statistics the broker did not report. */
  readonly unknown: number;
  /** Of `unknown`, those whose cluster node is down. */
  readonly nodeDown?: number;
  /** Why the statistics or the federation could not be read, or that the plugin is off. */
  readonly notes: string[];
}

/** The delivery limit a quorum queue has when nothing sets one (its home: src/policy/keys.ts). */
export { defaultDeliveryLimit };

/** How bad an object's impact is, for the order: removals and deletions, refusals, the rest. */
function weight(impact: readonly Impact[]): number {
  let w = 0;
  for (const x of impact) {
    if (x.effect === 'drop') w = Math.max(w, 3 + x.messages);
    else if (x.effect === 'delete') w = Math.max(w, 3 + x.messages);
    else if (x.effect === 'missing-target' || x.effect === 'may-drop') w = Math.max(w, 2);
    else w = Math.max(w, 1);
  }
  return w;
}

/**
 * The `keep` objects with something to fear, worst first (by weight, then name), and how many
 * there are: only those kept are ordered (a broad change: 19,000 objects, of which 50 are shown).
 */
function worstFirst(
  objects: readonly PreviewObject[],
  keep: number,
): { worst: PreviewObject[]; count: number } {
  const before = (a: { o: PreviewObject; w: number }, b: { o: PreviewObject; w: number }) =>
    b.w - a.w || (a.o.name < b.o.name ? -1 : 1);
  // Sorted, at most `keep`; an object is placed only when it comes before the last kept.
  const worst: { o: PreviewObject; w: number }[] = [];
  let count = 0;
  for (const o of objects) {
    if (o.impact.length === 0) continue;
    count++;
    if (keep <= 0) continue;
    const x = { o, w: weight(o.impact) };
    const last = worst[worst.length - 1];
    if (worst.length === keep && last && before(x, last) >= 0) continue;
    let i = worst.length;
    while (i > 0 && before(x, worst[i - 1] as (typeof worst)[number]) < 0) i--;
    worst.splice(i, 0, x);
    if (worst.length > keep) worst.pop();
  }
  return { worst: worst.map(({ o }) => o), count };
}

/** What the vhost holds besides its queues, for the targets a value names (impact.ts `World`). */
export function worldOf(reading: LiveReading | null, exchanges: ReadonlySet<string>): World {
  const fed = reading?.federation ?? null;
  return {
    exchanges,
    upstreams: fed?.upstreams ?? null,
    upstreamSets: fed?.upstreamSets ?? null,
    links: fed?.links ?? null,
  };
}

/**
 * The outcomes become the preview's objects: each is given its `now` and `impact` in place, not
 * copied (a broad change moves 19,000 objects, and copying each was ~45 ms of its preview), so
 * they are the caller's to hand over, once.
 */
export function withImpact(
  outcomes: readonly ObjectOutcome[],
  reading: LiveReading | null,
  exchanges: ReadonlySet<string>,
  version: BrokerVersion,
  keep: number,
): { objects: PreviewObject[]; summary: ImpactSummary } {
  const fed = reading?.federation ?? null;
  const world = worldOf(reading, exchanges);
  const sampledAt = reading && !reading.queuesWhy ? reading.sampledAt : null;
  let unknown = 0;
  let nodeDown = 0;
  const objects = outcomes.map((o): PreviewObject => {
    const live = o.kind === 'exchange' || !reading ? null : (reading.queues.get(o.name) ?? null);
    if (o.kind !== 'exchange' && live === null) unknown++;
    const down = live === null && reading?.nodeDown?.has(o.name) === true;
    if (down) nodeDown++;
    // Not `{ ...live, sampledAt }`: a spread followed by a key is V8's slow path (~0.5 µs an object).
    const now: LiveNow | null = live && sampledAt ? Object.assign({}, live, { sampledAt }) : null;
    const impact = impactOf(
      {
        name: o.name,
        kind: o.kind,
        before: o.inUse.before,
        after: o.inUse.after,
        now: live,
        nodeDown: down,
        defaultDeliveryLimit: defaultDeliveryLimit(version),
      },
      world,
    );
    const object = o as Writable<PreviewObject>;
    object.now = now;
    if (down) object.nodeDown = true;
    object.impact = impact;
    return object;
  });
  const fearing = worstFirst(objects, keep);
  const notes: string[] = [];
  if (reading?.queuesWhy) notes.push(`The queues' statistics could not be read (${reading.queuesWhy}).`);
  if (reading?.federationWhy) notes.push(`The federation could not be read (${reading.federationWhy}).`);
  else if (fed?.linksNotRead) {
    notes.push(
      `The federation links could not be read (${fed.linksNotRead}): which links would stop is not known.`,
    );
  } else if (fed?.links === null && objects.some(usesFederation)) {
    notes.push('The federation plugin is not enabled: no links run.');
  }
  return {
    objects,
    summary: {
      totals: impactTotals(objects.map((o) => o.impact)),
      queues: losingQueues(objects),
      sampledAt,
      ...(reading?.asOf && sampledAt ? { asOf: reading.asOf } : {}),
      objects: fearing.worst.map(({ name, kind, now, impact }) => ({ name, kind, now, impact })),
      count: fearing.count,
      unknown,
      ...(nodeDown ? { nodeDown } : {}),
      notes,
    },
  };
}

const usesFederation = (o: ObjectOutcome) =>
  readsFederation(o.inUse.before) || readsFederation(o.inUse.after);

/** An object as the `--json` document shows it: without the values in use it was computed from. */
export function objectJson({ inUse: _, ...rest }: PreviewObject): Omit<PreviewObject, 'inUse'> {
  return rest;
}
