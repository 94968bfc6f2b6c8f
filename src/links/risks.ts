import { maskUri } from '../core/index.ts';
import type { ExpectedLink, LinkRisk, Parameter } from './types.ts';

/**
 * The link settings that lose or pile up messages (the runbook's table of defaults), each with
 * why. Read from the upstreams' and shovels' values as the broker stores them; a key left out
 * is its default. The exchange-federation ones (the upstream's internal queue and its cleanup,
 * its bound, `max-hops`) only for upstreams an exchange link uses.
 */

const LOSSY_ACK = ['no-ack', 'on-publish'];

const WHY = {
  ackMode:
    'acknowledges a message before the other end has it safely: a network or broker failure in between loses it (on-confirm is the safe default).',
  classicQueue:
    'exchange federation buffers in an internal upstream queue, classic here: one replica, so losing its node loses what it holds (queue-type quorum replicates it).',
  cleanup:
    'when the link stops (a policy change, the upstream edited), the internal upstream queue is deleted with the messages it buffered (resource-cleanup-mode never keeps them).',
  unbounded:
    'the internal upstream queue has neither expires nor message-ttl: while the link is down it grows without bound on the upstream. Bounding it means accepting loss; a choice to make, not an error.',
  maxHops:
    'messages may travel more than one federation hop, and arrive more than once where routes meet; keep it at 1 unless the topology is built for it.',
  oneUri: 'one URI only: when that endpoint is down there is no other to fail over to (list several).',
  plainAmqp:
    'amqp:// to another host: credentials and messages cross the network unencrypted (amqps:// is TLS).',
} as const;

const asList = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((u): u is string => typeof u === 'string') : [];

/** The host a URI names; '' for `amqp://` (the local node). */
export function uriHost(uri: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(uri);
  return (m?.[1] ?? '').toLowerCase();
}

const LOCAL_HOSTS = new Set(['', 'localhost', '127.0.0.1', '[::1]']);

/** The URI risks of one list of URIs under `key`. */
function uriRisks(base: Omit<LinkRisk, 'key' | 'value' | 'why'>, key: string, raw: unknown): LinkRisk[] {
  const uris = asList(raw);
  const out: LinkRisk[] = [];
  // `amqp://` alone is the local node: there is no other endpoint to list.
  if (uris.length === 1 && uriHost(uris[0] as string) !== '')
    out.push({ ...base, key, value: maskUri(uris[0] as string), why: WHY.oneUri });
  const plain = uris.filter((u) => /^amqp:\/\//i.test(u) && !LOCAL_HOSTS.has(uriHost(u)));
  if (plain.length > 0) out.push({ ...base, key, value: plain.map(maskUri).join(', '), why: WHY.plainAmqp });
  return out;
}

const settingsOf = (p: Parameter): Record<string, unknown> =>
  p.value !== null && typeof p.value === 'object' && !Array.isArray(p.value)
    ? (p.value as Record<string, unknown>)
    : {};

function ackRisk(base: Omit<LinkRisk, 'key' | 'value' | 'why'>, v: Record<string, unknown>): LinkRisk[] {
  const mode = v['ack-mode'];
  return typeof mode === 'string' && LOSSY_ACK.includes(mode)
    ? [{ ...base, key: 'ack-mode', value: mode, why: WHY.ackMode }]
    : [];
}

export function upstreamRisks(upstream: Parameter, exchangeFederation: boolean): LinkRisk[] {
  const v = settingsOf(upstream);
  const base = { kind: 'upstream' as const, vhost: upstream.vhost, name: upstream.name };
  const out = [...ackRisk(base, v)];
  if (exchangeFederation) {
    const type = v['queue-type'];
    if (type === undefined || type === 'classic')
      out.push({ ...base, key: 'queue-type', value: type ?? null, why: WHY.classicQueue });
    const cleanup = v['resource-cleanup-mode'];
    if (cleanup !== 'never')
      out.push({ ...base, key: 'resource-cleanup-mode', value: cleanup ?? null, why: WHY.cleanup });
    if (v.expires === undefined && v['message-ttl'] === undefined)
      out.push({ ...base, key: 'expires', value: null, why: WHY.unbounded });
    const hops = v['max-hops'];
    if (typeof hops === 'number' && hops > 1)
      out.push({ ...base, key: 'max-hops', value: hops, why: WHY.maxHops });
  }
  out.push(...uriRisks(base, 'uri', v.uri));
  return out;
}

export function shovelRisks(shovel: Parameter): LinkRisk[] {
  const v = settingsOf(shovel);
  const base = { kind: 'shovel' as const, vhost: shovel.vhost, name: shovel.name };
  return [
    ...ackRisk(base, v),
    ...uriRisks(base, 'src-uri', v['src-uri']),
    ...uriRisks(base, 'dest-uri', v['dest-uri']),
  ];
}

/** Every risk of the vhosts' upstreams and shovels; the exchange-federation ones where an exchange link uses the upstream. */
export function linkRisks(
  upstreams: readonly Parameter[],
  shovels: readonly Parameter[],
  expected: readonly ExpectedLink[],
): LinkRisk[] {
  const forExchanges = new Set(
    expected
      .filter((l) => l.kind === 'exchange' && l.upstream !== null)
      .map((l) => `${l.vhost}\u0000${l.upstream}`),
  );
  return [
    ...upstreams.flatMap((u) => upstreamRisks(u, forExchanges.has(`${u.vhost}\u0000${u.name}`))),
    ...shovels.flatMap(shovelRisks),
  ];
}
