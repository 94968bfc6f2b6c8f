import {
  FEDERATION_TARGETS,
  type Hazard,
  hazardsOf,
  type LiveQueue,
  type World,
} from '../../policy/impact/index.ts';
import type { ObjectKind } from '../../policy/index.ts';
import type { LiveNow } from '../../preview/index.ts';
import type { FederationState } from '../../rabbit/index.ts';

/**
 * `which`'s live hazards: the values the object uses now and its statistics, through the rules of
 * immediate effect (src/policy/impact/hazards.ts, hazardsOf), with only the reads they need: one GET per
 * exchange its values name, and the vhost's federation when they name an upstream.
 */

/** What the hazards need of the management API beyond `which`'s own reads. */
export interface HazardBroker {
  getExchange(vhost: string, name: string): Promise<unknown>;
  federation(vhost: string): Promise<FederationState>;
}

export interface LiveHazards {
  readonly now: LiveNow | null;
  readonly hazards: Hazard[];
  /** Reads that failed: what they would have checked is not claimed either way. */
  readonly notRead: string[];
}

const EXCHANGE_KEYS = ['dead-letter-exchange', 'alternate-exchange'] as const;

const why = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function liveHazards(
  broker: HazardBroker,
  vhost: string,
  kind: ObjectKind,
  values: Readonly<Record<string, unknown>>,
  live: LiveQueue | null,
  sampledAt: string,
): Promise<LiveHazards> {
  const notRead: string[] = [];
  const named = EXCHANGE_KEYS.map((k) => values[k]).filter(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  const exchanges = (async () => {
    try {
      const found = await Promise.all(
        named.map(async (n) => ((await broker.getExchange(vhost, n)) ? n : null)),
      );
      return new Set(found.filter((n): n is string => n !== null));
    } catch (e) {
      notRead.push(`the exchanges it names could not be read (${why(e)})`);
      return null;
    }
  })();
  const federation = (async () => {
    if (!FEDERATION_TARGETS.some((k) => typeof values[k] === 'string')) return null;
    try {
      return await broker.federation(vhost);
    } catch (e) {
      notRead.push(`the federation upstreams could not be read (${why(e)})`);
      return null;
    }
  })();
  const [ex, fed] = await Promise.all([exchanges, federation]);
  const world: World = {
    exchanges: ex,
    upstreams: fed?.upstreams ?? null,
    upstreamSets: fed?.upstreamSets ?? null,
    links: fed?.links ?? null,
  };
  const hazards = hazardsOf({ kind, values, now: live, at: Date.parse(sampledAt) }, world);
  const now = kind === 'exchange' || live === null ? null : { ...live, sampledAt };
  return { now, hazards, notRead };
}
