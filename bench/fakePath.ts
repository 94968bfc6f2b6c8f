import { effectiveDefinition } from '../src/policy/effective.ts';
import { buildPolicySet, resolve } from '../src/policy/resolve.ts';
import type { FakeVhost } from './fakeManagement.ts';

/**
 * What `path NAME` reads of the double (bench/fakeManagement.ts), beside its listings: one queue's
 * detail, its bindings, each exchange's detail and bindings, the vhost's channels and counters,
 * the nodes. The vhost has `exchanges` exchanges (`svcN.in`, each bound to the queues of service
 * N, `svcN.top` bound to it, and `dlx.N`, where service N's policies dead-letter, bound to one of
 * its retry queues; each reports the policy the broker would, the catch-all) and `channels`
 * channels (the two columns `path` asks for), each body rendered once. A queue's
 * detail reports its policy, operator policy and effective definition, as the broker's does once
 * the queue's statistics are out (not the first seconds after a declare, which `which` answers
 * from the queue's record: a filtered listing, charged as the broker charges it).
 */
export function pathRoutes(
  v: Pick<FakeVhost, 'vhost' | 'queues' | 'policies' | 'operatorPolicies'>,
  exchanges: number,
  channels: number,
): (path: string) => Buffer | undefined {
  const { vhost, queues } = v;
  const enc = encodeURIComponent(vhost);
  const policy = (list: FakeVhost['policies'], name: string | null) =>
    name === null ? undefined : list.find((p) => p.name === name);
  const version = { major: 3, minor: 10, patch: 8 };
  const set = buildPolicySet(v.policies, [], version);
  const exchangePolicy = (name: string) => resolve(set, name, 'exchange').user.candidates[0]?.name ?? null;
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const byName = new Map(queues.map((q, i) => [q.name, { q, i }]));
  const service = (name: string) => /^svc(\d+)\./.exec(name)?.[1];
  const channelList = json(
    Array.from({ length: channels }, (_, i) => ({
      confirm: i % 2 === 0,
      ...(i % 3 === 0 ? { message_stats: { publish: 1000 + i } } : {}),
    })),
  );
  const rendered = new Map<string, Buffer>();
  const once = (key: string, render: () => Buffer) => {
    let body = rendered.get(key);
    if (!body) {
      body = render();
      rendered.set(key, body);
    }
    return body;
  };
  const exchangeDetail = (name: string) =>
    once(name, () =>
      json({
        name,
        vhost,
        type: 'direct',
        durable: true,
        arguments: {},
        policy: exchangePolicy(name),
        message_stats: { publish_in: 100, publish_out: 98 },
      }),
    );
  return (path) => {
    if (path === '/api/nodes') return json([{ name: 'rabbit@bench' }]);
    if (path === `/api/vhosts/${enc}`)
      return json({ name: vhost, message_stats: { drop_unroutable: 2, return_unroutable: 0 } });
    if (path === `/api/vhosts/${enc}/channels`) return channelList;
    // lint's durability listings: no consumers, no bindings beyond the default exchange's.
    if (path === `/api/consumers/${enc}` || path === `/api/bindings/${enc}`) return json([]);
    const m = /^\/api\/(queues|exchanges)\/[^/]+\/([^/]+)(\/bindings(?:\/(source|destination))?)?$/.exec(
      path,
    );
    if (!m) return undefined;
    const name = decodeURIComponent(m[2] as string);
    const s = service(name) ?? /^dlx\.(\d+)$/.exec(name)?.[1];
    if (m[1] === 'queues') {
      const found = byName.get(name);
      if (!found) return undefined;
      if (m[3])
        return json([
          {
            source: '',
            vhost,
            destination: name,
            destination_type: 'queue',
            routing_key: name,
            arguments: {},
          },
          ...(s !== undefined && Number(s) < exchanges / 2
            ? [
                {
                  source: `svc${s}.in`,
                  vhost,
                  destination: name,
                  destination_type: 'queue',
                  routing_key: name,
                  arguments: {},
                },
              ]
            : []),
        ]);
      const { q, i } = found;
      return json({
        name,
        vhost,
        type: q.type,
        durable: true,
        exclusive: false,
        auto_delete: false,
        arguments: q.arguments,
        policy: q.policy,
        operator_policy: q.operatorPolicy,
        effective_policy_definition: Object.fromEntries(
          Object.entries(
            effectiveDefinition(
              policy(v.policies, q.policy)?.definition,
              policy(v.operatorPolicies, q.operatorPolicy)?.definition,
              version,
            ),
          ).map(([k, e]) => [k, e.value]),
        ),
        messages: i % 50,
        messages_ready: i % 50,
        messages_unacknowledged: 0,
        messages_persistent: Math.floor((i % 50) / 2),
        message_bytes_ready: (i % 50) * 200,
        consumers: i % 3 === 0 ? 1 : 0,
        consumer_details: i % 3 === 0 ? [{ ack_required: i % 2 === 0, prefetch_count: 0 }] : [],
        idle_since: '2026-12-01 09:00:00',
        ...(q.type === 'quorum' ? { members: ['rabbit@bench'], online: ['rabbit@bench'] } : {}),
      });
    }
    if (s === undefined || Number(s) >= exchanges / 2 || !/\.(in|top)$|^dlx\./.test(name)) return undefined;
    if (!m[3]) return exchangeDetail(name);
    if (m[4] === 'source' && name.startsWith('dlx.'))
      return once(path, () =>
        json([
          {
            source: name,
            vhost,
            destination: queues.find((q) => q.name.startsWith(`svc${s}.retry.`))?.name ?? `svc${s}.retry`,
            destination_type: 'queue',
            routing_key: '#',
            arguments: {},
          },
        ]),
      );
    if (m[4] === 'destination' && name.endsWith('.in'))
      return json([
        {
          source: `svc${s}.top`,
          vhost,
          destination: name,
          destination_type: 'exchange',
          routing_key: '',
          arguments: {},
        },
      ]);
    return json([]);
  };
}
