/**
 * What the links answer reads of the management API: the runtime parameters that ask for links
 * (federation upstreams and sets, shovels) and the links every node reports (federation links,
 * shovels), each one request read as a stream within the listing's limits. Shapes measured on
 * 4.0.5 and 4.3.6 (docs/broker-facts.md, test/integration/links-shapes.test.ts).
 */
import * as z from 'zod';
import { onFirstUse } from '../core/index.ts';
import type { Parameter, ReportedFederationLink, ReportedShovel } from '../links/index.ts';
import { RabbitError } from './errors.ts';
import type { Parsed } from './responses.ts';
import type { Transport } from './transport.ts';

/**
 * One element of `GET /api/federation-links/{vhost}` (the federation plugin's), as 4.0.5 and 4.3.6
 * report it: `exchange` or `queue` (with `type`), `upstream`, `node`, `status` (`starting`,
 * `running`, `error` with `error`: `econnrefused`, `not_allowed`), `timestamp` (the node's clock,
 * `2026-12-05 0:20:26`), `uri` without its password, and for a running link `local_channel`
 * (about 1 KB, not read). docs/broker-facts.md.
 */
export const federationLinkSchema = onFirstUse(() =>
  z.object({
    exchange: z.string().optional(),
    queue: z.string().optional(),
    type: z.string().optional(),
    vhost: z.string().optional(),
    upstream: z.string().optional(),
    node: z.string().optional(),
    status: z.string().optional(),
    error: z.unknown().optional(),
    timestamp: z.string().optional(),
  }),
);

/** A broker's error term as text: a string as it is, anything else as its JSON. */
const errorText = (e: unknown): string | null =>
  e === undefined || e === null ? null : typeof e === 'string' ? e : JSON.stringify(e);

/** A reported link in the links rules' shape; null for an element that names no object or upstream. */
export function toReportedFederationLink(
  vhost: string,
  l: Parsed<typeof federationLinkSchema>,
): ReportedFederationLink | null {
  const object = l.exchange ?? l.queue;
  if (object === undefined || l.upstream === undefined) return null;
  return {
    vhost: l.vhost ?? vhost,
    kind: l.queue !== undefined && l.exchange === undefined ? 'queue' : 'exchange',
    object,
    upstream: l.upstream,
    node: l.node ?? null,
    status: l.status ?? 'unknown',
    error: errorText(l.error),
    timestamp: l.timestamp ?? null,
  };
}

/**
 * One element of `GET /api/shovels/{vhost}` (rabbitmq_shovel_management), 4.0.5 and 4.3.6: `name`,
 * `vhost`, `type` (`dynamic` | `static`), `state` (`starting`, `running`, `terminated` with
 * `reason`, a string holding the Erlang term: `"\"failed to connect to source\""`), `node`,
 * `timestamp`; a running one adds `src_uri`/`dest_uri` without passwords and its counters.
 */
export const shovelStatusSchema = onFirstUse(() =>
  z.object({
    name: z.string(),
    vhost: z.string().optional(),
    type: z.string().optional(),
    state: z.string().optional(),
    reason: z.unknown().optional(),
    node: z.string().optional(),
    timestamp: z.string().optional(),
  }),
);

export function toReportedShovel(vhost: string, s: Parsed<typeof shovelStatusSchema>): ReportedShovel {
  return {
    vhost: s.vhost ?? vhost,
    name: s.name,
    node: s.node ?? null,
    type: s.type ?? 'dynamic',
    state: s.state ?? 'unknown',
    reason: errorText(s.reason),
    timestamp: s.timestamp ?? null,
  };
}

/**
 * One runtime parameter (`GET /api/parameters/{component}/{vhost}`): federation upstreams and
 * sets, shovels. `value` holds URIs WITH their passwords: never shown but through maskUri/maskUris.
 */
export const parameterSchema = onFirstUse(() =>
  z.object({
    name: z.string(),
    vhost: z.string().optional(),
    value: z.unknown(),
  }),
);

/** The components of the runtime parameters that ask for links. */
export type LinkComponent = 'federation-upstream' | 'federation-upstream-set' | 'shovel';

/**
 * The vhost's parameters of one component, their values as stored: a federation upstream's or a
 * shovel's holds its URIs WITH the password (never shown but through maskUri). [] when the vhost
 * has none, or does not exist (a 404).
 */
export async function listParameters(
  http: Transport,
  component: LinkComponent,
  vhost: string,
): Promise<Parameter[]> {
  const out: Parameter[] = [];
  try {
    for await (const p of http.streamList(http.path(`parameters/${component}`, vhost), parameterSchema()))
      out.push({ vhost: p.vhost ?? vhost, name: p.name, value: p.value });
  } catch (e) {
    if (e instanceof RabbitError && e.code === 'not-found') return [];
    throw e;
  }
  return out;
}

/** Every federation link of the vhost that any node reports (an element naming no object is left out). */
export async function listFederationLinks(http: Transport, vhost: string): Promise<ReportedFederationLink[]> {
  const out: ReportedFederationLink[] = [];
  for await (const l of http.streamList(http.path('federation-links', vhost), federationLinkSchema())) {
    const link = toReportedFederationLink(vhost, l);
    if (link) out.push(link);
  }
  return out;
}

/** Every shovel of the vhost that any node reports, dynamic and static. */
export async function listShovels(http: Transport, vhost: string): Promise<ReportedShovel[]> {
  const out: ReportedShovel[] = [];
  for await (const s of http.streamList(http.path('shovels', vhost), shovelStatusSchema()))
    out.push(toReportedShovel(vhost, s));
  return out;
}
