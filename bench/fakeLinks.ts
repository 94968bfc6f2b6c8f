/**
 * The links part of the management API double (bench/fakeManagement.ts `--links`), for
 * bench/links.ts: federation upstreams, policies that federate exchanges, the links and shovels
 * the broker reports, in the shapes 4.3.6 answers with.
 */
import type { Policy } from '../src/policy/types.ts';

/** How many upstreams, federated exchanges and shovels the `--links` double serves. */
export interface LinksShape {
  readonly upstreams: number;
  readonly exchanges: number;
  readonly shovels: number;
}

/**
 * The links answer's listings (bench/links.ts): `upstreams` upstreams (URIs with passwords), one
 * policy per upstream federating its share of `exchanges` exchanges, the links the broker reports
 * (one in 50 in error, one in 100 missing), `shovels` shovel parameters and their statuses, shaped
 * as 4.3.6 answers (a running link with its `local_channel`, about 1 KB).
 */
export function linksRoutes(vhost: string, shape: LinksShape): Map<string, Buffer> {
  const enc = encodeURIComponent(vhost);
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const upstream = (i: number) => `up${i}`;
  const exchanges = Array.from({ length: shape.exchanges }, (_, i) => ({
    arguments: {},
    internal: false,
    name: `fed.${i}`,
    policy: `fed-${i % shape.upstreams}`,
    type: 'topic',
  }));
  const channel = {
    name: '<rabbit@n1.1.2.3> (1)',
    number: 1,
    state: 'running',
    prefetch_count: 0,
    user: 'none',
  };
  const links = exchanges
    .filter((_, i) => i % 100 !== 99)
    .map((e, i) => ({
      node: `rabbit@n${i % 3}`,
      exchange: e.name,
      upstream_exchange: e.name,
      type: 'exchange',
      vhost,
      upstream: upstream(Number(e.policy.slice(4))),
      id: i.toString(16),
      status: i % 50 === 0 ? 'error' : 'running',
      ...(i % 50 === 0 ? { error: 'econnrefused' } : { local_channel: channel }),
      uri: 'amqp://upstream.example:5672/v',
      timestamp: '2026-12-05 0:20:26',
    }));
  const shovels = Array.from({ length: shape.shovels }, (_, i) => ({
    name: `sh${i}`,
    vhost,
    component: 'shovel',
    value: {
      'src-uri': `amqp://u:secret@src${i % 7}/v`,
      'src-queue': `q${i}`,
      'dest-uri': 'amqps://u:secret@dest/v',
      'dest-queue': `d${i}`,
    },
  }));
  return new Map([
    [`/api/exchanges/${enc}`, json(exchanges)],
    [
      `/api/parameters/federation-upstream/${enc}`,
      json(
        Array.from({ length: shape.upstreams }, (_, i) => ({
          name: upstream(i),
          vhost,
          component: 'federation-upstream',
          value: { uri: `amqp://u:secret@dc${i}/v` },
        })),
      ),
    ],
    [`/api/federation-links/${enc}`, json(links)],
    [`/api/parameters/shovel/${enc}`, json(shovels)],
    [
      `/api/shovels/${enc}`,
      json(
        shovels.map((s, i) => ({
          node: 'rabbit@n1',
          timestamp: '2026-12-05 0:22:02',
          name: s.name,
          vhost,
          type: 'dynamic',
          state: i % 40 === 0 ? 'terminated' : 'running',
          ...(i % 40 === 0 ? { reason: '"failed to connect to source"' } : {}),
        })),
      ),
    ],
  ]);
}

/** The policies of the `--links` double: one per upstream, over its exchanges. */
export function linksPolicies(vhost: string, shape: LinksShape): Policy[] {
  return Array.from({ length: shape.upstreams }, (_, i) => ({
    vhost,
    name: `fed-${i}`,
    pattern: `^fed\\.\\d+$`,
    applyTo: 'exchanges',
    priority: 50,
    definition: { 'federation-upstream': `up${i}` },
  }));
}
