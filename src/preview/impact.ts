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
} from '../policy/impact.ts';
import type { ObjectOutcome } from '../policy/simulate.ts';
import { atLeast, type BrokerVersion, type ObjectKind } from '../policy/types.ts';
import type { LiveReading } from '../rabbit/inventory.ts';

/**
 * The preview's live impact: each object the change touches, joined with what the broker says is
 * there now (the live reading, src/rabbit/inventory.ts), through the rules of immediate effect
 * (src/policy/impact.ts); and the totals an approver accepts.
 */

/** A queue's numbers as the preview shows them (INTERFACE.md `objects[].now`). */
export interface LiveNow extends LiveQueue {
  readonly sampledAt: string;
}

export interface PreviewObject extends ObjectOutcome {
  /** null for exchanges, and for a queue the broker has no statistics for (unknown, not zero). */
  readonly now: LiveNow | null;
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
  /** Why the statistics or the federation could not be read, or that the plugin is off. */
  readonly notes: string[];
}

/** From 4.0 a quorum queue without a delivery limit has one of 20 (reference section 4). */
const defaultDeliveryLimit = (v: BrokerVersion) => (atLeast(v, 4) ? 20 : undefined);

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

export function withImpact(
  outcomes: readonly ObjectOutcome[],
  reading: LiveReading | null,
  exchanges: ReadonlySet<string>,
  version: BrokerVersion,
  keep: number,
): { objects: PreviewObject[]; summary: ImpactSummary } {
  const fed = reading?.federation ?? null;
  const world: World = {
    exchanges,
    upstreams: fed?.upstreams ?? null,
    upstreamSets: fed?.upstreamSets ?? null,
    links: fed?.links ?? null,
  };
  const sampledAt = reading && !reading.queuesWhy ? reading.sampledAt : null;
  let unknown = 0;
  const objects = outcomes.map((o): PreviewObject => {
    const live = o.kind === 'exchange' || !reading ? null : (reading.queues.get(o.name) ?? null);
    if (o.kind !== 'exchange' && live === null) unknown++;
    const now = live && sampledAt ? { ...live, sampledAt } : null;
    const impact = impactOf(
      {
        name: o.name,
        kind: o.kind,
        before: o.inUse.before,
        after: o.inUse.after,
        now: live,
        defaultDeliveryLimit: defaultDeliveryLimit(version),
      },
      world,
    );
    return { ...o, now, impact };
  });
  // Each object's weight read once, not at every comparison (a broad change: 19,000 objects).
  const fearing = objects
    .filter((o) => o.impact.length > 0)
    .map((o) => ({ o, w: weight(o.impact) }))
    .sort((a, b) => b.w - a.w || (a.o.name < b.o.name ? -1 : 1))
    .map(({ o }) => o);
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
      objects: fearing.slice(0, keep).map(({ name, kind, now, impact }) => ({ name, kind, now, impact })),
      count: fearing.length,
      unknown,
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
